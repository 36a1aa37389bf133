package plyhall.cosc322;

/**
 * The library's own messages: one line each on standard error, marked {@code [plyhall]} and the player's
 * name, so that they stand apart from what the bot prints on standard output.
 */
public final class Log {

    private Log() {
    }

    /** Something the person running the bot may want to know (waiting, game start, result). */
    public static void info(String who, String text) {
        System.err.println(prefix(who) + text);
    }

    /** Something went wrong but the library carries on. */
    public static void warn(String who, String text) {
        System.err.println(prefix(who) + "warning: " + text);
    }

    /** Something that stops this player. */
    public static void error(String who, String text) {
        System.err.println(prefix(who) + "error: " + text);
    }

    /** An exception thrown by the bot's own code, with its stack trace. */
    public static void bug(String who, String where, Throwable error) {
        System.err.println(prefix(who) + "the bot's " + where + " threw " + error);
        error.printStackTrace();
    }

    private static String prefix(String who) {
        return who == null ? "[plyhall] " : "[plyhall] " + who + ": ";
    }
}
