package ygraph.ai.smartfox.games;

import java.util.Map;

/**
 * A game player: what a COSC 322 bot extends. The bot creates its {@link GameClient} in {@link #connect()}
 * ({@code gameClient = new GameClient(userName, passwd, this)}), and the client calls the bot back:
 * {@link #onLogin()} once logged in, then {@link #handleGameMessage} for each game message. All these calls
 * come from one thread (not the bot's {@code main} thread), one at a time, in the order the server sent them.
 *
 * <p>On Plyhall the library also finds the game: it joins the room of PLYHALL_ROOM or seeks an opponent, unless
 * the bot calls {@code joinRoom} itself in {@code onLogin}. See docs/COSC322.md.
 */
public abstract class GamePlayer {

    /** A player; nothing happens until {@link #Go()} (or {@link #connect()}). */
    public GamePlayer() {
    }

    /** Called once the login succeeded (from the client's thread): typically stores the user name and rooms. */
    public abstract void onLogin();

    /**
     * Called for each game message (from the client's thread, one at a time): {@code messageType} is one of the
     * {@link GameMessage} types; {@code msgDetails} holds its details. Returns whether the message was handled.
     */
    public abstract boolean handleGameMessage(String messageType, Map<String, Object> msgDetails);

    /** The player's user name. */
    public abstract String userName();

    /** The player's client (created in {@link #connect()}). */
    public abstract GameClient getGameClient();

    /** The player's board display, or null for none. */
    public abstract BaseGameGUI getGameGUI();

    /** Creates the player's {@link GameClient}, which logs in (in the background). */
    public abstract void connect();

    /**
     * Starts the player: {@link #postSetup()}, shows the board display if there is one (a window when Java has
     * a display; nothing, headless), then {@link #connect()}. Returns at once: the game goes on in the background.
     */
    public void Go() {
        postSetup();
        BaseGameGUI gui = getGameGUI();
        if (gui != null) {
            gui.display();
        }
        connect();
    }

    /** Called by {@link #Go()} before connecting: a place for set-up work. Does nothing unless overridden. */
    public void postSetup() {
    }

    /**
     * A text message for the player (a chat line, as {@code "sender: text"}). Prints it unless overridden;
     * returns whether it was handled.
     */
    public boolean handleMessage(String msg) {
        System.out.println(msg);
        return true;
    }

    /**
     * A text message from {@code sender} (another player's chat line in the room). Passes
     * {@code "sender: msg"} to {@link #handleMessage(String)} unless overridden.
     */
    public boolean handleMessage(String sender, String msg) {
        return handleMessage(sender + ": " + msg);
    }
}
