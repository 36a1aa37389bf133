package plyhall.cosc322;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One Plyhall Amazons game seen the course's way, and the translation between the two.
 *
 * <p>Plyhall, logged in with {@code "coords": "cosc322"}, already speaks in 1-based {@code [row, col]} squares
 * with row 1 at the bottom, and its seat 0 ("black", queens on rows 7 and 10) moves first by default, as in the
 * course. A Plyhall game may also start with seat 1 (the {@code first} option, or every second game of a
 * series). Course bots take it for granted that black moves first, from rows 7 and 10; so when seat 1 moves
 * first, this class shows the game <em>mirrored</em>: rows turned upside down (row r is row 11 - r) and the
 * colours swapped. The player who moves first is then "black", on rows 7 and 10, exactly as in a course game,
 * and moves are translated back on the way out. The mirror is an exact symmetry of the Amazons start
 * position, so nothing about the game changes but its picture.
 */
public final class CourseGame {

    /** Board side. */
    public static final int SIZE = 10;
    /** The course's board list has 11 x 11 entries: row 0 and column 0 unused. */
    public static final int STRIDE = SIZE + 1;

    private static final Pattern NOTATION = Pattern.compile("([a-j])(\\d+)-([a-j])(\\d+)/([a-j])(\\d+)");

    /** The room's name. */
    public final String room;
    /** The game's record id on the server. */
    public final String record;
    /** The game's number in its room (1 for the room's first game), or null when the server did not say. */
    public final Integer gameNo;
    /** This player's seat (0 or 1), or null for a spectator. */
    public final Integer seat;
    /** The seat that moves first in this game. */
    public final int first;
    /** The names by seat, as the bot knows them. */
    public final List<String> players;
    /** True when the game is shown mirrored (seat 1 moves first: see the class comment). */
    public final boolean mirrored;

    /** Moves played so far that this player has been told of (its own included). Events thread only. */
    int seq;
    /**
     * The board (the course's picture) of a game this player was seated in after it had started, held back from
     * the bot until it is its turn ({@link GameFeed}); null once the bot has heard of the game. Events thread only.
     */
    int[] held;
    /** This player's move sent but not yet confirmed (the wire form), to send again after a reconnect. */
    final AtomicReference<Map<String, Object>> pending = new AtomicReference<>();

    CourseGame(String room, String record, Integer gameNo, Integer seat, int first, List<String> players) {
        this.room = room;
        this.record = record;
        this.gameNo = gameNo;
        this.seat = seat;
        this.first = first;
        this.players = players;
        this.mirrored = first == 1;
    }

    /** The name of the player who moves first: "black" in the course's messages. */
    public String black() {
        return players.get(first);
    }

    /** The name of the player who moves second: "white" in the course's messages. */
    public String white() {
        return players.get(1 - first);
    }

    /** The colour this player plays in the course's terms. */
    public String colour() {
        if (seat == null) {
            return "a spectator";
        }
        return seat == first ? "black (you move first)" : "white (you move second)";
    }

    /** The seat that made move number {@code index} (0-based): the seats take turns from the first. */
    public int mover(int index) {
        return (first + index) % 2;
    }

    /**
     * The course's board list (121 entries, index {@code row * 11 + col}) of a Plyhall {@code cosc322} board:
     * 10 rows of 10, {@code board[row - 1][col - 1]}; 0 empty, 1 black queen, 2 white queen, 3 arrow.
     */
    public ArrayList<Integer> courseBoard(List<?> rows) {
        ArrayList<Integer> board = new ArrayList<>(STRIDE * STRIDE);
        for (int i = 0; i < STRIDE * STRIDE; i++) {
            board.add(0);
        }
        for (int r = 1; r <= SIZE; r++) {
            List<?> cells = (List<?>) rows.get(r - 1);
            for (int c = 1; c <= SIZE; c++) {
                board.set(row(r) * STRIDE + c, stone(Json.toInt(cells.get(c - 1))));
            }
        }
        return board;
    }

    /** The course's move message details for a Plyhall move ({@code queen}, {@code to}, {@code arrow} squares). */
    public Map<String, Object> courseMove(Map<?, ?> move) {
        return courseMove(square(move.get("queen")), square(move.get("to")), square(move.get("arrow")));
    }

    /** The course's move message details for a move in notation ({@code d1-d7/g7}), or null if it is not one. */
    public Map<String, Object> courseMove(String notation) {
        Matcher m = NOTATION.matcher(notation == null ? "" : notation.trim());
        if (!m.matches()) {
            return null;
        }
        return courseMove(named(m.group(1), m.group(2)), named(m.group(3), m.group(4)), named(m.group(5), m.group(6)));
    }

    /** The Plyhall move (wire form, cosc322 squares) for the course's three squares. */
    public Map<String, Object> wireMove(List<?> queen, List<?> to, List<?> arrow) {
        Map<String, Object> move = new LinkedHashMap<>();
        move.put("queen", wireSquare(queen, "queen-position-current"));
        move.put("to", wireSquare(to, "queen-position-next"));
        move.put("arrow", wireSquare(arrow, "arrow-position"));
        return move;
    }

    /** A course square as text, {@code [7, 4]}, for messages. */
    public static String show(List<?> square) {
        return square == null ? "null" : square.toString();
    }

    private Map<String, Object> courseMove(int[] queen, int[] to, int[] arrow) {
        Map<String, Object> details = new HashMap<>();
        details.put("queen-position-current", courseSquare(queen));
        details.put("queen-position-next", courseSquare(to));
        details.put("arrow-position", courseSquare(arrow));
        return details;
    }

    private ArrayList<Integer> courseSquare(int[] wire) {
        return new ArrayList<>(Arrays.asList(row(wire[0]), wire[1]));
    }

    private List<Object> wireSquare(List<?> square, String what) {
        if (square == null || square.size() != 2) {
            throw new IllegalArgumentException(what + " must be a list [row, col], got " + show(square));
        }
        int r = Json.toInt(square.get(0));
        int c = Json.toInt(square.get(1));
        if (r < 1 || r > SIZE || c < 1 || c > SIZE) {
            throw new IllegalArgumentException(what + " " + show(square)
                    + " is off the board: rows and columns are 1 to 10");
        }
        return new ArrayList<>(Arrays.asList(row(r), c));
    }

    private static int[] square(Object value) {
        List<?> list = (List<?>) value;
        return new int[] {Json.toInt(list.get(0)), Json.toInt(list.get(1))};
    }

    private static int[] named(String file, String rank) {
        return new int[] {Integer.parseInt(rank), file.charAt(0) - 'a' + 1};
    }

    /** A row between Plyhall and the course picture (the same both ways: mirroring is its own inverse). */
    private int row(int r) {
        return mirrored ? STRIDE - r : r;
    }

    /** A cell value between Plyhall and the course picture: the queens swap colours when mirrored. */
    private int stone(int value) {
        if (mirrored && (value == 1 || value == 2)) {
            return 3 - value;
        }
        return value;
    }
}
