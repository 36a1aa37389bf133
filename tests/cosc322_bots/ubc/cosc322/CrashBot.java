package ubc.cosc322;

import java.util.Map;

import ygraph.ai.smartfox.games.GameMessage;

/**
 * A course bot whose process dies (System.exit(1)) as soon as it is its turn: the start message when it moves first,
 * the opponent's move otherwise, as a bot that crashes on a position it cannot handle.
 */
public class CrashBot extends COSC322Test {

    public CrashBot(String userName, String passwd) {
        super(userName, passwd);
    }

    public static void main(String[] args) {
        new CrashBot(args[0], args[1]).Go();
    }

    @Override
    public boolean handleGameMessage(String messageType, Map<String, Object> msgDetails) {
        boolean black = GameMessage.GAME_ACTION_START.equals(messageType)
                && userName().equals(msgDetails.get("player-black"));
        if (black || GameMessage.GAME_ACTION_MOVE.equals(messageType)) {
            System.out.println("crashing at my turn");
            System.out.flush();
            System.exit(1);
        }
        return super.handleGameMessage(messageType, msgDetails);
    }
}
