package ubc.cosc322;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import sfs2x.client.entities.Room;
import ygraph.ai.smartfox.games.BaseGameGUI;
import ygraph.ai.smartfox.games.GameClient;
import ygraph.ai.smartfox.games.GameMessage;
import ygraph.ai.smartfox.games.GamePlayer;
import ygraph.ai.smartfox.games.amazons.AmazonsGameMessage;
import ygraph.ai.smartfox.games.amazons.HumanPlayer;

/**
 * A test bot in the style of the COSC 322 course template: it never calls joinRoom (the library finds the
 * game), reads moves with string keys and Queen_POS_NEXT, keeps its own 121-entry board, plays random legal
 * moves from its own move generator, sends them with the map form of sendMoveMessage from inside
 * handleGameMessage, and prints its board after every move ("board game=G move=N: [...]") for the test.
 * Anything unexpected is printed as a line starting with "ERROR".
 */
public class COSC322Test extends GamePlayer {

    private GameClient gameClient = null;
    private BaseGameGUI gamegui = null;

    private String userName = null;
    private String passwd = null;

    private ArrayList<Integer> board = null;
    private int myColour = 0;
    private int games = 0;
    private int moves = 0;
    private boolean started = false;
    private final Random random = new Random();

    public static void main(String[] args) {
        COSC322Test player = new COSC322Test(args[0], args[1]);

        if (player.getGameGUI() == null) {
            player.Go();
        } else {
            BaseGameGUI.sys_setup();
            java.awt.EventQueue.invokeLater(new Runnable() {
                public void run() {
                    player.Go();
                }
            });
        }
    }

    public COSC322Test(String userName, String passwd) {
        this.userName = userName;
        this.passwd = passwd;
        this.gamegui = new BaseGameGUI(this);
    }

