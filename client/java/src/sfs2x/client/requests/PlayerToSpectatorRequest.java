package sfs2x.client.requests;

import sfs2x.client.entities.Room;

/**
 * The course client's SmartFox request to turn a player into a spectator. Plyhall has no such request and
 * nothing sends this object: it exists so that bots importing it compile. To watch a game on Plyhall, run
 * {@code ygraph.ai.smartfox.games.Spectator} with PLYHALL_ROOM set.
 */
public class PlayerToSpectatorRequest {

    private final Room room;

    /** A request for the current room. */
    public PlayerToSpectatorRequest() {
        this(null);
    }

    /** A request for {@code room}. */
    public PlayerToSpectatorRequest(Room room) {
        this.room = room;
    }

    /** The room, or null for the current one. */
    public Room getRoom() {
        return room;
    }
}
