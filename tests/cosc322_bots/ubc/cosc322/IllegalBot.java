package ubc.cosc322;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Map;

import ygraph.ai.smartfox.games.BaseGameGUI;
import ygraph.ai.smartfox.games.GameClient;
import ygraph.ai.smartfox.games.GameMessage;
import ygraph.ai.smartfox.games.GamePlayer;

/**
 * A test bot that gets its moves wrong: as black it first sends a square off the board (the library refuses
 * it before sending), then a queen move that no queen can make (the server refuses it, with the reason).
 */
public class IllegalBot extends GamePlayer {

    private GameClient gameClient;
    private final BaseGameGUI gamegui;
    private String userName;
    private final String passwd;

    public static void main(String[] args) {
        new IllegalBot(args[0], args[1]).Go();
    }

    public IllegalBot(String userName, String passwd) {
        this.userName = userName;
        this.passwd = passwd;
        this.gamegui = new BaseGameGUI(this);
    }

    @Override
    public void onLogin() {
        userName = gameClient.getUserName();
    }

    @Override
    public boolean handleGameMessage(String messageType, Map<String, Object> msgDetails) {
        System.out.println(messageType + " " + msgDetails.keySet());
        if (messageType.equals(GameMessage.GAME_ACTION_START) && userName.equals(msgDetails.get("player-black"))) {
            gameClient.sendMoveMessage(square(0, 5), square(7, 5), square(3, 3));
            gameClient.sendMoveMessage(square(7, 1), square(2, 6), square(3, 3));
        }
        return true;
    }

    private static ArrayList<Integer> square(int row, int col) {
        return new ArrayList<>(Arrays.asList(row, col));
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
        return gamegui;
    }

    @Override
    public void connect() {
        gameClient = new GameClient(userName, passwd, this);
    }
}
