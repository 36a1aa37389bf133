package ygraph.ai.smartfox.games;

/**
 * The state of a game, for a bot's own use (the course library's base class of game models). It holds the
 * names of what a board square can hold, which {@link BoardGameModel} uses.
 */
public class GameModel {

    /** A square holding a black queen. */
    public static final String POS_MARKED_BLACK = "black";
    /** A square holding a white queen. */
    public static final String POS_MARKED_WHITE = "white";
    /** A square blocked by an arrow. */
    public static final String POS_MARKED_ARROW = "arrow";
    /** An empty square. */
    public static final String POS_AVAILABLE = "available";

    /** An empty model. */
    public GameModel() {
    }
}
