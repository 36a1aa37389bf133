package plyhall.cosc322;

import java.util.ArrayList;
import java.util.List;

import java.awt.BorderLayout;

import javax.swing.JFrame;
import javax.swing.JPanel;
import javax.swing.SwingUtilities;
import javax.swing.WindowConstants;

import sfs2x.client.entities.Room;

/**
 * A small Swing window showing the board of a {@code BaseGameGUI}: only ever created when Java has a
 * display. Closing it closes only the window; the bot plays on.
 */
public final class BoardWindow {

    private final JFrame frame;
    private final BoardPanel panel;
    private final String title;

    private BoardWindow(String title, JPanel controls) {
        this.title = title;
        this.panel = new BoardPanel();
        this.frame = new JFrame(title);
        frame.setDefaultCloseOperation(WindowConstants.DISPOSE_ON_CLOSE);
        frame.add(panel, BorderLayout.CENTER);
        if (controls != null) {
            frame.add(controls, BorderLayout.EAST);
        }
        frame.pack();
        frame.setLocationByPlatform(true);
        frame.setVisible(true);
    }

    /**
     * Opens a window, with {@code controls} (the GUI's control panel, or null) beside the board; throws
     * {@code HeadlessException} when there is no display: the caller falls back.
     */
    public static BoardWindow open(String title, JPanel controls) {
        BoardWindow[] made = new BoardWindow[1];
        RuntimeException[] failed = new RuntimeException[1];
        Runnable create = () -> {
            try {
                made[0] = new BoardWindow(title, controls);
            } catch (RuntimeException e) {
                failed[0] = e;
            }
        };
        if (SwingUtilities.isEventDispatchThread()) {
            create.run();
        } else {
            try {
                SwingUtilities.invokeAndWait(create);
            } catch (Exception e) {
                throw new IllegalStateException("cannot open a window: " + e, e);
            }
        }
        if (failed[0] != null) {
            throw failed[0];
        }
        return made[0];
    }

    /** Shows {@code board} (the course's 121 entries) and the room names in the title. */
    public void show(int[] board, List<Room> rooms) {
        List<String> names = new ArrayList<>();
        for (Room room : rooms) {
            names.add(room.getName());
        }
        String text = names.isEmpty() ? title : title + "  -  rooms: " + String.join(", ", names);
        SwingUtilities.invokeLater(() -> {
            frame.setTitle(text);
            panel.setBoard(board);
            panel.repaint();
        });
    }
}
