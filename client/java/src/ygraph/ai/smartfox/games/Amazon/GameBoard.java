package ygraph.ai.smartfox.games.Amazon;

import java.util.ArrayList;
import java.util.List;

import plyhall.cosc322.BoardText;

/**
 * An Amazons board in the course's list form (121 entries, index {@code row * 11 + col}; 0 empty, 1 black
 * queen, 2 white queen, 3 arrow), with a text picture. A plain data class for a bot's own bookkeeping (in the
 * course client this name belonged to the board drawing); the library never reads it.
 */
public class GameBoard {

    private final int[] board;

    /** A board in the start position. */
    public GameBoard() {
        board = BoardText.start();
    }

    /** Sets the whole board from the course's 121-entry list. */
    public void setGameState(List<Integer> gameState) {
        for (int i = 0; i < board.length && i < gameState.size(); i++) {
            Integer value = gameState.get(i);
            board[i] = value == null ? 0 : value;
        }
    }

    /** Applies a move; false when it is not one on this board (nothing changes then). */
    public boolean updateGameState(List<Integer> queenCurrent, List<Integer> queenNext, List<Integer> arrow) {
        return BoardText.apply(board, queenCurrent, queenNext, arrow);
    }

    /** The board as the course's 121-entry list. */
    public ArrayList<Integer> getGameState() {
        ArrayList<Integer> state = new ArrayList<>();
        for (int value : board) {
            state.add(value);
        }
        return state;
    }

    /** What the square {@code [row, col]} holds: 0 empty, 1 black queen, 2 white queen, 3 arrow. */
    public int get(int row, int col) {
        return board[row * 11 + col];
    }

    @Override
    public String toString() {
        return BoardText.render(board);
    }
}
