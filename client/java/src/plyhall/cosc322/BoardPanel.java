package plyhall.cosc322;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Dimension;
import java.awt.Graphics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;

import javax.swing.JPanel;

/** The board of a {@link BoardWindow}: row 10 at the top, with column letters and row numbers. */
final class BoardPanel extends JPanel {

    private static final long serialVersionUID = 1L;
    private static final int CELL = 48;
    private static final int MARGIN = 28;
    private static final Color DARK = new Color(0xB5, 0x88, 0x63);
    private static final Color LIGHT = new Color(0xF0, 0xD9, 0xB5);
    private static final Color ARROW = new Color(0x8B, 0x1A, 0x1A);

    private int[] board = BoardText.start();

    BoardPanel() {
        int side = 2 * MARGIN + CourseGame.SIZE * CELL;
        setPreferredSize(new Dimension(side, side));
        setBackground(new Color(0xE8, 0xE4, 0xD8));
    }

    /** Shows {@code board} from now on (call on Swing's thread). */
    void setBoard(int[] board) {
        this.board = board;
    }

    @Override
    protected void paintComponent(Graphics graphics) {
        super.paintComponent(graphics);
        Graphics2D g = (Graphics2D) graphics;
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        for (int r = 1; r <= CourseGame.SIZE; r++) {
            int y = MARGIN + (CourseGame.SIZE - r) * CELL;
            for (int c = 1; c <= CourseGame.SIZE; c++) {
                int x = MARGIN + (c - 1) * CELL;
                g.setColor((r + c) % 2 == 0 ? DARK : LIGHT);
                g.fillRect(x, y, CELL, CELL);
                paintCell(g, board[r * CourseGame.STRIDE + c], x, y);
            }
            g.setColor(Color.DARK_GRAY);
            g.drawString(Integer.toString(r), 6, y + CELL / 2 + 5);
        }
        for (int c = 1; c <= CourseGame.SIZE; c++) {
            g.drawString(String.valueOf((char) ('a' + c - 1)), MARGIN + (c - 1) * CELL + CELL / 2 - 3,
                    MARGIN + CourseGame.SIZE * CELL + 18);
        }
    }

    /** A queen (a black or white disc) or an arrow (a red cross) on the cell at {@code x, y}. */
    private static void paintCell(Graphics2D g, int value, int x, int y) {
        int pad = CELL / 6;
        if (value == 1 || value == 2) {
            g.setColor(value == 1 ? Color.BLACK : Color.WHITE);
            g.fillOval(x + pad, y + pad, CELL - 2 * pad, CELL - 2 * pad);
            g.setColor(Color.DARK_GRAY);
            g.drawOval(x + pad, y + pad, CELL - 2 * pad, CELL - 2 * pad);
        } else if (value == 3) {
            g.setColor(ARROW);
            g.setStroke(new BasicStroke(4));
            g.drawLine(x + pad, y + pad, x + CELL - pad, y + CELL - pad);
            g.drawLine(x + CELL - pad, y + pad, x + pad, y + CELL - pad);
            g.setStroke(new BasicStroke(1));
        }
    }
}
