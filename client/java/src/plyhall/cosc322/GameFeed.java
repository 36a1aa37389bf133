package plyhall.cosc322;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import ygraph.ai.smartfox.games.GameMessage;

/**
 * Plyhall's game messages turned into the course's, for the bot's {@code handleGameMessage}, and the bot's
 * moves turned into Plyhall's. What the course bot gets, as from the course server:
 *
 * <ol>
 * <li>{@code cosc322.game-state.board} with {@code game-state}: the 121-entry board list;</li>
 * <li>{@code cosc322.game-action.start} with {@code player-black}, {@code player-white} and {@code room.name};</li>
 * <li>{@code cosc322.game-action.move} for each of the <em>opponent's</em> moves (never an echo of its own),
 *     with {@code queen-position-current}, {@code queen-position-next} and {@code arrow-position}.</li>
 * </ol>
 *
 * No message ends the game: the result is logged, and {@link Seating} decides what comes next. Messages are
 * handled on the events thread; {@link #sendMove} runs on the bot's thread.
 *
 * <p>A player seated in a game already under way (a tournament entrant seated late, a fresh process for a game it
 * was playing) hears of it the way a course bot expects, once it is its turn: black (who moves first, and moves
 * when the start message comes) gets the board as it stands and the start; white (who moves when a move message
 * comes) gets the board before the opponent's last move, the start, and then that move. Until it is its turn the
 * library holds the board back and keeps it up to date.
 */
final class GameFeed {

    private final Session session;
    private volatile CourseGame game;

    GameFeed(Session session) {
        this.session = session;
    }

    /** The game this player follows, or null. */
    CourseGame current() {
        return game;
    }

    /** True while a game this player follows runs. */
    boolean running() {
        return game != null;
    }

    /** Forget the game (it ended unseen, or the player left); {@code why}: what to log, if anything. */
    void abandon(String why) {
        if (game != null && why != null) {
            Log.info(session.name, why);
        }
        game = null;
    }

    /** {@code game_start}: a new game (board, then start), or the game we play, after a reconnect (catch up). */
    void gameStart(Map<String, Object> msg) {
        if (Boolean.TRUE.equals(msg.get("paused"))) {
            Log.info(session.name, "the game in " + msg.get("room") + " waits for both players after a server restart");
            return;
        }
        List<?> moves = msg.get("moves") instanceof List ? (List<?>) msg.get("moves") : new ArrayList<>();
        CourseGame current = game;
        String record = String.valueOf(msg.get("record"));
        if (current != null && current.record.equals(record)) {
            catchUp(current, msg, moves);
            return;
        }
        Integer seat = msg.get("seat") == null ? null : Json.toInt(msg.get("seat"));
        Map<?, ?> options = msg.get("options") instanceof Map ? (Map<?, ?>) msg.get("options") : new HashMap<>();
        int first = options.get("first") == null ? 0 : Json.toInt(options.get("first"));
        List<?> wirePlayers = (List<?>) msg.get("players");
        List<String> players = new ArrayList<>();
        for (Object player : wirePlayers) {
            players.add(session.display(player));
        }
        Integer gameNo = msg.get("game_no") == null ? null : Json.toInt(msg.get("game_no"));
        CourseGame fresh = new CourseGame(String.valueOf(msg.get("room")), record, gameNo, seat, first, players);
        fresh.seq = moves.size();
        game = fresh;
        announce(fresh, msg, moves.size());
        Map<?, ?> state = (Map<?, ?>) msg.get("state");
        ArrayList<Integer> board = fresh.courseBoard((List<?>) state.get("board"));
        Object toMove = msg.get("to_move");
        if (moves.isEmpty() || fresh.seat == null || toMove == null) {
            begin(fresh, board, null);
            return;
        }
        Map<String, Object> last = lastMove(fresh, msg, moves);
        if (Json.toInt(toMove) == fresh.seat && last != null) {
            begin(fresh, board, last);
        } else {
            fresh.held = toArray(board);
            Log.info(session.name, "the opponent is to move: your bot hears of the game when it is its turn");
        }
    }

    /**
     * The bot hears of {@code current}: the board and the start message, and, when it was seated in the game
     * after the opponent's move {@code last} (null: no move yet, or not the bot's turn) and plays white, the board
     * before that move and then the move (see the class comment).
     */
    private void begin(CourseGame current, ArrayList<Integer> board, Map<String, Object> last) {
        boolean white = last != null && current.seat != null && current.seat != current.first;
        ArrayList<Integer> shown = board;
        if (white) {
            int[] before = toArray(board);
            if (play(before, last, true)) {
                shown = toList(before);
            } else {
                white = false; // cannot happen with the server's own moves; the bot then just gets the position
            }
        }
        Map<String, Object> boardMessage = new HashMap<>();
        boardMessage.put("game-state", shown);
        deliver(GameMessage.GAME_STATE_BOARD, boardMessage);
        Map<String, Object> start = new HashMap<>();
        start.put("player-black", current.black());
        start.put("player-white", current.white());
        start.put("room.name", current.room);
        deliver(GameMessage.GAME_ACTION_START, start);
        if (white) {
            deliver(GameMessage.GAME_ACTION_MOVE, last);
        }
    }

