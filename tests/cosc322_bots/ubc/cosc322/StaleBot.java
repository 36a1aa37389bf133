package ubc.cosc322;

import java.util.Map;

import ygraph.ai.smartfox.games.GameMessage;

/**
 * A course bot that plays one game per process, as many real ones do: it keeps the board of its first game and
 * never resets it, ignoring every later board message. Its second game in the same process starts from the stale
 * board, so it soon sends a move that is illegal on the real board (and loses it, in a tournament room). Run
 * fresh for each game (plyhall cosc322 entrant), it plays every game well.
 */
public class StaleBot extends COSC322Test {

    private boolean hasBoard;

    public StaleBot(String userName, String passwd) {
        super(userName, passwd);
    }

    public static void main(String[] args) {
        new StaleBot(args[0], args[1]).Go();
    }

    @Override
    public boolean handleGameMessage(String messageType, Map<String, Object> msgDetails) {
        if (GameMessage.GAME_STATE_BOARD.equals(messageType)) {
            if (hasBoard) {
                System.out.println("stale: keeping the board of my first game");
                return true;
            }
            hasBoard = true;
        }
        return super.handleGameMessage(messageType, msgDetails);
    }
}
