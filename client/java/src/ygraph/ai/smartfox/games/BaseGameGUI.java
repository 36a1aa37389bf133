package ygraph.ai.smartfox.games;

import java.awt.GraphicsEnvironment;
import java.awt.event.MouseAdapter;
import java.awt.event.MouseEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.swing.BoxLayout;
import javax.swing.DefaultListModel;
import javax.swing.JList;
import javax.swing.JPanel;
import javax.swing.SwingUtilities;

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
 * call is a quiet update of the kept board. Unlike the course's class it is no {@code JFrame} (a frame cannot
 * even be constructed on a headless machine); its window, when there is one, is a frame of its own, and its
 * control panel ({@link #getControlPanel()}) is a plain {@code JPanel}, which Swing lets a program make and fill
 * headless too.
 */
public class BaseGameGUI {

    private final GamePlayer player;
    private final String mode;
    private final int[] board = new int[BoardText.CELLS];
    private List<Room> rooms = new ArrayList<>();
    private BoardWindow window;
    private JPanel controlPanel;
    /** The room list of the control panel, once {@link #configureControlPanel} has made one. */
    protected JList<String> roomSelection;
    private final DefaultListModel<String> roomNames = new DefaultListModel<>();

    /** A display attached to no player (as the course's no-argument constructor): it shows what it is given. */
    public BaseGameGUI() {
        this(null);
    }

    /** The display of {@code player} (constructed by every course bot, display or not). */
    public BaseGameGUI(GamePlayer player) {
        this.player = player;
        this.mode = Settings.lookup("gui") == null ? "auto" : Settings.lookup("gui").toLowerCase();
    }

    /**
     * The control panel: a {@code JPanel} beside the board in the window (none headless). As in the course, bots
     * may add their own components to it; {@link #configureControlPanel} puts the room list in it.
     */
    public synchronized JPanel getControlPanel() {
        if (controlPanel == null) {
            controlPanel = new JPanel();
            configureControlPanel(controlPanel);
        }
        return controlPanel;
    }

    /**
     * Fills {@code cPanel} with the room list ({@code roomSelection}): one click on a room leaves the current room
     * and joins that one, as in the course's GUI (PLYHALL_ROOM, when set, still decides). Overridable.
     */
    public void configureControlPanel(JPanel cPanel) {
        roomSelection = new JList<>(roomNames);
        roomSelection.setToolTipText("Select a game room");
        roomSelection.addMouseListener(new MouseAdapter() {
            @Override
            public void mouseClicked(MouseEvent e) {
                String room = roomSelection.getSelectedValue();
                if (e.getClickCount() == 1 && room != null && player != null && player.getGameClient() != null) {
                    player.getGameClient().leaveCurrentRoom();
                    player.getGameClient().joinRoom(room);
                }
            }
        });
        cPanel.setLayout(new BoxLayout(cPanel, BoxLayout.Y_AXIS));
        cPanel.add(roomSelection);
    }

    /** Set-up before the display is used (the course calls it before {@code Go()}); nothing is needed here. */
    public static void sys_setup() {
        // nothing to set up: the window (if any) uses Swing's defaults
    }

    /** Shows the room list (in the window's title bar, or printed in console mode). */
    public void setRoomInformation(List<Room> rooms) {
        this.rooms = rooms == null ? new ArrayList<>() : new ArrayList<>(rooms);
        List<String> names = new ArrayList<>();
        for (Room room : this.rooms) {
            names.add(room.getName());
        }
        Runnable update = () -> {
            roomNames.clear();
            names.forEach(roomNames::addElement);
        };
        if (GraphicsEnvironment.isHeadless() || SwingUtilities.isEventDispatchThread()) {
            update.run();
        } else {
            SwingUtilities.invokeLater(update);
        }
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
            window = BoardWindow.open(title, getControlPanel());
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