    @Override
    public void onLogin() {
        userName = gameClient.getUserName();
        if (gamegui != null) {
            gamegui.setRoomInformation(gameClient.getRoomList());
        }
        List<Room> rooms = gameClient.getRoomList();
        System.out.println("rooms " + rooms.size() + ": " + rooms);
        if (rooms.size() < 2) {
            System.out.println("ERROR fewer than two rooms");
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public boolean handleGameMessage(String messageType, Map<String, Object> msgDetails) {
        switch (messageType) {
            case GameMessage.GAME_STATE_BOARD:
                board = new ArrayList<>((ArrayList<Integer>) msgDetails.get("game-state"));
                gamegui.setGameState(board);
                games++;
                moves = 0;
                started = false;
                checkStartBoard();
                printBoard();
                break;
            case GameMessage.GAME_ACTION_START:
                if (board == null) {
                    System.out.println("ERROR start before the board");
                }
                started = true;
                String black = (String) msgDetails.get("player-black");
                String white = (String) msgDetails.get("player-white");
                System.out.println("start black=" + black + " white=" + white + " room=" + msgDetails.get("room.name"));
                if (userName.equals(black)) {
                    myColour = 1;
                    myMove();
                } else if (userName.equals(white)) {
                    myColour = 2;
                } else {
                    System.out.println("ERROR my name " + userName + " is neither player");
                }
                break;
            case GameMessage.GAME_ACTION_MOVE:
                if (!started) {
                    System.out.println("ERROR move before start");
                }
                ArrayList<Integer> from = (ArrayList<Integer>) msgDetails.get("queen-position-current");
                ArrayList<Integer> to = (ArrayList<Integer>) msgDetails.get(AmazonsGameMessage.Queen_POS_NEXT);
                ArrayList<Integer> arrow = (ArrayList<Integer>) msgDetails.get("arrow-position");
                if (get(from.get(0), from.get(1)) != 3 - myColour) {
                    System.out.println("ERROR the move " + from + " is not the opponent's (an echo?)");
                }
                if (!legal(3 - myColour, from, to, arrow)) {
                    System.out.println("ERROR illegal opponent move " + from + " " + to + " " + arrow);
                }
                apply(from, to, arrow);
                gamegui.updateGameState(msgDetails);
                printBoard();
                myMove();
                break;
            default:
                System.out.println("ERROR unexpected message " + messageType);
        }
        return true;
    }

    /** Picks a random legal move, applies and prints it, then sends it (map form). */
    private void myMove() {
        List<int[]> all = legalMoves(myColour);
        if (all.isEmpty()) {
            System.out.println("no legal move: I lose");
            return;
        }
        int[] m = all.get(random.nextInt(all.size()));
        ArrayList<Integer> from = new ArrayList<>(Arrays.asList(m[0], m[1]));
        ArrayList<Integer> to = new ArrayList<>(Arrays.asList(m[2], m[3]));
        ArrayList<Integer> arrow = new ArrayList<>(Arrays.asList(m[4], m[5]));
        apply(from, to, arrow);
        printBoard();
        Map<String, Object> move = new HashMap<>();
        move.put("queen-position-current", from);
        move.put(AmazonsGameMessage.Queen_POS_NEXT, to);
        move.put("arrow-position", arrow);
        gamegui.updateGameState(move);
        gameClient.sendMoveMessage(move);
    }

    private void checkStartBoard() {
        if (board.size() != 121) {
            System.out.println("ERROR the board has " + board.size() + " entries");
            return;
        }
        int[][] black = {{7, 1}, {10, 4}, {10, 7}, {7, 10}};
        int[][] white = {{4, 1}, {1, 4}, {1, 7}, {4, 10}};
        int queens = 0;
        int arrows = 0;
        for (int v : board) {
            queens += v == 1 || v == 2 ? 1 : 0;
            arrows += v == 3 ? 1 : 0;
        }
        if (arrows > 0) { // seated in a game under way: only the queens can be counted
            if (queens != 8) {
                System.out.println("ERROR " + queens + " queens");
            }
            return;
        }
        for (int[] sq : black) {
            if (get(sq[0], sq[1]) != 1) {
                System.out.println("ERROR no black queen on " + Arrays.toString(sq));
            }
        }
        for (int[] sq : white) {
            if (get(sq[0], sq[1]) != 2) {
                System.out.println("ERROR no white queen on " + Arrays.toString(sq));
            }
        }
        if (queens != 8) {
            System.out.println("ERROR " + queens + " queens");
        }
    }

    private void printBoard() {
        System.out.println("board game=" + games + " move=" + moves + ": " + board);
    }

    private int get(int row, int col) {
        return board.get(row * 11 + col);
    }

    private void set(int row, int col, int value) {
        board.set(row * 11 + col, value);
    }

    private void apply(List<Integer> from, List<Integer> to, List<Integer> arrow) {
        int queen = get(from.get(0), from.get(1));
        set(from.get(0), from.get(1), 0);
        set(to.get(0), to.get(1), queen);
        set(arrow.get(0), arrow.get(1), 3);
        moves++;
    }

    private static final int[][] DIRECTIONS = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};

    /** Every legal move of the colour: {from row, from col, to row, to col, arrow row, arrow col}. */
    private List<int[]> legalMoves(int colour) {
        List<int[]> all = new ArrayList<>();
        for (int r = 1; r <= 10; r++) {
            for (int c = 1; c <= 10; c++) {
                if (get(r, c) != colour) {
                    continue;
                }
                set(r, c, 0);
                for (int[] to : reachable(r, c)) {
                    for (int[] arrow : reachable(to[0], to[1])) {
                        all.add(new int[] {r, c, to[0], to[1], arrow[0], arrow[1]});
                    }
                }
                set(r, c, colour);
            }
        }
        return all;
    }

    private List<int[]> reachable(int row, int col) {
        List<int[]> squares = new ArrayList<>();
        for (int[] d : DIRECTIONS) {
            int r = row + d[0];
            int c = col + d[1];
            while (r >= 1 && r <= 10 && c >= 1 && c <= 10 && get(r, c) == 0) {
                squares.add(new int[] {r, c});
                r += d[0];
                c += d[1];
            }
        }
        return squares;
    }

    private boolean legal(int colour, List<Integer> from, List<Integer> to, List<Integer> arrow) {
        for (int[] m : legalMoves(colour)) {
            if (m[0] == from.get(0) && m[1] == from.get(1) && m[2] == to.get(0) && m[3] == to.get(1)
                    && m[4] == arrow.get(0) && m[5] == arrow.get(1)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String userName() {
        return userName;
    }

    @Override
    public GameClient getGameClient() {
        return this.gameClient;
    }

    @Override
    public BaseGameGUI getGameGUI() {
        return this.gamegui;
    }

    @Override
    public void connect() {
        gameClient = new GameClient(userName, passwd, this);
    }
}
