package plyhall.cosc322;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Getting a course bot into a game, and into the next one. All on the session's events thread.
 *
 * <p>Most course bots never call {@code joinRoom} (in the course a person clicked a room), so the library
 * joins for them once {@code onLogin} has returned: the room of PLYHALL_ROOM (created if it does not exist),
 * or, with none, a seek, which pairs the bot with any other player seeking an Amazons game. A bot that does call
 * {@code joinRoom} goes where it says, unless PLYHALL_ROOM (or PLYHALL_SEEK) says otherwise: the settings
 * of the person running the bot win over a room name written into its code.
 *
 * <p>A tournament entrant (PLYHALL_TOURNAMENT, see {@link TournamentEntry}) goes nowhere by itself: it stays in
 * each room the server seats it in, plays the game there, leaves the finished room and waits for the next seat.
 * A bot run without PLYHALL_TOURNAMENT that the server seats in a tournament game (its name is an entrant's) says
 * on standard error which variable to set, and plays that game instead of leaving the seat.
 */
final class Seating {

    private static final String GAME = "amazons";
    private static final int FINISHED_ROOM_TRIES = 120;
    private static final long FINISHED_ROOM_PAUSE_MS = 500;
    private static final int MAX_CHAT = 500;

    private final Session session;
    /** The bot called joinRoom (set on the bot's thread, before the join itself runs here). */
    volatile boolean joinAsked;
    private boolean started;
    private String pending;
    private boolean pendingSet;
    /** Where to play: a room, or null to seek. */
    private String target;
    private String currentRoom;
    /** The current room has played all its games (a seat the server kept after the last one). */
    private boolean roomFinished;
    private boolean seeking;
    private boolean wasSeeking;
    private boolean idle;
    private int gamesDone;
    /** The tournament this bot plays in (PLYHALL_TOURNAMENT, or the one the server seated it for), or null. */
    TournamentEntry entry;
    /** The entry was taken up when the server seated the bot (no PLYHALL_TOURNAMENT): it plays every game of it. */
    private boolean adopted;
    /** The current room is a tournament game's: the server seated us there, and we stay. */
    private boolean tournamentRoom;
    /** Seated in a tournament game without PLYHALL_TOURNAMENT: said which variable to set (once). */
    private boolean saidVariable;
    private boolean saidIgnored;

    Seating(Session session) {
        this.session = session;
        String tournament = session.settings.tournament;
        this.entry = tournament == null ? null : new TournamentEntry(session, tournament);
    }

    /** True while the bot follows a running game. */
    boolean inGame() {
        return session.feed.running();
    }

    /** A tournament entrant goes only where the server seats it: no seek, no joinRoom, no leaving. */
    private boolean entrant() {
        return entry != null || tournamentRoom;
    }

    /**
     * After onLogin (and after the seats the server kept for this name were reported): go on with the game
     * that runs, else go to the room the bot asked for, or where the settings say.
     */
    void start() {
        started = true;
        if (session.player == null) {
            return; // a GameClient without a player only logs in
        }
        if (session.feed.running()) {
            Log.info(session.name, "its seat in " + currentRoom + " is waiting for it: it plays that game");
        }
        if (entry != null) {
            entry.watch(); // the server seats an entrant: it neither seeks nor joins
        } else if (session.feed.running() || tournamentRoom) {
            return; // play the game it has (a tournament seat is kept, never left for a seek)
        } else if (pendingSet) {
            go(pending);
        } else if (!joinAsked) {
            autoJoin();
        }
    }

    /** The names of the rooms the server has (the course's list adds rooms a player's join would create). */
    private String watchable() {
        List<String> names = new ArrayList<>();
        for (Object room : session.getRoomList()) {
            if (room instanceof CourseRoom && ((CourseRoom) room).exists()) {
                names.add(((CourseRoom) room).getName());
            }
        }
        return names.isEmpty() ? "none yet" : String.join(", ", names);
    }

    private void autoJoin() {
        if (session.spectator && session.settings.room == null) {
            session.fail("set PLYHALL_ROOM to the room to watch; rooms now: " + watchable());
            return;
        }
        go(session.settings.room);
    }

    /** The bot's {@code joinRoom(room)}. */
    void join(String room) {
        if (entrant()) {
            ignored("joinRoom(\"" + room + "\")");
            return;
        }
        String where = resolve(room);
        if (!started) {
            pending = where;
            pendingSet = true;
            return;
        }
        if (session.feed.running()) { // e.g. a restarted bot whose seat the server kept: play that game out
            Log.info(session.name, "joinRoom(\"" + room + "\"): a game runs in " + currentRoom
                    + "; the bot plays it out first");
            target = where;
            return;
        }
        go(where);
    }

    /** The room to go to for the bot's {@code joinRoom(room)}, or null to seek. */
    private String resolve(String room) {
        Settings settings = session.settings;
        if (settings.room != null) {
            if (room != null && !room.equalsIgnoreCase(settings.room) && !room.equals(RoomList.SEEK_ROOM)) {
                Log.info(session.name, "joinRoom(\"" + room + "\"): PLYHALL_ROOM says " + settings.room
                        + "; going there");
            }
            return settings.room;
        }
        if (room == null || room.equals(RoomList.SEEK_ROOM) || settings.seek) {
            return null;
        }
        return room;
    }

    private void go(String room) {
        idle = false;
        target = room;
        if (room == null) {
            if (!seeking) {
                leaveRoom();
                seek();
            }
            return;
        }
        if (room.equalsIgnoreCase(currentRoom) && !roomFinished) {
            return;
        }
        cancelSeek();
        leaveRoom();
        joinNamed(room, 0);
    }

    /** The bot's {@code leaveCurrentRoom()}: leave, stop seeking, and wait for {@code joinRoom}. */
    void leave() {
        if (entrant()) {
            ignored("leaveCurrentRoom()");
            return;
        }
        idle = true;
        cancelSeek();
        leaveRoom();
    }

    private void ignored(String call) {
        if (!saidIgnored) {
            saidIgnored = true;
            Log.info(session.name, call + " is ignored: a tournament entrant plays where the server seats it");
        }
    }

    /** The bot's {@code sendTextMessage(text)}: a chat line in the current room. */
    void chat(String text) {
        if (currentRoom == null) {
            Log.warn(session.name, "sendTextMessage: not in a room; the message is not sent");
            return;
        }
        String line = text == null ? "" : text.replaceAll("[\\p{Cntrl}&&[^\t]]", " ").trim();
        if (line.isEmpty()) {
            return;
        }
        Map<String, Object> chat = message("chat");
        chat.put("room", currentRoom);
        chat.put("text", line.length() > MAX_CHAT ? line.substring(0, MAX_CHAT) : line);
        session.request(chat, reply -> { });
    }

    // ----- seeking and joining -----

    private void seek() {
        seeking = true;
        Map<String, Object> seek = message("seek");
        seek.put("game", GAME);
        seek.put("games", 1);
        putTimeControl(seek);
        session.request(seek, reply -> {
            String type = String.valueOf(reply.get("type"));
            if (type.equals("seeking")) {
                Log.info(session.name, "waiting for an opponent for Amazons in the lobby");
            } else if (type.equals("joined")) {
                joined(reply);
            } else if ("in_tournament".equals(reply.get("code"))) {
                seekWithdrawn(String.valueOf(reply.get("message")));
            } else {
                seeking = false;
                session.fail("cannot seek a game: " + reply.get("message"));
            }
        });
    }

    /** The server refused or withdrew our seek: the bot is a tournament entrant, seated by the server. */
    void seekWithdrawn(String message) {
        seeking = false;
        Log.warn(session.name, "the server says: " + message + ". It seats the bot in each of its tournament games: "
                + "waiting for the next" + (entry == null && session.settings.gamesSet ? ". To play every game of the "
                + "event in this run, set PLYHALL_TOURNAMENT to the tournament's name" : ""));
    }

    private void cancelSeek() {
        if (seeking) {
            seeking = false;
            Map<String, Object> cancel = message("cancel_seek");
            cancel.put("game", GAME);
            session.request(cancel, reply -> { });
        }
    }

    private void leaveRoom() {
        if (currentRoom != null) {
            Map<String, Object> leave = message("leave");
            leave.put("room", currentRoom);
            session.request(leave, reply -> { });
            currentRoom = null;
            session.feed.abandon(null);
        }
    }

    private void joinNamed(String room, int attempt) {
        Map<String, Object> join = message("join");
        join.put("room", room);
        join.put("game", GAME);
        if (session.spectator) {
            join.put("role", "spectator");
        }
        session.request(join, reply -> {
            if ("joined".equals(reply.get("type"))) {
                joined(reply);
            } else {
                joinRefused(room, attempt, reply);
            }
        });
    }

    private void joinRefused(String room, int attempt, Map<String, Object> reply) {
        String code = String.valueOf(reply.get("code"));
        String message = String.valueOf(reply.get("message"));
        if (code.equals("no_such_room") && !session.spectator) {
            create(room);
        } else if (code.equals("no_such_room")) {
            session.fail("there is no room " + room + " to watch; rooms now: " + watchable());
        } else if (code.equals("game_not_running") && attempt < FINISHED_ROOM_TRIES) {
            if (attempt == 0) {
                Log.info(session.name, room + " has played its games; waiting for it to close to set it up again");
            }
            session.after(FINISHED_ROOM_PAUSE_MS, () -> joinNamed(room, attempt + 1));
        } else if (code.equals("room_full") || code.equals("seat_taken")) {
            session.fail("the room " + room + " is full: both seats are taken. Set PLYHALL_ROOM to another room, "
                    + "or leave it unset to be paired with an opponent in the lobby");
        } else {
            session.fail("cannot join the room " + room + ": " + message);
        }
    }

    private void create(String room) {
        Map<String, Object> create = message("create_room");
        create.put("game", GAME);
        create.put("name", room);
        int games = session.settings.games;
        create.put("games", games <= 0 ? 1000 : Math.min(games, 1000));
        putTimeControl(create);
        session.request(create, reply -> {
            if ("room".equals(reply.get("type")) || "room_exists".equals(reply.get("code"))) {
                joinNamed(room, 0);
            } else {
                session.fail("cannot create the room " + room + ": " + reply.get("message"));
            }
        });
    }

    /** The server seated us (or let us watch): the reply to join, a seek that paired at once, or a push. */
    void joined(Map<String, Object> msg) {
        currentRoom = String.valueOf(msg.get("room"));
        seeking = false;
        Map<?, ?> settings = msg.get("settings") instanceof Map
                ? (Map<?, ?>) msg.get("settings") : new LinkedHashMap<>();
        roomFinished = "finished".equals(settings.get("status"));
        if (session.spectator) {
            Log.info(session.name, "watching " + currentRoom);
            return;
        }
        Object tournament = settings.get("tournament");
        tournamentRoom = tournament != null && msg.get("seat") != null;
        if (tournamentRoom) {
            tournamentSeat(String.valueOf(tournament), settings);
            return;
        }
        List<?> seats = settings.get("seats") instanceof List ? (List<?>) settings.get("seats") : null;
        if (target != null && seats != null && seats.contains(null)) {
            Log.info(session.name, "waiting in " + currentRoom + " for a second player");
        }
    }

    private void tournamentSeat(String tournament, Map<?, ?> settings) {
        if (entry == null && !session.settings.gamesSet) {
            // an entrant the server seats: it plays every game of the event, as with PLYHALL_TOURNAMENT (stopping
            // after one game left the next, already started, to be lost on time as a game played)
            entry = new TournamentEntry(session, tournament);
            adopted = true;
            entry.watch();
            Log.warn(session.name, "the server seated " + session.wireName + " in " + currentRoom + ", a game of the "
                    + "tournament " + tournament + " (" + session.wireName + " is one of its entrants): the bot plays "
                    + "every game of it, then stops (PLYHALL_TOURNAMENT=" + tournament + " says so from the start; "
                    + "PLYHALL_GAMES=N stops after N games)");
        } else if (entry == null && !saidVariable) {
            saidVariable = true;
            Log.warn(session.name, "the server seated " + session.wireName + " in " + currentRoom + ", a game of the "
                    + "tournament " + tournament + " (" + session.wireName + " is one of its entrants): the bot plays "
                    + "it. To play every game of the event, run the bot with PLYHALL_TOURNAMENT=" + tournament
                    + " (or java -Dplyhall.tournament=" + tournament + ")");
        }
        List<?> seats = settings.get("seats") instanceof List ? (List<?>) settings.get("seats") : null;
        boolean waiting = seats != null && seats.contains(null);
        Log.info(session.name, "seated in " + currentRoom + " for the tournament "
                + (entry != null && entry.isThis(tournament) ? entry.label() : tournament)
                + (waiting ? "; waiting for the opponent" : ""));
    }

    /** The tournament is over ({@code status}: finished or cancelled): the program ends once no game runs. */
    void eventOver(TournamentEntry event, String status) {
        if (inGame()) {
            return; // afterGame ends the program after this game
        }
        leaveRoom();
        session.finish(0, "the tournament " + event.label() + " is " + status + " (" + played() + "); done", true);
    }

    private String played() {
        return gamesDone == 1 ? "1 game played here" : gamesDone + " games played here";
    }

    // ----- between games -----

    /** A game ended: end the program after the last game, else wait for the next one or find it. */
    void afterGame(Map<String, Object> over) {
        gamesDone++;
        int wanted = adopted ? 0 : session.settings.games;
        if (tournamentRoom) {
            afterTournamentGame(wanted);
            return;
        }
        if (wanted > 0 && gamesDone >= wanted) {
            leaveRoom(); // frees the seat at once (sent before the connection closes)
            session.finish(0, gamesDone == 1 ? "done (one game played; PLYHALL_GAMES sets how many)"
                    : "done (" + gamesDone + " games played)", true);
            return;
        }
        if (Boolean.TRUE.equals(over.get("next_game"))) {
            Log.info(session.name, "the next game of the series follows in " + over.get("room"));
            return;
        }
        if (session.spectator) {
            session.finish(0, "the room has no more games to watch", true);
            return;
        }
        leaveRoom();
        if (!idle) {
            go(target);
        }
    }

    /** A tournament game ended: the finished room is left, and the bot waits to be seated for the next. */
    private void afterTournamentGame(int wanted) {
        tournamentRoom = false;
        leaveRoom();
        if (wanted > 0 && gamesDone >= wanted) {
            session.finish(0, "done (" + played() + "; PLYHALL_GAMES=" + wanted + ")", true);
        } else if (entry != null && entry.over()) {
            session.finish(0, "the tournament " + entry.label() + " is over (" + played() + "); done", true);
        } else {
            Log.info(session.name, "waiting to be seated for the next game"
                    + (entry != null ? " of the tournament " + entry.label() : ""));
        }
    }

    /** The connection broke: seeks die with it. */
    void disconnected() {
        wasSeeking = seeking;
        seeking = false;
    }

    /** Logged in again after a broken connection; {@code held}: the rooms where the server kept our seat. */
    void reconnected(List<?> held) {
        if (entry != null) {
            entry.watch(); // the watch died with the old connection
        }
        if (currentRoom != null && containsIgnoreCase(held, currentRoom)) {
            return; // joined and game_start follow: GameFeed catches up
        }
        if (session.feed.running()) {
            session.feed.abandon("the game in " + currentRoom + " ended while the connection was down");
            currentRoom = null;
            Map<String, Object> over = new LinkedHashMap<>();
            over.put("next_game", false);
            afterGame(over);
            return;
        }
        currentRoom = null;
        if (started && session.player != null && !idle && (wasSeeking || target != null)) {
            go(target);
        }
    }

    private static boolean containsIgnoreCase(List<?> names, String name) {
        for (Object item : names) {
            if (name.equalsIgnoreCase(String.valueOf(item))) {
                return true;
            }
        }
        return false;
    }

    private void putTimeControl(Map<String, Object> request) {
        if (session.settings.perMove != null) {
            Map<String, Object> control = new LinkedHashMap<>();
            control.put("per_move", session.settings.perMove);
            request.put("time_control", control);
        }
    }

    private static Map<String, Object> message(String type) {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("type", type);
        return message;
    }
}
