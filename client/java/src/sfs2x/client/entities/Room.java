package sfs2x.client.entities;

/**
 * A room, as {@code GameClient.getRoomList()} lists it (the course client's SmartFox type, reduced to what
 * course bots use). Pass {@link #getName()} to {@code GameClient.joinRoom(String)} to play there.
 *
 * <p>On Plyhall the first room of the list is where the library would take the bot by itself: the room named
 * by PLYHALL_ROOM, or, when none is set, a stand-in named {@code "Any opponent (seek)"} that finds an
 * opponent in the lobby. The rest are the server's Amazons rooms with a free seat, then course lake names
 * (joining one creates it), so that the list always holds at least two rooms.
 */
public interface Room {

    /** A number for the room, unique within one room list. */
    int getId();

    /** The room's name. */
    String getName();

    /** The room's group: always {@code "default"}. */
    String getGroupId();

    /** True: every room here is a game room. */
    boolean isGame();

    /** Players seated when the list was made (0 to 2). */
    int getUserCount();

    /** Seats in the room: 2. */
    int getMaxUsers();

    /** Spectators when the list was made. */
    int getSpectatorCount();
}
