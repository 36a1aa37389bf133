package ygraph.ai.smartfox.games.amazons;

import java.util.ArrayList;
import java.util.Collection;

import ygraph.ai.smartfox.games.GameMessage;

/** The keys of the Amazons game messages' details (see {@link GameMessage} for the message types). */
public class AmazonsGameMessage extends GameMessage {

    /** The square the queen moves from: {@code ArrayList<Integer>} {@code [row, col]}. */
    public static final String QUEEN_POS_CURR = "queen-position-current";

    /** The square the queen moves to: {@code ArrayList<Integer>} {@code [row, col]}. */
    public static final String QUEEN_POS_NEXT = "queen-position-next";

    /** The same key as {@link #QUEEN_POS_NEXT}, under the other spelling course bots use. */
    public static final String Queen_POS_NEXT = "queen-position-next";

    /** The square the arrow lands on: {@code ArrayList<Integer>} {@code [row, col]}. */
    public static final String ARROW_POS = "arrow-position";

    /** The board in a {@code cosc322.game-state.board} message: {@code ArrayList<Integer>} of 121 entries. */
    public static final String GAME_STATE = "game-state";

    /** The user name of the player with the black queens (who moves first), in the start message. */
    public static final String PLAYER_BLACK = "player-black";

    /** The user name of the player with the white queens, in the start message. */
    public static final String PLAYER_WHITE = "player-white";

    /** A message of no type. */
    public AmazonsGameMessage() {
        super();
    }

    /** A message of the given type. */
    public AmazonsGameMessage(String messageType) {
        super(messageType);
    }

    /**
     * Sets one detail. In a move message ({@code GAME_ACTION_MOVE}, and a message of no type) the value is a square,
     * a collection of two integers {@code [row, col]}; in other messages, a string. Anything else is refused with
     * an {@code IllegalArgumentException} saying what the key takes (the course client threw a
     * {@code ClassCastException}).
     */
    public void setMessageDetails(String key, Object value) {
        if (key == null) {
            throw new IllegalArgumentException("setMessageDetails: the key is null; use QUEEN_POS_CURR, QUEEN_POS_NEXT "
                    + "or ARROW_POS");
        }
        if (isMove()) {
            params.put(key, square(key, value));
        } else if (value instanceof String) {
            params.put(key, value);
        } else {
            throw new IllegalArgumentException("setMessageDetails(\"" + key + "\", " + value + "): a " + messageType
                    + " message takes strings");
        }
    }

    /**
     * Makes the message ready to send, as the course's {@code compile()} built its server request: a move message
     * must hold the three squares ({@code queen-position-current}, {@code queen-position-next} and
     * {@code arrow-position}); an {@code IllegalStateException} names a missing one. Then
     * {@code gameClient.sendMoveMessage(message.getMessageDetails())} sends it.
     */
    public void compile() {
        if (!isMove()) {
            return;
        }
        for (String key : new String[] {QUEEN_POS_CURR, QUEEN_POS_NEXT, ARROW_POS}) {
            if (!params.containsKey(key)) {
                throw new IllegalStateException("compile(): the move has no " + key + "; set it with "
                        + "setMessageDetails(\"" + key + "\", [row, col])");
            }
        }
    }

    private boolean isMove() {
        return messageType == null || GAME_ACTION_MOVE.equals(messageType);
    }

    private static ArrayList<Integer> square(String key, Object value) {
        if (value instanceof Collection) {
            ArrayList<Integer> square = new ArrayList<>();
            for (Object item : (Collection<?>) value) {
                if (!(item instanceof Integer)) {
                    square = null;
                    break;
                }
                square.add((Integer) item);
            }
            if (square != null && square.size() == 2) {
                return square;
            }
        }
        throw new IllegalArgumentException("setMessageDetails(\"" + key + "\", " + value + "): a square is a list of "
                + "two integers [row, col], 1 to 10");
    }
}
