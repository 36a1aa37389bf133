package ygraph.ai.smartfox.games;

import java.util.ArrayList;
import java.util.Map;

/**
 * A player that only watches: it joins the room named by PLYHALL_ROOM as a spectator and prints the board
 * after every move. Run it with
 * {@code PLYHALL_ROOM="Okanagan Lake" java -cp plyhall-cosc322.jar ygraph.ai.smartfox.games.Spectator NAME}.
 */
public class Spectator extends GamePlayer {

    private final String userName;
    private final String passwd;
    private final BaseGameGUI gui;
    private final int[] board = plyhall.cosc322.BoardText.start();
    private GameClient gameClient;

    /** A spectator with a name of its own. */
    public Spectator() {
        this("spectator-" + Long.toString(System.currentTimeMillis() % 100000), null);
    }

    /** A spectator logging in as {@code userName} with {@code passwd} (may be null). */
    public Spectator(String userName, String passwd) {
        this.userName = userName;
        this.passwd = passwd;
        this.gui = new BaseGameGUI(this);
    }

    /** Watches PLYHALL_ROOM: {@code java ... Spectator [NAME [PASSWORD]]}. */
    public static void main(String[] args) {
        Spectator spectator = args.length > 0
                ? new Spectator(args[0], args.length > 1 ? args[1] : null) : new Spectator();
        spectator.Go();
    }

    @Override
    public void onLogin() {
        gui.setRoomInformation(gameClient.getRoomList());
    }

    @Override
    @SuppressWarnings("unchecked")
    public boolean handleGameMessage(String messageType, Map<String, Object> msgDetails) {
        if (GameMessage.GAME_STATE_BOARD.equals(messageType)) {
            ArrayList<Integer> state = (ArrayList<Integer>) msgDetails.get("game-state");
            for (int i = 0; i < board.length; i++) {
                board[i] = state.get(i);
            }
            gui.setGameState(state);
        } else if (GameMessage.GAME_ACTION_START.equals(messageType)) {
            System.out.println(msgDetails.get("room.name") + ": " + msgDetails.get("player-black") + " (black) against "
                    + msgDetails.get("player-white") + " (white)");
        } else if (GameMessage.GAME_ACTION_MOVE.equals(messageType)) {
            ArrayList<Integer> from = (ArrayList<Integer>) msgDetails.get("queen-position-current");
            ArrayList<Integer> to = (ArrayList<Integer>) msgDetails.get("queen-position-next");
            ArrayList<Integer> arrow = (ArrayList<Integer>) msgDetails.get("arrow-position");
            plyhall.cosc322.BoardText.apply(board, from, to, arrow);
            gui.updateGameState(from, to, arrow);
            System.out.println(from + " -> " + to + ", arrow " + arrow);
        } else {
            return false;
        }
        System.out.println(plyhall.cosc322.BoardText.render(board));
        return true;
    }

    @Override
    public String userName() {
        return userName;
    }

    @Override
    public GameClient getGameClient() {
        return gameClient;
    }

    @Override
    public BaseGameGUI getGameGUI() {
        return gui;
    }

    @Override
    public void connect() {
        gameClient = new GameClient(userName, passwd, this, true);
    }
}