    /** The last move of a game under way, in the course's terms: the server's {@code last_move}, else from the notation. */
    private static Map<String, Object> lastMove(CourseGame game, Map<String, Object> msg, List<?> moves) {
        Object last = msg.get("last_move");
        if (last instanceof Map && ((Map<?, ?>) last).get("move") instanceof Map) {
            return game.courseMove((Map<?, ?>) ((Map<?, ?>) last).get("move"));
        }
        return game.courseMove(String.valueOf(moves.get(moves.size() - 1)));
    }

    /** A move on the held board of a bot seated mid-game; when it was the opponent's, the bot hears of the game. */
    private void heldMove(CourseGame current, int seat, Map<String, Object> details) {
        if (details == null || !play(current.held, details, false)) {
            Log.warn(session.name, "a move of the game in " + current.room + " does not fit the board: " + details);
            return;
        }
        if (current.seat != null && seat == current.seat) {
            current.pending.set(null); // our own move (sent by an earlier process of this bot)
            return;
        }
        ArrayList<Integer> board = toList(current.held);
        current.held = null;
        begin(current, board, details);
    }

    @SuppressWarnings("unchecked")
    private static boolean play(int[] board, Map<String, Object> move, boolean undo) {
        List<Integer> from = (List<Integer>) move.get("queen-position-current");
        List<Integer> to = (List<Integer>) move.get("queen-position-next");
        List<Integer> arrow = (List<Integer>) move.get("arrow-position");
        return undo ? BoardText.undo(board, from, to, arrow) : BoardText.apply(board, from, to, arrow);
    }

    private static int[] toArray(List<Integer> board) {
        int[] cells = new int[board.size()];
        for (int i = 0; i < cells.length; i++) {
            cells[i] = board.get(i);
        }
        return cells;
    }

    private static ArrayList<Integer> toList(int[] board) {
        ArrayList<Integer> list = new ArrayList<>(board.length);
        for (int cell : board) {
            list.add(cell);
        }
        return list;
    }

    /** A move names its game: one that crosses the game's end (a flag fell) is refused, not played in the next. */
    private void gameNo(Map<String, Object> move, CourseGame current) {
        if (current.gameNo != null && session.gameNumbers) {
            move.put("game_no", current.gameNo);
        }
    }

    private void announce(CourseGame fresh, Map<String, Object> msg, int played) {
        Object number = msg.get("game_no"); // a room's games are numbered; a room of one game needs no number
        String which = number == null || Json.toInt(number) == 1 ? "the game in " : "game " + number + " in ";
        Log.info(session.name, which + fresh.room + ": " + fresh.black()
                + " (black) against " + fresh.white() + " (white); "
                + (fresh.seat == null ? "watching" : "you play " + fresh.colour()));
        if (fresh.mirrored) {
            Log.info(session.name, "on the server the second seat moves first in this game; your bot sees it "
                    + "mirrored (rows upside down, colours swapped) so that black moves first from rows 7 and 10, "
                    + "as in the course");
        }
        if (played > 0 && fresh.seat != null) {
            Log.info(session.name, played + (played == 1 ? " move is" : " moves are") + " played already: your bot "
                    + "hears of the game when it is its turn: "
                    + (fresh.seat == fresh.first ? "as black, the board as it stands, then the start"
                            : "as white, the board before the opponent's last move, the start, then that move"));
        }
    }

    /** After a reconnect: tell the bot the opponent's moves it missed, and send its own move again if it was lost. */
    private void catchUp(CourseGame current, Map<String, Object> msg, List<?> moves) {
        if (current.held != null) { // the bot has not heard of this game yet: keep the held board up to date
            int i = current.seq;
            for (; i < moves.size() && current.held != null; i++) {
                heldMove(current, current.mover(i), current.courseMove(String.valueOf(moves.get(i))));
            }
            current.seq = Math.max(current.seq, i);
            if (current.held != null) {
                return;
            }
        }
        for (int i = current.seq; i < moves.size(); i++) {
            if (current.seat != null && current.mover(i) == current.seat) {
                current.pending.set(null); // our move arrived before the connection broke
                continue;
            }
            Map<String, Object> details = current.courseMove(String.valueOf(moves.get(i)));
            if (details != null) {
                deliver(GameMessage.GAME_ACTION_MOVE, details);
            }
        }
        current.seq = Math.max(current.seq, moves.size());
        Object toMove = msg.get("to_move");
        Map<String, Object> lost = current.pending.get();
        if (lost != null && toMove != null && current.seat != null && Json.toInt(toMove) == current.seat) {
            Map<String, Object> move = new LinkedHashMap<>();
            move.put("type", "move");
            move.put("room", current.room);
            move.put("move", lost);
            gameNo(move, current);
            session.sendMove(move, "(sent again after the reconnect) " + lost);
        }
    }

