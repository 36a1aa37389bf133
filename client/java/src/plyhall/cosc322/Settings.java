package plyhall.cosc322;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * Where and how a course bot plays: read once from Java system properties ({@code -Dplyhall.room=...})
 * or, when a property is not set, from environment variables ({@code PLYHALL_ROOM=...}).
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>property</th><th>variable</th><th>meaning</th></tr>
 * <tr><td>plyhall.url</td><td>PLYHALL_URL</td><td>server address (default ws://127.0.0.1:8765/ws)</td></tr>
 * <tr><td>plyhall.room</td><td>PLYHALL_ROOM</td><td>room to play in (created if missing); unset: seek</td></tr>
 * <tr><td>plyhall.name</td><td>PLYHALL_NAME</td><td>the name to log in under (default: the bot's user name)</td></tr>
 * <tr><td>plyhall.secret</td><td>PLYHALL_SECRET</td><td>secret of the name (default: the password)</td></tr>
 * <tr><td>plyhall.seek</td><td>PLYHALL_SEEK</td><td>true: always seek, even when the bot names a room</td></tr>
 * <tr><td>plyhall.tournament</td><td>PLYHALL_TOURNAMENT</td><td>a tournament to play every game of: the server
 *     seats the bot in each (no seek, no room)</td></tr>
 * <tr><td>plyhall.games</td><td>PLYHALL_GAMES</td><td>games to play, then exit (default 1; 0: play on; in a
 *     tournament, default 0: until the event ends)</td></tr>
 * <tr><td>plyhall.per_move</td><td>PLYHALL_PER_MOVE</td><td>seconds a move in seeks and new rooms</td></tr>
 * <tr><td>plyhall.gui</td><td>PLYHALL_GUI</td><td>auto (default), window, console or off</td></tr>
 * <tr><td>plyhall.verbose</td><td>PLYHALL_VERBOSE</td><td>true: log every message on the wire</td></tr>
 * <tr><td>plyhall.silence</td><td>PLYHALL_SILENCE</td><td>seconds the connection may bring nothing at all (the
 *     server pings every 20 s; the library pings it after a third of this) before the library counts it as lost
 *     and connects again (default 30)</td></tr>
 * </table>
 */
public final class Settings {

    /** The server address used when none is given: {@code plyhall serve}'s default. */
    public static final String DEFAULT_URL = "ws://127.0.0.1:8765/ws";

    /**
     * Seconds without anything from the server before a connection counts as lost, by default: the library pings
     * the server after a third of this (and the pong comes at once), so a live connection is never quiet for much
     * more than a third as long; and a bot whose connection died without a word is back within the server's
     * default grace (30 s) to keep its seat.
     */
    public static final double DEFAULT_SILENCE = 15;

    /** The server's WebSocket address. */
    public final String url;
    /** The room to play in, or null to seek an opponent. */
    public final String room;
    /** The name to log in under, whatever the bot's code says, or null (then the bot's user name is used). */
    public final String name;
    /** The secret from the settings, or null (then the bot's password is used). */
    public final String secret;
    /** Seek even when the bot names a room in {@code joinRoom}. */
    public final boolean seek;
    /** The tournament this bot is an entrant of (its name or id), or null. */
    public final String tournament;
    /** Games to play before the library ends the program; 0 plays on (in a tournament: until it ends). */
    public final int games;
    /** PLYHALL_GAMES (or plyhall.games) was set: else a bot the server seats in a tournament plays all of it. */
    public final boolean gamesSet;
    /** Seconds per move for seeks and the rooms this library creates, or null for the server's default. */
    public final Double perMove;
    /** The board display: auto, window, console or off. */
    public final String gui;
    /** Log every message sent and received. */
    public final boolean verbose;
    /** Milliseconds without anything from the server after which the connection counts as lost. */
    public final long silenceMs;

    private Settings(String url, String room, String name, String secret, boolean seek, String tournament, int games,
                     Double perMove, String gui, boolean verbose, long silenceMs) {
        this.url = url;
        this.room = room;
        this.name = name;
        this.secret = secret;
        this.seek = seek;
        this.tournament = tournament;
        this.games = games;
        this.gamesSet = lookup("games") != null;
        this.perMove = perMove;
        this.gui = gui;
        this.verbose = verbose;
        this.silenceMs = silenceMs;
    }

    /** The settings of this program, from system properties and the environment. */
    public static Settings load() {
        String url = lookup("url");
        String tournament = lookup("tournament");
        return new Settings(url == null ? DEFAULT_URL : url, lookup("room"), lookup("name"), lookup("secret"),
                flag("seek"), tournament, games(tournament == null ? 1 : 0), perMove(), gui(), flag("verbose"),
                silenceMs());
    }

    /** The value of {@code plyhall.KEY}, else of {@code PLYHALL_KEY}; null when neither is set (or blank). */
    public static String lookup(String key) {
        String value = System.getProperty("plyhall." + key);
        if (value == null || value.trim().isEmpty()) {
            value = System.getenv("PLYHALL_" + key.toUpperCase());
        }
        return value == null || value.trim().isEmpty() ? null : value.trim();
    }

    /** What is wrong with the server address, or null when it looks like ws://HOST:PORT/ws. */
    public String urlProblem() {
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            return url + " is not a valid address; use ws://HOST:PORT/ws (e.g. " + DEFAULT_URL + ")";
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase();
        if (scheme.equals("http") || scheme.equals("https")) {
            String path = uri.getRawPath() == null ? "" : uri.getRawPath().replaceAll("/+$", "");
            String endpoint = path.endsWith("/ws") ? path : path + "/ws";  // beside the page, under a proxy's prefix
            String ws = (scheme.equals("http") ? "ws" : "wss") + "://" + uri.getRawAuthority() + endpoint;
            return url + " is a web address; bots connect to the WebSocket address: use " + ws;
        }
        if (!scheme.equals("ws") && !scheme.equals("wss") || uri.getHost() == null) {
            return url + " has no ws:// scheme; use ws://HOST:PORT/ws (e.g. " + DEFAULT_URL + ")";
        }
        return null;
    }

    private static boolean flag(String key) {
        String value = lookup(key);
        return value != null && (value.equalsIgnoreCase("true") || value.equals("1") || value.equalsIgnoreCase("yes")
                || value.equalsIgnoreCase("on"));
    }

    private static int games(int fallback) {
        String value = lookup("games");
        if (value == null) {
            return fallback;
        }
        try {
            int games = Integer.parseInt(value);
            if (games >= 0) {
                return games;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        Log.warn(null, "PLYHALL_GAMES=" + value + " is not a whole number of games (0 plays on); playing "
                + (fallback == 0 ? "on" : String.valueOf(fallback)));
        return fallback;
    }

    private static Double perMove() {
        String value = lookup("per_move");
        if (value == null) {
            return null;
        }
        try {
            double seconds = Double.parseDouble(value);
            if (seconds > 0 && !Double.isInfinite(seconds)) {
                return seconds;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        Log.warn(null, "PLYHALL_PER_MOVE=" + value + " is not a number of seconds; using the server's time control");
        return null;
    }

    private static long silenceMs() {
        String value = lookup("silence");
        if (value != null) {
            try {
                double seconds = Double.parseDouble(value);
                if (seconds >= 3 && seconds <= 86_400) {
                    return Math.round(seconds * 1000);
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            Log.warn(null, "PLYHALL_SILENCE=" + value + " is not a number of seconds from 3 to 86400; using "
                    + Math.round(DEFAULT_SILENCE));
        }
        return Math.round(DEFAULT_SILENCE * 1000);
    }

    private static String gui() {
        String value = lookup("gui");
        if (value == null) {
            return "auto";
        }
        value = value.toLowerCase();
        if (value.equals("auto") || value.equals("window") || value.equals("console") || value.equals("off")) {
            return value;
        }
        Log.warn(null, "PLYHALL_GUI=" + value + " is not one of auto, window, console, off; using auto");
        return "auto";
    }
}
