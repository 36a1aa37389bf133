package plyhall.cosc322;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * When the program ends. Course bots never end by themselves (their {@code main} returns at once, and the
 * course client kept Java running), so the library ends the program once every player in it is done: after
 * its games (PLYHALL_GAMES, one by default), or when it cannot play (a wrong secret, a full room). A player
 * that logs out by itself ends nothing: Java then stops when the bot's own threads end.
 */
public final class Lifecycle {

    /** How long the program waits before it exits, so that the bot's last prints reach the console. */
    private static final long EXIT_DELAY_MS = 300;

    private static final Set<Object> LIVE = Collections.newSetFromMap(new IdentityHashMap<>());
    private static int exitCode;

    private Lifecycle() {
    }

    /** A player starts. */
    public static synchronized void started(Object session) {
        LIVE.add(session);
    }

    /** Ends the program at once with {@code code} (a player that can never go on: a frozen bot). */
    public static void halt(int code) {
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    /**
     * A player is done; {@code exit}: the library decided the run is over, so the program ends (with the worst
     * exit code of its players) once no other player in it still plays.
     */
    public static synchronized void finished(Object session, int code, boolean exit) {
        if (!LIVE.remove(session)) {
            return;
        }
        exitCode = Math.max(exitCode, code);
        if (exit && LIVE.isEmpty()) {
            final int status = exitCode;
            Thread exiter = new Thread(() -> {
                try {
                    Thread.sleep(EXIT_DELAY_MS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                System.out.flush();
                System.err.flush();
                System.exit(status);
            }, "plyhall-exit");
            exiter.start();
        }
    }
}
