package ygraph.ai.smartfox.games;

import java.util.TimerTask;

/**
 * A {@code java.util.TimerTask} that tells a player it has run over its time, as in the COSC 322 course client:
 * each run counts one more time-out and calls the player's {@code handleMessage("Timeout Count = N !!!")}.
 *
 * <p>The course client started one for each move; on Plyhall the server keeps each player's clock (a move that
 * comes too late loses the game), so the library starts none. A bot may still schedule one itself, with a
 * {@code java.util.Timer}, to be warned when it thinks too long.
 */
public class GameTimer extends TimerTask {

    /** The course's time for a move, in milliseconds. */
    public static final int TIMEOUT = 30000;

    private final GamePlayer delegate;
    private final GameClient gameClient;
    private int violationCount;

    /** A timer for {@code delegate} (and its client), which has run over its time {@code numOfTimeOut} times. */
    public GameTimer(GamePlayer delegate, GameClient gameClient, int numOfTimeOut) {
        this.delegate = delegate;
        this.gameClient = gameClient;
        this.violationCount = numOfTimeOut;
    }

    /** One more time-out: the player's {@code handleMessage} hears of it (an exception there is printed). */
    @Override
    public void run() {
        int count;
        synchronized (this) {
            count = ++violationCount;
        }
        if (delegate == null) {
            return;
        }
        try {
            delegate.handleMessage("Timeout Count = " + count + " !!!");
        } catch (RuntimeException e) {
            e.printStackTrace();
        }
    }

    /** How many time-outs this timer has counted. */
    public synchronized int getViolationCount() {
        return violationCount;
    }

    /** The client given to the constructor (may be null). */
    public GameClient getGameClient() {
        return gameClient;
    }
}
