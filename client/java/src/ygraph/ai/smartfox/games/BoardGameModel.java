package ygraph.ai.smartfox.games;

/**
 * A rectangular board of squares, each holding one of the {@link GameModel} names ({@link #POS_AVAILABLE},
 * {@link #POS_MARKED_BLACK}, {@link #POS_MARKED_WHITE}, {@link #POS_MARKED_ARROW}); rows and columns count
 * from 0. A plain data class for a bot's own bookkeeping: the library never reads it.
 */
public class BoardGameModel extends GameModel {

    /** The squares, {@code gameBoard[row][column]}. */
    protected String[][] gameBoard;

    /** A board of {@code rows} by {@code columns} empty squares. */
    public BoardGameModel(int rows, int columns) {
        gameBoard = new String[rows][columns];
        for (String[] row : gameBoard) {
            java.util.Arrays.fill(row, POS_AVAILABLE);
        }
    }

    /** Rows of the board. */
    public int getRows() {
        return gameBoard.length;
    }

    /** Columns of the board. */
    public int getColumns() {
        return gameBoard.length == 0 ? 0 : gameBoard[0].length;
    }

    /** What the square holds. */
    public String getTile(int row, int column) {
        return gameBoard[row][column];
    }

    /** Puts {@code value} (one of the names) on the square. */
    public void setTile(int row, int column, String value) {
        gameBoard[row][column] = value;
    }

    /** The squares themselves, {@code [row][column]}. */
    public String[][] getBoard() {
        return gameBoard;
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder();
        for (int r = gameBoard.length - 1; r >= 0; r--) {
            for (int c = 0; c < gameBoard[r].length; c++) {
                String tile = gameBoard[r][c];
                out.append(c == 0 ? "" : " ").append(POS_MARKED_BLACK.equals(tile) ? 'B' : POS_MARKED_WHITE.equals(tile)
                        ? 'W' : POS_MARKED_ARROW.equals(tile) ? 'X' : '.');
            }
            out.append('\n');
        }
        return out.toString();
    }
}
