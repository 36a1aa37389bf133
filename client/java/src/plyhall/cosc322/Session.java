package plyhall.cosc322;

import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import sfs2x.client.entities.Room;
import ygraph.ai.smartfox.games.GamePlayer;

/**
 * One player's connection to a Plyhall server: what a course {@code GameClient} is underneath.
 *
 * <p>Everything that happens runs on one thread of the session's own, the <em>events thread</em>: the
 * server's messages in the order they came, the calls to the bot ({@code onLogin}, {@code handleGameMessage}),
 * timers and reconnecting. The bot may call in from any thread: moves are sent at once, from the calling
 * thread; everything else is handed to the events thread. The events thread is not a daemon thread: it keeps
 * Java running while the player plays, as the course client did.
 *
 * <p>The life of a session: connect, log in ({@code coords: "cosc322"}), list the rooms, call the bot's
 * {@code onLogin}, then find a game ({@link Seating}) and follow it ({@link GameFeed}). A lost connection
 * is opened again, with growing pauses, and the login resumes the seat. A connection counts as lost when the JDK
 * says so, and also when nothing at all has come through it for a while ({@link #watch}): a link that died
 * without a word (see {@link WebSocketLink}) would otherwise leave the player waiting for ever. Internal: not
 * part of the course API.
 */
public final class Session {

    private static final String GAME = "amazons";
    private static final int NAME_IN_USE_TRIES = 8;
    private static final long MAX_RETRY_MS = 10_000;

    final String name;
    final String wireName;
    final GamePlayer player;
    final Settings settings;
    final boolean spectator;
    private final String secret;
    private final ScheduledExecutorService events;
    private final HttpClient http = WebSocketLink.newHttpClient();
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, Consumer<Map<String, Object>>> replies = new HashMap<>();
    private final Map<Long, String> moveIds = new ConcurrentHashMap<>();
    final Seating seating;
    final GameFeed feed;
    private final BotCalls calls = new BotCalls(this);

    private volatile WebSocketLink link;
    private volatile boolean closed;
    /** The server takes {@code game_no} on a move (its {@code welcome.features} says so). */
    volatile boolean gameNumbers;
    private volatile boolean loggedIn;
    private volatile List<Room> rooms;
    private volatile Consumer<List<Room>> roomsListener;
    private boolean ready;
    private final List<Map<String, Object>> early = new ArrayList<>();
    private String resume;
    private long retryMs = 1000;
    private int nameInUse;
    private int generation;

