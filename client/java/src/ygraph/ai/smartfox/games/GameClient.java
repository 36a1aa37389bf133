package ygraph.ai.smartfox.games;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import plyhall.cosc322.Log;
import plyhall.cosc322.Session;
import sfs2x.client.entities.Room;

/**
 * The connection of a {@link GamePlayer} to the game server, with the COSC 322 course client's API, playing on
 * a Plyhall server. Creating one starts logging in, in the background: the constructor returns at once, and
 * the player's {@code onLogin()} is called later, from the client's own thread.
 *
 * <p>The user name is the player's name on Plyhall. The password is the name's <em>secret</em> (unless
 * PLYHALL_SECRET is set): the first login claims the name with it, and from then on only that password logs in
 * under the name on that server. The server, the room and more come from system properties or environment
 * variables: see docs/COSC322.md.
 */
public class GameClient {

    /** The client of each player: a player that connects again replaces its earlier client. */
    private static final Map<GamePlayer, GameClient> CLIENTS = Collections.synchronizedMap(new IdentityHashMap<>());

    private final String userName;
    private final Session session;

    /**
     * The rooms, as {@link #getRoomList()} returns them: filled in once the client has logged in (before the
     * player's {@code onLogin}), as in the course client, whose public field this is.
     */
    public volatile List<Room> rooms;

    /** Logs {@code userName} in with {@code passwd} and plays for {@code delegate}. */
    public GameClient(String userName, String passwd, GamePlayer delegate) {
        this(userName, passwd, delegate, false);
    }

    /** Logs {@code userName} in with {@code passwd}, for no player: it joins nothing by itself. */
    public GameClient(String userName, String passwd) {
        this(userName, passwd, null, false);
    }

    /** The client of a player, or of a spectator ({@link Spectator}). */
    GameClient(String userName, String passwd, GamePlayer delegate, boolean spectator) {
        this(userName, passwd, delegate, spectator, null);
    }

    private GameClient(String userName, String passwd, GamePlayer delegate, boolean spectator,
                       Consumer<List<Room>> listed) {
        this.userName = userName;
        this.session = new Session(userName, passwd, delegate, spectator);
        this.rooms = session.getRoomList();
        session.onRooms(list -> {
            this.rooms = list;
            if (listed != null) {
                listed.accept(list);
            }
        });
        GameClient previous = delegate == null ? null : CLIENTS.put(delegate, this);
        session.start(previous == null ? null : previous.session);
    }

    /**
     * The rooms, at least two: the first is where the library would go by itself (the room of PLYHALL_ROOM,
     * or a stand-in that seeks an opponent), then the server's Amazons rooms waiting for a player, then course
     * lake names (joining one creates it).
     */
    public List<Room> getRoomList() {
        return new ArrayList<>(session.getRoomList());
    }

    /**
     * {@code java -cp plyhall-cosc322.jar ygraph.ai.smartfox.games.GameClient NAME [PASSWORD]}: logs in to the
     * server of PLYHALL_URL, prints its room list (one room a line: name, players, spectators) and logs out; a
     * quick check that the server is there and the name's password is right. Exit code 0; 4 when the server
     * refuses the login (a wrong password), 1 when it cannot log in otherwise, 2 without a name.
     */
    public static void main(String[] args) {
        if (args.length < 1 || args.length > 2 || args[0].trim().isEmpty()) {
            System.err.println("usage: java -cp plyhall-cosc322.jar ygraph.ai.smartfox.games.GameClient NAME "
                    + "[PASSWORD]  (the server: PLYHALL_URL, default " + plyhall.cosc322.Settings.DEFAULT_URL + ")");
            System.exit(2);
        }
        CountDownLatch listed = new CountDownLatch(1);
        GameClient client = new GameClient(args[0], args.length > 1 ? args[1] : "", null, false,
                list -> listed.countDown());
        try {
            if (!listed.await(60, TimeUnit.SECONDS)) {
                System.err.println("no answer from the server in 60 s");
                System.exit(1);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            System.exit(1);
        }
        for (Room room : client.rooms) {
            System.out.println(room.getName() + " (" + room.getUserCount() + " players, " + room.getSpectatorCount()
                    + " spectators)");
        }
        System.out.flush();
        System.exit(0);
    }

    /** The user name given to the constructor, exactly (compare it with {@code player-black}). */
    public String getUserName() {
        return userName;
    }

    /**
     * Plays in the room {@code roomName}, creating it if it does not exist (an Amazons room). PLYHALL_ROOM, when
     * set, wins over the name; the name of the first room of {@link #getRoomList()} without PLYHALL_ROOM seeks
     * an opponent in the lobby. Leaves the current room first.
     */
    public void joinRoom(String roomName) {
        session.joinRoom(roomName);
    }

    /** Leaves the current room (a running game is lost) or stops seeking; nothing more happens until joinRoom. */
    public void leaveCurrentRoom() {
        session.leaveCurrentRoom();
    }

    /**
     * Sends a move: the queen on {@code queenCurrent} moves to {@code queenNext} and shoots an arrow to
     * {@code arrow}; each a {@code [row, col]} list, 1 to 10, row 1 at the bottom. May be called from any
     * thread; the move is sent at once. A move the server refuses is logged on standard error with the reason.
     */
    public void sendMoveMessage(ArrayList<Integer> queenCurrent, ArrayList<Integer> queenNext,
                                ArrayList<Integer> arrow) {
        session.sendMove(queenCurrent, queenNext, arrow);
    }

    /**
     * Sends a move given as message details: {@code queen-position-current}, {@code queen-position-next} and
     * {@code arrow-position}, each a {@code [row, col]} list (the keys of {@code AmazonsGameMessage}).
     */
    public void sendMoveMessage(Map<String, Object> msgDetails) {
        if (msgDetails == null) {
            Log.error(userName, "sendMoveMessage(null): no move given");
            return;
        }
        session.sendMove(square(msgDetails, "queen-position-current"), square(msgDetails, "queen-position-next"),
                square(msgDetails, "arrow-position"));
    }

    /** Sends a text message to the players and spectators of the current room (a chat line). */
    public void sendTextMessage(String msg) {
        session.sendText(msg);
    }

    /** Logs out: the connection closes and the player plays no more. */
    public void logout() {
        session.logout();
    }

    private List<?> square(Map<String, Object> details, String key) {
        Object value = details.get(key);
        if (value instanceof List) {
            return (List<?>) value;
        }
        if (value instanceof int[]) {
            int[] pair = (int[]) value;
            List<Integer> list = new ArrayList<>();
            for (int v : pair) {
                list.add(v);
            }
            return list;
        }
        return null; // reported by the session: "... must be a list [row, col]"
    }
}
