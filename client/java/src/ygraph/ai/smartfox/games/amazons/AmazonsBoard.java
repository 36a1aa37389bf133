package ygraph.ai.smartfox.games.amazons;

import java.util.ArrayList;
import java.util.List;

import ygraph.ai.smartfox.games.BoardGameModel;

/**
 * A 10 x 10 Amazons board model in the course's squares: {@code [row, col]}, 1 to 10, row 1 at the bottom
 * (stored 0-based in {@link BoardGameModel}). It starts in the start position and follows the board and move
 * messages it is given. A plain data class for a bot's own bookkeeping: the library never reads it.
 */
public class AmazonsBoard extends BoardGameModel {

    /** The board in the start position: black queens on rows 7 and 10, white on rows 1 and 4. */
    public AmazonsBoard() {
        super(10, 10);
        setGameState(toList(plyhall.cosc322.BoardText.start()));
    }

    /** Sets the whole board from the course's 121-entry list (index {@code row * 11 + col}). */
    public void setGameState(List<Integer> gameState) {
        for (int r = 1; r <= 10; r++) {
            for (int c = 1; c <= 10; c++) {
                Integer value = gameState.get(r * 11 + c);
                setTile(r - 1, c - 1, name(value == null ? 0 : value));
            }
        }
    }

    /** Applies a move: the queen on {@code from} goes to {@code to}, and an arrow lands on {@code arrow}. */
    public void updateGameState(List<Integer> from, List<Integer> to, List<Integer> arrow) {
        String queen = getTile(from.get(0) - 1, from.get(1) - 1);
        setTile(from.get(0) - 1, from.get(1) - 1, POS_AVAILABLE);
        setTile(to.get(0) - 1, to.get(1) - 1, queen);
        setTile(arrow.get(0) - 1, arrow.get(1) - 1, POS_MARKED_ARROW);
    }

    /** What the square {@code [row, col]} (1-based) holds. */
    public String getPosition(int row, int col) {
        return getTile(row - 1, col - 1);
    }

    /** The board as the course's 121-entry list. */
    public ArrayList<Integer> getGameState() {
        ArrayList<Integer> state = new ArrayList<>();
        for (int i = 0; i < 121; i++) {
            state.add(0);
        }
        for (int r = 1; r <= 10; r++) {
            for (int c = 1; c <= 10; c++) {
                state.set(r * 11 + c, code(getTile(r - 1, c - 1)));
            }
        }
        return state;
    }

    private static String name(int code) {
        switch (code) {
            case 1:
                return POS_MARKED_BLACK;
            case 2:
                return POS_MARKED_WHITE;
            case 3:
                return POS_MARKED_ARROW;
            default:
                return POS_AVAILABLE;
        }
    }

    private static int code(String name) {
        if (POS_MARKED_BLACK.equals(name)) {
            return 1;
        }
        if (POS_MARKED_WHITE.equals(name)) {
            return 2;
        }
        return POS_MARKED_ARROW.equals(name) ? 3 : 0;
    }

    private static List<Integer> toList(int[] board) {
        List<Integer> list = new ArrayList<>();
        for (int value : board) {
            list.add(value);
        }
        return list;
    }
}
