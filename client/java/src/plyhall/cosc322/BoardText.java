package plyhall.cosc322;

import java.util.List;

/**
 * The course's Amazons board as an {@code int[121]} (index {@code row * 11 + col}, rows and columns 1 to 10,
 * row 1 at the bottom; 0 empty, 1 black queen, 2 white queen, 3 arrow): applying moves, and text pictures.
 */
public final class BoardText {

    /** Entries of the course's board list. */
    public static final int CELLS = CourseGame.STRIDE * CourseGame.STRIDE;

    private static final char[] MARKS = {'.', 'B', 'W', 'X'};

    private BoardText() {
    }

    /** The course's start position: black queens on rows 7 and 10, white on rows 1 and 4. */
    public static int[] start() {
        int[] board = new int[CELLS];
        int[][] black = {{7, 1}, {10, 4}, {10, 7}, {7, 10}};
        int[][] white = {{4, 1}, {1, 4}, {1, 7}, {4, 10}};
        for (int[] sq : black) {
            board[sq[0] * CourseGame.STRIDE + sq[1]] = 1;
        }
        for (int[] sq : white) {
            board[sq[0] * CourseGame.STRIDE + sq[1]] = 2;
        }
        return board;
    }

    /**
     * Moves the queen on {@code from} to {@code to} and puts an arrow on {@code arrow}; false (and the board
     * unchanged) when a square is not {@code [row, col]} on the board or no queen stands on {@code from}.
     */
    public static boolean apply(int[] board, List<Integer> from, List<Integer> to, List<Integer> arrow) {
        int f = index(from);
        int t = index(to);
        int a = index(arrow);
        if (f < 0 || t < 0 || a < 0 || (board[f] != 1 && board[f] != 2)) {
            return false;
        }
        board[t] = board[f];
        board[f] = 0;
        board[a] = 3;
        return true;
    }

    /**
     * Takes back the move {@code from} -> {@code to}, arrow {@code arrow} (the board as it stands after it): the
     * arrow's square is emptied and the queen goes back; false (and the board unchanged) when a square is not on
     * the board or no queen stands on {@code to}.
     */
    public static boolean undo(int[] board, List<Integer> from, List<Integer> to, List<Integer> arrow) {
        int f = index(from);
        int t = index(to);
        int a = index(arrow);
        if (f < 0 || t < 0 || a < 0 || (board[t] != 1 && board[t] != 2)) {
            return false;
        }
        int queen = board[t];
        board[a] = 0;
        board[t] = 0;
        board[f] = queen;
        return true;
    }

    /** The index of a {@code [row, col]} square, or -1 when it is not one on the board. */
    public static int index(List<Integer> square) {
        if (square == null || square.size() != 2 || square.get(0) == null || square.get(1) == null) {
            return -1;
        }
        int r = square.get(0);
        int c = square.get(1);
        if (r < 1 || r > CourseGame.SIZE || c < 1 || c > CourseGame.SIZE) {
            return -1;
        }
        return r * CourseGame.STRIDE + c;
    }

    /** A picture of the board, row 10 at the top: {@code B} black queen, {@code W} white queen, {@code X} arrow. */
    public static String render(int[] board) {
        StringBuilder out = new StringBuilder();
        for (int r = CourseGame.SIZE; r >= 1; r--) {
            out.append(String.format("%2d ", r));
            for (int c = 1; c <= CourseGame.SIZE; c++) {
                int value = board[r * CourseGame.STRIDE + c];
                out.append(' ').append(value >= 0 && value < MARKS.length ? MARKS[value] : '?');
            }
            out.append('\n');
        }
        out.append("    ");
        for (int c = 1; c <= CourseGame.SIZE; c++) {
            out.append(' ').append((char) ('a' + c - 1));
        }
        return out.toString();
    }
}
