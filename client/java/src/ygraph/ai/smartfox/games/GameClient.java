package ygraph.ai.smartfox.games;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

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
        this.userName = userName;
        this.session = new Session(userName, passwd, delegate, spectator);
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
