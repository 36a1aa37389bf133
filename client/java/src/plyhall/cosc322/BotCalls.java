package plyhall.cosc322;

import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The library's calls into the bot, and what happens when one never returns.
 *
 * <p>The bot's {@code onLogin} and {@code handleGameMessage} run on the session's events thread, one at a time.
 * A bot that hangs in its own search never returns from {@code handleGameMessage}: the events thread is stuck,
 * so the library can neither end the game nor go on to the next one, and the program would hang for ever. So the
 * connection's reader (another thread) looks at each message as it arrives: when the game the bot is stuck in is
 * over, the program ends, with exit code 3 and a line saying why. When the bot lost that game on time it is frozen
 * beyond doubt, and the program ends {@value #AFTER_TIMEOUT_MS} ms later; when the game ended otherwise (the
 * opponent resigned while the bot thought, say) the bot gets {@value #AFTER_GAME_MS} ms more to return.
 */
final class BotCalls {

    /** The program's exit code when it ends a frozen bot. */
    static final int FROZEN_EXIT = 3;
    static final long AFTER_TIMEOUT_MS = 2_000;
    static final long AFTER_GAME_MS = 60_000;

    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "plyhall-frozen-bot-watch");
        thread.setDaemon(true);
        return thread;
    });

    private final Session session;
    private final AtomicLong counter = new AtomicLong();
    /** The number of the call running now, 0 when the bot is not being called. */
    private volatile long current;
    private volatile long startedNanos;
    private volatile String where = "";

    BotCalls(Session session) {
        this.session = session;
    }

    /** Runs one call into the bot ({@code where}: its name, for messages), on the events thread. */
    void run(String where, Runnable call) {
        long number = counter.incrementAndGet();
        this.where = where;
        startedNanos = System.nanoTime();
        current = number;
        try {
            call.run();
        } finally {
            current = 0;
        }
    }

    /** A message came (on the connection's reader thread, before the events thread sees it). */
    void arrived(String text) {
        long call = current;
        if (call == 0 || !text.contains("game_over")) {
            return;
        }
        Map<String, Object> msg;
        try {
            msg = Json.parseObject(text);
        } catch (IllegalArgumentException e) {
            return;
        }
        CourseGame game = session.feed.current();
        if (!"game_over".equals(msg.get("type")) || game == null || !game.room.equals(msg.get("room"))) {
            return;
        }
        Object winner = msg.get("winner");
        String reason = String.valueOf(msg.get("reason"));
        boolean lostOnTime = game.seat != null && winner != null && Json.toInt(winner) != game.seat
                && reason.contains("ran out of time");
        long delay = lostOnTime ? AFTER_TIMEOUT_MS : AFTER_GAME_MS;
        TIMER.schedule(() -> check(call, game, reason), delay, TimeUnit.MILLISECONDS);
    }

    private void check(long call, CourseGame game, String reason) {
        if (current != call) {
            return; // the bot returned meanwhile
        }
        long seconds = (System.nanoTime() - startedNanos) / 1_000_000_000L;
        Log.error(session.name, "the bot has been inside its " + where + " for " + seconds + " s, and its game in "
                + game.room + " is over (" + reason + "): a bot that never returns cannot play on, so the program "
                + "ends (exit code " + FROZEN_EXIT + ")"
                + (session.settings.tournament != null ? ". plyhall cosc322 entrant runs a fresh process for each "
                        + "game of a tournament" : ""));
        Lifecycle.halt(FROZEN_EXIT);
    }
}
