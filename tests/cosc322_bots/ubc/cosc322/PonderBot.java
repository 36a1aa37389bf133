package ubc.cosc322;

import java.util.Map;

import ygraph.ai.smartfox.games.GameMessage;

/**
 * A course bot that thinks for 4.5 s over each of its opponent's first three moves, in handleGameMessage, on the
 * library's events thread: on its turn, when the server has nothing to say, for longer than a short
 * PLYHALL_SILENCE. Its connection is alive all the while.
 */
public class PonderBot extends COSC322Test {
    private int pondered;

    public PonderBot(String userName, String passwd) {
        super(userName, passwd);
    }

    public static void main(String[] args) {
        new PonderBot(args[0], args[1]).Go();
    }

    @Override
    public boolean handleGameMessage(String messageType, Map<String, Object> msgDetails) {
        if (GameMessage.GAME_ACTION_MOVE.equals(messageType) && pondered++ < 3) {
            try {
                Thread.sleep(4500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return super.handleGameMessage(messageType, msgDetails);
    }
}
