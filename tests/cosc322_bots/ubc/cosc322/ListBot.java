package ubc.cosc322;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

import sfs2x.client.entities.Room;
import ygraph.ai.smartfox.games.BaseGameGUI;
import ygraph.ai.smartfox.games.GameClient;
import ygraph.ai.smartfox.games.GameMessage;
import ygraph.ai.smartfox.games.GamePlayer;
import ygraph.ai.smartfox.games.amazons.AmazonsGameMessage;

/**
 * A test bot in another course style: it joins the first room of the room list in onLogin, reads moves with
 * the AmazonsGameMessage constants (QUEEN_POS_NEXT), wishes its opponent good luck (a text message), keeps its
 * own 121-entry board, thinks on a thread of its own and sends its random legal move with the three-list
 * sendMoveMessage. It prints its board after every
 * move ("board game=G move=N: [...]") for the test, and anything unexpected as a line starting with "ERROR".
 */
public class ListBot extends GamePlayer {

    private GameClient gameClient;
    private BaseGameGUI gamegui;
    private String userName;
    private String passwd;

    private final int[] board = new int[121];
    private int me;
    private int games;
    private int moves;
    private final Random random = new Random();

    public static void main(String[] args) {
        new ListBot(args[0], args[1]).Go();
    }

    public ListBot(String userName, String passwd) {
        this.userName = userName;
        this.passwd = passwd;
        this.gamegui = new BaseGameGUI(this);
    }

    @Override
    public void onLogin() {
        userName = gameClient.getUserName();
        List<Room> rooms = gameClient.getRoomList();
        if (gamegui != null) {
            gamegui.setRoomInformation(rooms);
        }
        System.out.println("joining " + rooms.get(0).getName() + " (of " + rooms.size() + " rooms)");
        gameClient.joinRoom(rooms.get(0).getName());
    }

    @Override
    @SuppressWarnings("unchecked")
    public synchronized boolean handleGameMessage(String messageType, Map<String, Object> msgDetails) {
        if (messageType.equals(GameMessage.GAME_STATE_BOARD)) {
            ArrayList<Integer> state = (ArrayList<Integer>) msgDetails.get(AmazonsGameMessage.GAME_STATE);
            if (state.size() != 121) {
                System.out.println("ERROR the board has " + state.size() + " entries");
            }
            for (int i = 0; i < 121; i++) {
                board[i] = state.get(i);
            }
            getGameGUI().setGameState(state);
            games++;
            moves = 0;
            me = 0;
            printBoard();
        } else if (messageType.equals(GameMessage.GAME_ACTION_START)) {
            String black = (String) msgDetails.get(AmazonsGameMessage.PLAYER_BLACK);
            String white = (String) msgDetails.get(AmazonsGameMessage.PLAYER_WHITE);
            System.out.println("start black=" + black + " white=" + white + " room=" + msgDetails.get("room.name"));
            gameClient.sendTextMessage("good luck from " + userName);
            me = gameClient.getUserName().equals(black) ? 1 : 2;
            if (!gameClient.getUserName().equals(me == 1 ? black : white)) {
                System.out.println("ERROR my name is neither player");
            }
            if (me == 1) {
                think();
            }
        } else if (messageType.equals(GameMessage.GAME_ACTION_MOVE)) {
            ArrayList<Integer> from = (ArrayList<Integer>) msgDetails.get(AmazonsGameMessage.QUEEN_POS_CURR);
            ArrayList<Integer> to = (ArrayList<Integer>) msgDetails.get(AmazonsGameMessage.QUEEN_POS_NEXT);
            ArrayList<Integer> arrow = (ArrayList<Integer>) msgDetails.get(AmazonsGameMessage.ARROW_POS);
            if (me == 0) {
                System.out.println("ERROR a move before the start");
            }
            int[] move = {from.get(0), from.get(1), to.get(0), to.get(1), arrow.get(0), arrow.get(1)};
            if (board[from.get(0) * 11 + from.get(1)] != 3 - me) {
                System.out.println("ERROR the move " + from + " is not the opponent's (an echo?)");
            }
            if (!isLegal(3 - me, move)) {
                System.out.println("ERROR illegal opponent move " + Arrays.toString(move));
            }
            play(move);
            getGameGUI().updateGameState(from, to, arrow);
            think();
        } else {
            System.out.println("ERROR unexpected message " + messageType);
        }
        return true;
    }

    /** Thinks on a thread of its own, as bots with a search do. */
    private void think() {
        final int game = games;
        new Thread(() -> {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                return;
            }
            move(game);
        }, "search").start();
    }

    private synchronized void move(int game) {
        if (game != games) {
            return;
        }
        List<int[]> all = moves(me);
        if (all.isEmpty()) {
            System.out.println("no legal move: I lose");
            return;
        }
        int[] m = all.get(random.nextInt(all.size()));
        play(m);
        ArrayList<Integer> from = new ArrayList<>(Arrays.asList(m[0], m[1]));
        ArrayList<Integer> to = new ArrayList<>(Arrays.asList(m[2], m[3]));
        ArrayList<Integer> arrow = new ArrayList<>(Arrays.asList(m[4], m[5]));
        getGameGUI().updateGameState(from, to, arrow);
        gameClient.sendMoveMessage(from, to, arrow);
    }

    private void play(int[] m) {
        board[m[2] * 11 + m[3]] = board[m[0] * 11 + m[1]];
        board[m[0] * 11 + m[1]] = 0;
        board[m[4] * 11 + m[5]] = 3;
        moves++;
        printBoard();
    }

    private void printBoard() {
        StringBuilder list = new StringBuilder("[");
        for (int i = 0; i < 121; i++) {
            list.append(i == 0 ? "" : ", ").append(board[i]);
        }
        System.out.println("board game=" + games + " move=" + moves + ": " + list + "]");
    }

    private static final int[] STEPS = {1, -1, 11, -11, 12, -12, 10, -10};

    private boolean free(int index) {
        int r = index / 11;
        int c = index % 11;
        return r >= 1 && r <= 10 && c >= 1 && c <= 10 && board[index] == 0;
    }

    private List<int[]> moves(int colour) {
        List<int[]> all = new ArrayList<>();
        for (int q = 0; q < 121; q++) {
            if (board[q] != colour || q / 11 == 0 || q % 11 == 0) {
                continue;
            }
            board[q] = 0;
            for (int step : STEPS) {
                for (int t = q + step; t >= 0 && t < 121 && free(t) && !wraps(t - step, t); t += step) {
                    for (int step2 : STEPS) {
                        for (int a = t + step2; a >= 0 && a < 121 && free(a) && !wraps(a - step2, a); a += step2) {
                            all.add(new int[] {q / 11, q % 11, t / 11, t % 11, a / 11, a % 11});
                        }
                    }
                }
            }
            board[q] = colour;
        }
        return all;
    }

    /** True when a step from one index to the next leaves the board sideways (column 10 to the next row). */
    private static boolean wraps(int from, int to) {
        return Math.abs(from % 11 - to % 11) > 1;
    }

    private boolean isLegal(int colour, int[] move) {
        for (int[] m : moves(colour)) {
            if (Arrays.equals(m, move)) {
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
