package ygraph.ai.smartfox.games;

import java.awt.GraphicsEnvironment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import plyhall.cosc322.BoardText;
import plyhall.cosc322.BoardWindow;
import plyhall.cosc322.Log;
import plyhall.cosc322.Settings;
import sfs2x.client.entities.Room;

/**
 * The board display of a course bot. It keeps the board it is given ({@link #setGameState}) and applies the
 * moves it is given ({@link #updateGameState}); how it shows them depends on PLYHALL_GUI:
 *
 * <ul>
 * <li>{@code auto} (the default): a small window when Java has a display, else nothing;</li>
 * <li>{@code window}: a window (nothing when Java runs headless);</li>
 * <li>{@code console}: the board printed on standard output after every change;</li>
 * <li>{@code off}: nothing.</li>
 * </ul>
 *
 * It never throws {@code HeadlessException}: with no display (or {@code -Djava.awt.headless=true}) every
 * call is a quiet update of the kept board.
 */
public class BaseGameGUI {

    private final GamePlayer player;
    private final String mode;
    private final int[] board = new int[BoardText.CELLS];
    private List<Room> rooms = new ArrayList<>();
    private BoardWindow window;

    /** The display of {@code player} (constructed by every course bot, display or not). */
    public BaseGameGUI(GamePlayer player) {
        this.player = player;
        this.mode = Settings.lookup("gui") == null ? "auto" : Settings.lookup("gui").toLowerCase();
    }

    /** Set-up before the display is used (the course calls it before {@code Go()}); nothing is needed here. */
    public static void sys_setup() {
        // nothing to set up: the window (if any) uses Swing's defaults
    }

    /** Shows the room list (in the window's title bar, or printed in console mode). */
    public void setRoomInformation(List<Room> rooms) {
        this.rooms = rooms == null ? new ArrayList<>() : new ArrayList<>(rooms);
        if (mode.equals("console")) {
            System.out.println("rooms: " + this.rooms);
        }
        if (window != null) {
            window.show(snapshot(), this.rooms);
        }
    }

    /** Shows a whole board: the course's 121-entry list (index {@code row * 11 + col}). */
    public void setGameState(ArrayList<Integer> gameState) {
        if (gameState == null) {
            return;
        }
        synchronized (board) {
            for (int i = 0; i < board.length && i < gameState.size(); i++) {
                Integer value = gameState.get(i);
                board[i] = value == null ? 0 : value;
            }
        }
        refresh();
    }

    /**
     * Applies a move given as message details ({@code queen-position-current}, {@code queen-position-next},
     * {@code arrow-position}).
     */
    @SuppressWarnings("unchecked")
    public void updateGameState(Map<String, Object> msgDetails) {
        if (msgDetails == null) {
            return;
        }
        try {
            updateGameState((ArrayList<Integer>) msgDetails.get("queen-position-current"),
                    (ArrayList<Integer>) msgDetails.get("queen-position-next"),
                    (ArrayList<Integer>) msgDetails.get("arrow-position"));
        } catch (ClassCastException e) {
            Log.warn(null, "BaseGameGUI.updateGameState: the squares must be ArrayList<Integer> [row, col]");
        }
    }

    /** Applies a move: the queen on {@code queenCurrent} goes to {@code queenNew}; an arrow lands on {@code arrow}. */
    public void updateGameState(ArrayList<Integer> queenCurrent, ArrayList<Integer> queenNew,
                                ArrayList<Integer> arrow) {
        synchronized (board) {
            if (!BoardText.apply(board, queenCurrent, queenNew, arrow)) {
                Log.warn(null, "BaseGameGUI.updateGameState: not a move on the board: " + queenCurrent + " -> "
                        + queenNew + ", arrow " + arrow);
                return;
            }
        }
        refresh();
    }

    /** Opens the window when there is a display and the settings want one (called by {@code GamePlayer.Go()}). */
    void display() {
        if (window != null || mode.equals("off") || mode.equals("console") || GraphicsEnvironment.isHeadless()) {
            return;
        }
        try {
            String title = player == null || player.userName() == null ? "COSC 322 Amazons" : player.userName();
            window = BoardWindow.open(title);
        } catch (RuntimeException | Error e) { // HeadlessException, AWTError: no usable display after all
            Log.info(null, "no board window (" + e + ")");
            window = null;
        }
        if (window != null) {
            window.show(snapshot(), rooms);
        }
    }

    private int[] snapshot() {
        synchronized (board) {
            return board.clone();
        }
    }

    private void refresh() {
        int[] copy = snapshot();
        if (mode.equals("console")) {
            System.out.println(BoardText.render(copy));
        }
        if (window != null) {
            window.show(copy, rooms);
        }
    }
}
