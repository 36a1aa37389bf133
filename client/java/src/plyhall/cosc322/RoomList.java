package plyhall.cosc322;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import sfs2x.client.entities.Room;

/**
 * The list {@code GameClient.getRoomList()} returns. Course bots often join the first room of the list, or
 * the second: so the first is where the library would go by itself (PLYHALL_ROOM, or the seek stand-in),
 * then come the server's Amazons rooms waiting for a player, then course lake names, at least two rooms in all.
 */
public final class RoomList {

    /** The name of the stand-in room: joining it seeks an opponent in the lobby. */
    public static final String SEEK_ROOM = "Any opponent (seek)";

    /** Room names of the course server, used to fill the list up. */
    private static final String[] LAKES = {"Okanagan Lake", "Kalamalka Lake", "Wood Lake", "Skaha Lake"};

    private static final int MINIMUM = 2;

    private RoomList() {
    }

    /** The list before the server's rooms are known. */
    public static List<Room> initial(String room) {
        return build(room, Collections.emptyList());
    }

    /**
     * The list: {@code room} (or the seek stand-in when null) first, then the rooms of the server listing
     * {@code summaries} (room summaries of a {@code rooms} message) that wait for a player, then lake names.
     */
    public static List<Room> build(String room, List<?> summaries) {
        List<Room> rooms = new ArrayList<>();
        Map<?, ?> own = find(summaries, room);
        rooms.add(new CourseRoom(0, room == null ? SEEK_ROOM : room, own == null ? 0 : seated(own),
                own == null ? 0 : spectators(own), own != null || room == null));
        for (Object item : summaries) {
            Map<?, ?> summary = (Map<?, ?>) item;
            String name = String.valueOf(summary.get("name"));
            if (contains(rooms, name) || !"amazons".equals(summary.get("game"))) {
                continue;
            }
            if ("waiting".equals(summary.get("status")) && seated(summary) < 2) {
                rooms.add(new CourseRoom(rooms.size(), name, seated(summary), spectators(summary), true));
            }
        }
        for (String lake : LAKES) {
            if (rooms.size() >= MINIMUM) {
                break;
            }
            if (!contains(rooms, lake)) {
                rooms.add(new CourseRoom(rooms.size(), lake, 0, 0, find(summaries, lake) != null));
            }
        }
        return Collections.unmodifiableList(rooms);
    }

    private static Map<?, ?> find(List<?> summaries, String name) {
        if (name == null) {
            return null;
        }
        for (Object item : summaries) {
            Map<?, ?> summary = (Map<?, ?>) item;
            if (name.equalsIgnoreCase(String.valueOf(summary.get("name")))) {
                return summary;
            }
        }
        return null;
    }

    private static boolean contains(List<Room> rooms, String name) {
        for (Room room : rooms) {
            if (room.getName().equalsIgnoreCase(name)) {
                return true;
            }
        }
        return false;
    }

    private static int seated(Map<?, ?> summary) {
        int count = 0;
        Object seats = summary.get("seats");
        if (seats instanceof List) {
            for (Object seat : (List<?>) seats) {
                if (seat != null) {
                    count++;
                }
            }
        }
        return count;
    }

    private static int spectators(Map<?, ?> summary) {
        Object value = summary.get("spectators");
        return value instanceof Number ? ((Number) value).intValue() : 0;
    }
}
