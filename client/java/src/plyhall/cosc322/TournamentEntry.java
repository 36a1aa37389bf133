package plyhall.cosc322;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A course bot as a tournament entrant (PLYHALL_TOURNAMENT, or {@code -Dplyhall.tournament}). All on the session's
 * events thread.
 *
 * <p>An entrant does nothing but log in: whenever it has a game due, the server opens a room and seats it there
 * ({@code joined}, then {@code game_start} once both entrants sit), and after each game it waits for the next.
 * So the library neither seeks nor joins: it follows the tournament ({@code watch_tournament}, waiting for it to
 * be created if need be), checks that the bot is one of its entrants, says where the event stands while the bot
 * waits, and ends the program once the event is over (or after PLYHALL_GAMES games, when that is set).
 */
final class TournamentEntry {

    private static final long CREATED_POLL_MS = 2000;
    private static final int MAX_LISTED = 30;

    private final Session session;
    /** The tournament's name or id, as the settings give it. */
    private final String wanted;
    /** Its id and name once the server has told us of it. */
    private String id;
    private String name;
    private boolean over;
    private boolean saidWaitingForCreation;
    private String said = "";

    TournamentEntry(Session session, String wanted) {
        this.session = session;
        this.wanted = wanted;
    }

    /** The event is over (finished or cancelled): no game of it will come. */
    boolean over() {
        return over;
    }

    /** The tournament's name for messages. */
    String label() {
        return name != null ? name : wanted;
    }

    /** True when {@code tournament} (an id or a name, e.g. a room summary's) is this entry's event. */
    boolean isThis(Object tournament) {
        if (tournament == null) {
            return false;
        }
        String text = String.valueOf(tournament);
        return text.equalsIgnoreCase(wanted) || text.equalsIgnoreCase(id) || text.equalsIgnoreCase(name);
    }

    /** Follow the tournament: its state now, and a push whenever it changes (again after a reconnect). */
    void watch() {
        Map<String, Object> watch = new LinkedHashMap<>();
        watch.put("type", "watch_tournament");
        watch.put("tournament", wanted);
        session.request(watch, reply -> {
            if ("tournament".equals(reply.get("type")) && reply.get("tournament") instanceof Map) {
                Map<?, ?> event = (Map<?, ?>) reply.get("tournament");
                if (check(event)) {
                    news(event);
                }
            } else if ("no_such_tournament".equals(reply.get("code"))) {
                if (!saidWaitingForCreation) {
                    saidWaitingForCreation = true;
                    Log.info(session.name, "waiting for the tournament " + wanted + " to be created (PLYHALL_TOURNAMENT="
                            + wanted + ")");
                }
                session.after(CREATED_POLL_MS, this::watch);
            } else {
                session.fail("cannot follow the tournament " + wanted + ": " + reply.get("message"));
            }
        });
    }

    /** Stops the program with one clear line when the bot cannot play in {@code event}; true when it can. */
    private boolean check(Map<?, ?> event) {
        id = String.valueOf(event.get("id"));
        name = String.valueOf(event.get("name"));
        if (!"amazons".equals(event.get("game"))) {
            session.fail("the tournament " + name + " plays " + event.get("game") + ", not Amazons: a COSC 322 bot "
                    + "cannot play in it; check PLYHALL_TOURNAMENT");
            return false;
        }
        List<?> entrants = event.get("entrants") instanceof List ? (List<?>) event.get("entrants") : List.of();
        if (!entrants.contains(session.wireName)) {
            StringBuilder listed = new StringBuilder();
            for (int i = 0; i < entrants.size() && i < MAX_LISTED; i++) {
                listed.append(i == 0 ? "" : ", ").append(entrants.get(i));
            }
            if (entrants.size() > MAX_LISTED) {
                listed.append(" ...");
            }
            session.fail(session.wireName + " is not an entrant of the tournament " + name + "; its entrants: "
                    + (entrants.isEmpty() ? "none" : listed) + ". Give the bot an entrant's user name, or check "
                    + "PLYHALL_TOURNAMENT");
            return false;
        }
        return true;
    }

    /** A {@code tournament} message (the reply to watch, or a push): note its end; say where it stands. */
    void news(Map<?, ?> event) {
        if (!isThis(event.get("id")) && !isThis(event.get("name"))) {
            return;
        }
        String status = String.valueOf(event.get("status"));
        if (status.equals("finished") || status.equals("cancelled")) {
            over = true;
            session.seating.eventOver(this, status);
            return;
        }
        if (session.seating.inGame()) {
            return;
        }
        Map<?, ?> progress = event.get("progress") instanceof Map ? (Map<?, ?>) event.get("progress") : Map.of();
        say("waiting to be seated in the tournament " + label() + " (" + status + ", " + progress.get("done")
                + " of " + progress.get("total") + " games played)");
    }

    private void say(String text) {
        if (!text.equals(said)) {
            said = text;
            Log.info(session.name, text);
        }
    }
}
