package ygraph.ai.smartfox.games.amazons;

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
}
