package ubc.cosc322;

import java.util.Map;

import ygraph.ai.smartfox.games.GameMessage;

/**
 * A course bot that hangs in its own search: the first time the opponent's move reaches it, it never returns from
 * handleGameMessage (it ignores interrupts, as a busy search loop does). Its clock runs out and it loses on time;
 * the library can neither end that game in the bot nor go on to another one.
 */
public class FreezeBot extends COSC322Test {

    public FreezeBot(String userName, String passwd) {
        super(userName, passwd);
    }

    public static void main(String[] args) {
        new FreezeBot(args[0], args[1]).Go();
    }

    @Override
    public boolean handleGameMessage(String messageType, Map<String, Object> msgDetails) {
        if (GameMessage.GAME_ACTION_MOVE.equals(messageType)) {
            System.out.println("freezing in handleGameMessage");
            System.out.flush();
            while (true) {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    // a search loop that never looks at its interrupt flag
                }
            }
        }
        return super.handleGameMessage(messageType, msgDetails);
    }
}
