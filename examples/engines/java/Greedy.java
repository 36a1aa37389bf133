import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Greedy: a Plyhall stdio engine in Java that plays Connect Four greedily. It wins at once when it can,
 * blocks the opponent's immediate win, avoids giving the opponent a win on top of its stone, and otherwise
 * plays as near the centre as it can. It keeps its own board, rebuilt from the moves of each position.
 *
 * The protocol is in docs/ENGINE-PROTOCOL.md. Build and run:
 *
 *     javac -d build/engines examples/engines/java/Greedy.java
 *     plyhall bot --game connect4 --engine "java -cp build/engines Greedy" --name java-greedy
 */
public class Greedy {
    static final int COLUMNS = 7, ROWS = 6;
    static final int[][] DIRECTIONS = {{1, 0}, {0, 1}, {1, 1}, {1, -1}};

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Random random = new Random();
        List<Integer> moves = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split(" ", 2);
            switch (words[0]) {
                case "plyhall":
                    say("id name greedy-java\nid author Plyhall examples\nid games connect4\nready");
                    break;
                case "picture":
                    for (int i = Integer.parseInt(words[1]); i > 0; i--) in.readLine();
                    break;
                case "moves": // the moves from the start, one a line: columns 1..7
                    moves.clear();
                    for (int i = Integer.parseInt(words[1]); i > 0; i--) moves.add(Integer.parseInt(in.readLine().trim()) - 1);
                    break;
                case "go":
                    int column = choose(moves, random);
                    say("info greedy after " + moves.size() + " moves\nmove " + (column + 1));
                    break;
                case "illegal":
                    System.err.println("greedy-java: my move was refused: " + words[1]);
                    break;
                case "result":
                    System.err.println("greedy-java: game over: " + words[1]);
                    break;
                case "quit":
                    return;
                default: // newgame, position, state, time: not needed
                    break;
            }
        }
    }

    static void say(String text) {
        System.out.println(text);
        System.out.flush();
    }

    /** The board after `moves`: board[column][row], row 0 at the bottom; 1 for the first player, 2 for the second. */
    static int[][] board(List<Integer> moves) {
        int[][] board = new int[COLUMNS][ROWS];
        int[] height = new int[COLUMNS];
        for (int i = 0; i < moves.size(); i++) {
            int column = moves.get(i);
            board[column][height[column]++] = i % 2 + 1;
        }
        return board;
    }

    static int height(int[][] board, int column) {
        int row = 0;
        while (row < ROWS && board[column][row] != 0) row++;
        return row;
    }

    /** True when `player` dropping into `column` makes four in a row. */
    static boolean wins(int[][] board, int column, int player) {
        int row = height(board, column);
        if (row == ROWS) return false;
        for (int[] d : DIRECTIONS) {
            int count = 1;
            for (int sign = -1; sign <= 1; sign += 2) {
                int c = column + sign * d[0], r = row + sign * d[1];
                while (c >= 0 && c < COLUMNS && r >= 0 && r < ROWS && board[c][r] == player) {
                    count++;
                    c += sign * d[0];
                    r += sign * d[1];
                }
            }
            if (count >= 4) return true;
        }
        return false;
    }

    static int choose(List<Integer> moves, Random random) {
        int[][] board = board(moves);
        int me = moves.size() % 2 + 1, opponent = 3 - me;
        List<Integer> open = new ArrayList<>();
        for (int c = 0; c < COLUMNS; c++) if (height(board, c) < ROWS) open.add(c);
        for (int c : open) if (wins(board, c, me)) return c;
        for (int c : open) if (wins(board, c, opponent)) return c;
        List<Integer> safe = new ArrayList<>();
        for (int c : open) {
            board[c][height(board, c)] = me;
            if (!wins(board, c, opponent)) safe.add(c);
            board[c][height(board, c) - 1] = 0;
        }
        List<Integer> choices = safe.isEmpty() ? open : safe;
        int best = Integer.MAX_VALUE;
        List<Integer> nearest = new ArrayList<>();
        for (int c : choices) {
            int distance = Math.abs(c - COLUMNS / 2);
            if (distance < best) nearest.clear();
            if (distance <= best) {
                best = distance;
                nearest.add(c);
            }
        }
        return nearest.get(random.nextInt(nearest.size()));
    }
}