    /**
     * A session for {@code player} (null: log in only) under {@code name} (PLYHALL_NAME, when set, is the name
     * it logs in under); the secret is PLYHALL_SECRET if set, else {@code password} (if any). {@code spectator}:
     * watch the room of PLYHALL_ROOM instead of playing.
     */
    public Session(String name, String password, GamePlayer player, boolean spectator) {
        this.settings = Settings.load();
        this.name = name == null ? "" : name;
        this.wireName = Names.toWire(settings.name != null ? settings.name : this.name);
        this.player = player;
        this.spectator = spectator;
        String chosen = settings.secret != null ? settings.secret : password;
        this.secret = chosen == null || chosen.isEmpty() ? null : chosen;
        this.rooms = RoomList.initial(settings.room);
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "plyhall-events-" + wireName);
            thread.setDaemon(false);
            return thread;
        });
        // once the session has finished its timers are void (they would return at once): they must not keep the
        // events thread, and so Java, running until they are due
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.events = executor;
        this.seating = new Seating(this);
        this.feed = new GameFeed(this);
    }

    /** Starts connecting (in the background); {@code previous}: an earlier session of the same bot, closed first. */
    public void start(Session previous) {
        Lifecycle.started(this);
        String problem = settings.urlProblem();
        if (problem != null) {
            events.execute(() -> fail(problem));
            return;
        }
        if (settings.name != null && !settings.name.equals(name)) {
            Log.info(name, "PLYHALL_NAME: logging in as " + wireName + " (the bot calls itself \"" + name + "\")");
        } else if (!wireName.equals(name)) {
            Log.info(name, "\"" + name + "\" is not a Plyhall name (letters, digits, _ . -, up to 32); logging in as "
                    + wireName);
        }
        events.execute(() -> {
            if (previous != null) {
                previous.supersede();
            }
            connect();
        });
    }

    // ----- what the bot calls (any thread) -----

    /** The rooms: see {@link RoomList}. */
    public List<Room> getRoomList() {
        return new ArrayList<>(rooms);
    }

    /** Calls {@code listener} with the room list once it is known after logging in (set it before start). */
    public void onRooms(Consumer<List<Room>> listener) {
        roomsListener = listener;
    }

    /** Play in {@code room} (see {@link Seating#join}). */
    public void joinRoom(String room) {
        seating.joinAsked = true;
        later(() -> seating.join(room));
    }

    /** Leave the current room, or stop seeking; the player then waits for {@code joinRoom}. */
    public void leaveCurrentRoom() {
        later(seating::leave);
    }

    /** Send a move: the course's three squares. */
    public void sendMove(List<?> queen, List<?> next, List<?> arrow) {
        feed.sendMove(queen, next, arrow);
    }

    /** Send a chat line to the current room. */
    public void sendText(String text) {
        later(() -> seating.chat(text));
    }

    /** Log out: close the connection; the player plays no more. */
    public void logout() {
        later(() -> finish(0, "logged out", false));
    }

    /** True once the first login succeeded. */
    public boolean loggedIn() {
        return loggedIn;
    }

    // ----- plumbing for Seating and GameFeed -----

    /** Runs {@code task} on the events thread. */
    void later(Runnable task) {
        try {
            events.execute(guard(task));
        } catch (RejectedExecutionException e) {
            // the session has finished: nothing more happens
        }
    }

    /** Runs {@code task} on the events thread after {@code millis}. */
    void after(long millis, Runnable task) {
        try {
            events.schedule(guard(task), millis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // the session has finished: nothing more happens
        }
    }

    private Runnable guard(Runnable task) {
        return () -> {
            if (closed) {
                return;
            }
            try {
                task.run();
            } catch (RuntimeException e) {
                Log.warn(name, "internal error: " + e);
                e.printStackTrace();
            }
        };
    }

    /** Sends a request and calls {@code reply} (on the events thread) with the answer: a reply or an error. */
    void request(Map<String, Object> message, Consumer<Map<String, Object>> reply) {
        long id = ids.incrementAndGet();
        message.put("id", id);
        replies.put(id, reply);
        if (!send(message)) {
            replies.remove(id);
        }
    }

    /** Sends a move (from any thread); {@code description}: the bot's squares, for the error log. */
    boolean sendMove(Map<String, Object> message, String description) {
        long id = ids.incrementAndGet();
        message.put("id", id);
        moveIds.put(id, description);
        return send(message);
    }

    /** Sends a message as it is (from any thread); false when the connection is down (the caller says so). */
    boolean send(Map<String, Object> message) {
        WebSocketLink current = link;
        if (current == null || closed) {
            return false;
        }
        String text = Json.write(message);
        if (settings.verbose) {
            Log.info(name, "-> " + text);
        }
        try {
            current.send(text);
            return true;
        } catch (IOException e) {
            if (settings.verbose) {
                Log.info(name, "could not send " + message.get("type") + ": " + e.getMessage());
            }
            return false; // the connection is breaking: the library logs in again, and catches up
        }
    }

    /** Calls the bot safely: an exception in the bot's code is shown and play goes on. */
    void callBot(String where, Runnable call) {
        if (closed) {
            return;
        }
        try {
            calls.run(where, call);
        } catch (RuntimeException | Error e) {
            Log.bug(name, where, e);
            if (where.startsWith("handleGameMessage") && feed.current() != null) {
                Log.info(name, "play goes on: if that was your bot's turn and it sent no move, its clock runs, and "
                        + "it loses on time unless it sends one (a move from another thread counts too)");
            }
        }
    }

    /** The display name for a Plyhall name: the bot's own name for the name it logged in under. */
    String display(Object wire) {
        return wireName.equals(wire) ? name : String.valueOf(wire);
    }

    /** Ends this player: closes the connection; {@code exit}: the program ends once no player is left. */
    void finish(int code, String why, boolean exit) {
        if (closed) {
            return;
        }
        if (why != null) {
            Log.info(name, why);
        }
        close(code, exit);
    }

    /** Closes the connection and the event thread, and tells the program this player is done. */
    private void close(int code, boolean exit) {
        closed = true;
        WebSocketLink current = link;
        link = null;
        if (current != null) {
            current.close();
        }
        events.shutdown();
        Lifecycle.finished(this, code, exit);
    }

    /** The exit code of a program whose login the server refused for good (a wrong secret, a name it does not take). */
    static final int LOGIN_REFUSED_EXIT = 4;

    /** Ends this player after a problem it cannot get past: the program ends with exit code 1. */
    void fail(String why) {
        fail(why, 1);
    }

    /** Ends this player after a problem it cannot get past: the program ends with exit code {@code code}. */
    void fail(String why, int code) {
        Log.error(name, why);
        finish(code, null, true);
    }

    /** Closes this session without a word: the bot connected again and a newer session replaces this one. */
    void supersede() {
        Log.info(name, "connect() was called again: the earlier connection is closed");
        close(0, false);
    }

    // ----- connecting and logging in (events thread) -----

    private void connect() {
        if (closed) {
            return;
        }
        final int mine = ++generation;
        WebSocketLink.Events handler = new WebSocketLink.Events() {
            @Override
            public void onMessage(String text) {
                calls.arrived(text); // a bot stuck in handleGameMessage is noticed here, off the events thread
                later(() -> received(mine, text));
            }

            @Override
            public void onClosed(int code, String reason) {
                later(() -> lost(mine, code, reason));
            }

            @Override
            public void onFailure(Throwable error) {
                later(() -> lost(mine, -1, String.valueOf(error.getMessage())));
            }
        };
        WebSocketLink opened;
        try {
            opened = WebSocketLink.open(http, settings.url, handler);
        } catch (ConnectException e) {
            retry(e.getMessage());
            return;
        } catch (IOException e) {
            fail(e.getMessage());
            return;
        }
        link = opened;
        watch(mine, opened);
        login();
    }

    /**
     * Watches the connection {@code watched} (of generation {@code mine}) for as long as it is the session's: once a
     * third of the silence setting has passed without anything from the server it pings the server, whose pong
     * should come back at once; when the whole of it has passed (by default 15 s), and a ping has gone unanswered
     * for a third of it, the connection is lost, as if the JDK had said so. It looks every sixth of the setting.
     * The bot's own code runs on this thread too: a bot that thinks for longer than the setting holds the looking
     * and the pinging up, never the reading, so when it returns the silence may be long, but no ping has gone
     * unanswered yet. One is sent then, and the connection is lost only if that one goes unanswered too.
     */
    private void watch(int mine, WebSocketLink watched) {
        watch(mine, watched, settings.silenceMs / 6);
    }

    private void watch(int mine, WebSocketLink watched, long delay) {
        after(delay, () -> {
            if (mine != generation || link != watched) {
                return; // lost, or replaced: the next connection has a watch of its own
            }
            long limit = settings.silenceMs;
            long silent = watched.silentMillis();
            long unanswered = watched.unansweredMillis();
            if (silent >= limit && unanswered >= limit / 3) {
                lost(mine, -1, "nothing came from the server for " + Math.round(silent / 1000.0) + " s");
                return;
            }
            if (silent >= limit / 3 && unanswered < 0) {
                watched.probe();
            }
            watch(mine, watched, limit / 6);
        });
    }

    private void retry(String why) {
        long delay = retryMs;
        retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
        Log.info(name, why + "; trying again in " + delay / 1000.0 + " s");
        after(delay, this::connect);
    }

    private void login() {
        Map<String, Object> login = new LinkedHashMap<>();
        login.put("type", "login");
        login.put("name", wireName);
        login.put("coords", "cosc322");
        login.put("client", Version.client());
        if (secret != null) {
            login.put("secret", secret);
        }
        if (resume != null) {
            login.put("resume", resume);
        }
        request(login, this::loginAnswered);
    }

    private void loginAnswered(Map<String, Object> reply) {
        if ("welcome".equals(reply.get("type"))) {
            welcome(reply);
            return;
        }
        String code = String.valueOf(reply.get("code"));
        String message = String.valueOf(reply.get("message"));
        Object retryAfter = reply.get("retry_after");
        double wait = retryAfter instanceof Number ? ((Number) retryAfter).doubleValue() : 2;
        if (code.equals("name_in_use") && ++nameInUse < NAME_IN_USE_TRIES) {
            Log.info(name, "the name " + wireName + " is in use right now; trying again in 1 s");
            after(1000, this::login);
        } else if (code.equals("throttled") || code.equals("busy")) {
            Log.info(name, message + "; trying again in " + Math.round(wait) + " s");
            after((long) (wait * 1000) + 100, this::login);
        } else if (code.equals("wrong_secret")) {
            // said once, for GameClient: the server's own sentence says the same for any client ("the name ... is
            // claimed; log in with its secret (or your resume token) ..."), and this library keeps the token itself
            String which = secret == null ? "a secret: give GameClient that password"
                    : "another secret: give GameClient the password it was first used with";
            fail("the server refused the login: the name " + wireName + " is claimed with " + which
                    + " (or set PLYHALL_SECRET to it), or choose another name", LOGIN_REFUSED_EXIT);
        } else {
            fail("the server refused the login: " + message, LOGIN_REFUSED_EXIT);
        }
    }

    private void welcome(Map<String, Object> msg) {
        boolean first = !ready; // onLogin not called yet
        loggedIn = true;
        nameInUse = 0;
        retryMs = 1000;
        resume = msg.get("resume") instanceof String ? (String) msg.get("resume") : null;
        // an older server refuses a field it does not know (and every move with it): game_no only where it says so
        gameNumbers = msg.get("features") instanceof List && ((List<?>) msg.get("features")).contains("game_no");
        List<?> held = msg.get("rooms") instanceof List ? (List<?>) msg.get("rooms") : new ArrayList<>();
        if (!first) {
            Log.info(name, "connected again");
            seating.reconnected(held);
            return;
        }
        Map<String, Object> list = new LinkedHashMap<>();
        list.put("type", "list_rooms");
        list.put("game", GAME);
        request(list, reply -> {
            if (reply.get("rooms") instanceof List) {
                rooms = RoomList.build(settings.room, (List<?>) reply.get("rooms"));
            }
            Consumer<List<Room>> listener = roomsListener;
            if (listener != null) {
                listener.accept(getRoomList()); // before onLogin, as the course client filled its room list
            }
            if (player != null) {
                callBot("onLogin()", player::onLogin);
            }
            ready = true;
            List<Map<String, Object>> waiting = new ArrayList<>(early);
            early.clear();
            for (Map<String, Object> message : waiting) {
                dispatch(message); // the seats the server kept for us: joined, and game_start if a game runs
            }
            seating.start();
        });
    }

    // ----- what the server says (events thread) -----

    private void received(int mine, String text) {
        if (mine != generation) {
            return;
        }
        if (settings.verbose) {
            Log.info(name, "<- " + text);
        }
        Map<String, Object> msg;
        try {
            msg = Json.parseObject(text);
        } catch (IllegalArgumentException e) {
            Log.warn(name, "ignoring a message that is not JSON: " + e.getMessage());
            return;
        }
        Object id = msg.get("id");
        if (id instanceof Long && replies.containsKey(id)) {
            replies.remove(id).accept(msg);
            return;
        }
        if (!ready) {
            early.add(msg); // e.g. the game_start of a resumed seat: the bot hears of it after onLogin
            return;
        }
        dispatch(msg);
    }

    private void dispatch(Map<String, Object> msg) {
        String type = String.valueOf(msg.get("type"));
        switch (type) {
            case "joined":
                seating.joined(msg);
                break;
            case "game_start":
                feed.gameStart(msg);
                break;
            case "moved":
                if (msg.get("id") != null) {
                    moveIds.remove(msg.get("id"));
                }
                feed.moved(msg);
                break;
            case "game_over":
                feed.gameOver(msg);
                seating.afterGame(msg);
                break;
            case "room_state": {
                Map<String, Object> over = feed.endedMeanwhile(msg);
                if (over != null) {
                    seating.afterGame(over);
                }
                break;
            }
            case "chat":
                feed.chat(msg);
                break;
            case "tournament":
                if (seating.entry != null && msg.get("tournament") instanceof Map) {
                    seating.entry.news((Map<?, ?>) msg.get("tournament"));
                }
                break;
            case "player_away":
                Log.info(name, msg.get("name") + " lost the connection; it has " + msg.get("grace")
                        + " s to come back");
                break;
            case "player_back":
                Log.info(name, msg.get("name") + " is back");
                break;
            case "error":
                error(msg);
                break;
            default:
                break; // seated, left, seeking, rooms, draw_offered, ...: nothing for a course bot
        }
    }

    private void error(Map<String, Object> msg) {
        String move = msg.get("id") == null ? null : moveIds.remove(msg.get("id"));
        String message = String.valueOf(msg.get("message"));
        if (move != null) {
            Log.error(name, "the server refused your move " + move + ": " + message);
        } else if ("in_tournament".equals(msg.get("code"))) {
            seating.seekWithdrawn(message); // a tournament was created with this bot among its entrants
        } else if ("server_shutdown".equals(msg.get("code"))) {
            Log.info(name, message); // the connection closes next, and the library logs in again
        } else {
            Log.warn(name, "the server says: " + message + " (" + msg.get("code") + ")");
        }
    }

    private void lost(int mine, int code, String reason) {
        if (mine != generation || closed) {
            return;
        }
        generation++;
        WebSocketLink broken = link;
        link = null;
        if (broken != null) {
            broken.abort();
        }
        replies.clear();
        if (code == 1000 && reason != null && reason.contains("another connection")) {
            fail(wireName + " logged in from another connection, which plays on: this one stops");
            return;
        }
        String why = code < 0 ? "the connection broke (" + reason + ")"
                : "the server closed the connection (" + code
                        + (reason == null || reason.isEmpty() ? "" : " " + reason) + ")";
        if (!loggedIn) {
            retry(why);
            return;
        }
        seating.disconnected();
        retry(why);
    }
}
