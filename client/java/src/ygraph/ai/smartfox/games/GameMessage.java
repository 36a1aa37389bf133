package ygraph.ai.smartfox.games;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The types of the game messages a {@link GamePlayer} gets in {@code handleGameMessage(messageType, msgDetails)},
 * as in the COSC 322 course client. On Plyhall a player gets, for each game: {@link #GAME_STATE_BOARD} (the
 * board), then {@link #GAME_ACTION_START} (who plays black and white), then one {@link #GAME_ACTION_MOVE} for
 * each of the opponent's moves. No message ends a game.
 */
public class GameMessage {

    /** The game starts: details {@code player-black}, {@code player-white} (user names) and {@code room.name}. */
    public static final String GAME_ACTION_START = "cosc322.game-action.start";

    /**
     * The opponent moved: details {@code queen-position-current}, {@code queen-position-next} and
     * {@code arrow-position}, each an {@code ArrayList<Integer>} {@code [row, col]} (1 to 10, row 1 at the bottom).
     */
    public static final String GAME_ACTION_MOVE = "cosc322.game-action.move";

    /**
     * The board: detail {@code game-state}, an {@code ArrayList<Integer>} of 121 entries, index
     * {@code row * 11 + col} (rows and columns 1 to 10; row 0 and column 0 unused): 0 empty, 1 black queen,
     * 2 white queen, 3 arrow.
     */
    public static final String GAME_STATE_BOARD = "cosc322.game-state.board";

    /** A player joined a game (the course server's; Plyhall's library does not send it). */
    public static final String GAME_STATE_JOIN = "cosc322.game-state.join";

    /** A player left (the course server's; Plyhall's library does not send it). */
    public static final String GAME_STATE_PLAYER_LOST = "cosc322.game-state.userlost";

    /** A text message (the course server's; on Plyhall, chat lines go to {@code GamePlayer.handleMessage}). */
    public static final String GAME_TEXT_MESSAGE = "cosc322.game-state.textmessage";

    /** The message type of this object. */
    protected String messageType;

    /** The details set with {@code setMessageDetails} (in the course, an SFS object), by key, in order. */
    protected Map<String, Object> params = new LinkedHashMap<>();

    /** A message of no type (as in the course client, objects of this class are rarely needed). */
    public GameMessage() {
        this(null);
    }

    /** A message of the given type. */
    public GameMessage(String messageType) {
        this.messageType = messageType;
    }

    /** This message's type. */
    public String getMessageType() {
        return messageType;
    }

    /**
     * The details set so far, by key: for a move, what {@code GameClient.sendMoveMessage(Map)} takes. A copy;
     * {@code setMessageDetails} changes the message.
     */
    public Map<String, Object> getMessageDetails() {
        return new LinkedHashMap<>(params);
    }
}
