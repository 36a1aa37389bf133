package plyhall.cosc322;

import sfs2x.client.entities.Room;

/** A {@link Room} of a room list: a name and what the server said about it when the list was made. */
public final class CourseRoom implements Room {

    private final int id;
    private final String name;
    private final int players;
    private final int spectators;
    private final boolean exists;

    /** A room entry; {@code exists}: the server has a room of that name. */
    public CourseRoom(int id, String name, int players, int spectators, boolean exists) {
        this.id = id;
        this.name = name;
        this.players = players;
        this.spectators = spectators;
        this.exists = exists;
    }

    @Override
    public int getId() {
        return id;
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public String getGroupId() {
        return "default";
    }

    @Override
    public boolean isGame() {
        return true;
    }

    @Override
    public int getUserCount() {
        return players;
    }

    @Override
    public int getMaxUsers() {
        return 2;
    }

    @Override
    public int getSpectatorCount() {
        return spectators;
    }

    /** True when the server had a room of this name when the list was made (joining the others creates them). */
    public boolean exists() {
        return exists;
    }

    @Override
    public String toString() {
        return "[Room: " + name + ", Id: " + id + ", players: " + players + "/2" + (exists ? "" : ", new") + "]";
    }
}