    /** {@code moved}: the opponent's move goes to the bot; our own is only confirmed. */
    void moved(Map<String, Object> msg) {
        CourseGame current = game;
        if (current == null || !current.room.equals(msg.get("room"))) {
            return;
        }
        int seq = Json.toInt(msg.get("seq"));
        if (seq <= current.seq) {
            return; // already known (caught up after a reconnect)
        }
        current.seq = seq;
        int seat = Json.toInt(msg.get("seat"));
        if (current.held != null) {
            heldMove(current, seat, current.courseMove((Map<?, ?>) msg.get("move")));
            return;
        }
        if (current.seat != null && seat == current.seat) {
            current.pending.set(null);
            return;
        }
        deliver(GameMessage.GAME_ACTION_MOVE, current.courseMove((Map<?, ?>) msg.get("move")));
    }

    /** {@code game_over}: log the result; the bot hears nothing (course bots are never told). */
    void gameOver(Map<String, Object> msg) {
        CourseGame current = game;
        if (current == null || !current.room.equals(msg.get("room"))) {
            Log.info(session.name, "game over in " + msg.get("room") + ": " + msg.get("reason"));
            return;
        }
        game = null;
        Object winner = msg.get("winner");
        String result;
        if ("aborted".equals(msg.get("status")) || "forfeit".equals(msg.get("status"))) {
            result = "the game was not played to the end (" + msg.get("status") + ")";
        } else if (winner == null) {
            result = "a draw";
        } else if (current.seat == null) {
            result = current.players.get(Json.toInt(winner)) + " won";
        } else {
            result = Json.toInt(winner) == current.seat ? "you won" : "you lost";
        }
        Log.info(session.name, "game over in " + current.room + " after " + current.seq + " moves: " + result + " ("
                + msg.get("reason") + "); record " + current.record);
    }

    /**
     * {@code room_state}, sent on coming back to a seat where no game runs: when it ends the game this player
     * followed (its {@code game_over} sent while the connection was down, or lost with a server that died right
     * after storing the result), that game ends here as the {@code game_over} would have ended it.
     *
     * @return the {@code game_over} it stands for, or null when it ends no game of ours
     */
    Map<String, Object> endedMeanwhile(Map<String, Object> msg) {
        CourseGame current = game;
        Object last = msg.get("last_result");
        if (current == null || !(last instanceof Map) || !current.room.equals(msg.get("room"))) {
            return null;
        }
        Map<?, ?> result = (Map<?, ?>) last;
        if (!current.record.equals(String.valueOf(result.get("record")))) {
            return null;
        }
        Map<String, Object> over = new LinkedHashMap<>();
        over.put("room", msg.get("room"));
        over.put("winner", result.get("winner"));
        over.put("reason", result.get("reason"));
        over.put("status", result.get("status"));
        over.put("next_game", "waiting".equals(msg.get("status")));
        gameOver(over);
        return over;
    }

    /** {@code chat}: another player's line goes to the bot's {@code handleMessage(sender, text)}. */
    void chat(Map<String, Object> msg) {
        Object from = msg.get("from");
        if (session.player == null || session.wireName.equals(from)) {
            return;
        }
        String sender = session.display(from);
        String text = String.valueOf(msg.get("text"));
        session.callBot("handleMessage()", () -> session.player.handleMessage(sender, text));
    }

    /** The bot's move (any thread): translated, remembered until confirmed, and sent at once. */
    void sendMove(List<?> queen, List<?> next, List<?> arrow) {
        String description = CourseGame.show(queen) + " -> " + CourseGame.show(next) + ", arrow "
                + CourseGame.show(arrow);
        CourseGame current = game;
        if (current == null || current.seat == null) {
            Log.error(session.name, "sendMoveMessage(" + description + "): no game is running; the move is not sent");
            return;
        }
        Map<String, Object> wire;
        try {
            wire = current.wireMove(queen, next, arrow);
        } catch (IllegalArgumentException | ClassCastException e) {
            Log.error(session.name, "sendMoveMessage(" + description + "): " + e.getMessage()
                    + "; the move is not sent");
            return;
        }
        Map<String, Object> move = new LinkedHashMap<>();
        move.put("type", "move");
        move.put("room", current.room);
        move.put("move", wire);
        gameNo(move, current);
        current.pending.set(wire);
        if (!session.sendMove(move, description)) {
            Log.warn(session.name, "the connection is down: the move " + description + " is sent once it is back");
        }
    }

    private void deliver(String type, Map<String, Object> details) {
        if (session.player != null) {
            session.callBot("handleGameMessage(" + type + ")", () -> session.player.handleGameMessage(type, details));
        }
    }
}
