package ygraph.ai.smartfox.games.amazons;

import java.net.URI;
import java.util.Map;

import plyhall.cosc322.Settings;
import ygraph.ai.smartfox.games.BaseGameGUI;
import ygraph.ai.smartfox.games.GameClient;
import ygraph.ai.smartfox.games.GamePlayer;

/**
 * The course client's player for a person, who clicked moves on its board. On Plyhall a person plays in a web
 * browser instead: the server serves the page itself. {@link #Go()} says where it is, and returns.
 */
public class HumanPlayer extends GamePlayer {

    private final String userName = "human";

    /** A human player. */
    public HumanPlayer() {
    }

    /** Says where to play: {@code java -cp plyhall-cosc322.jar ygraph.ai.smartfox.games.amazons.HumanPlayer}. */
    public static void main(String[] args) {
        new HumanPlayer().Go();
    }

    /** Prints the address of the server's web page, where a person plays (and watches) Amazons. */
    @Override
    public void Go() {
        System.out.println("To play Amazons yourself, open " + webPage(Settings.load().url) + " in a web browser:");
        System.out.println("choose a name, then play a bot or another person, or watch the games being played.");
        System.out.println("(The course's HumanPlayer window does not exist on Plyhall: the web page replaces it.)");
    }

    /**
     * The web page of the server at the WebSocket address {@code url}: http://HOST:PORT/, beside its /ws (a proxy's
     * path prefix kept: wss://example.org/plyhall/ws is the page https://example.org/plyhall/).
     */
    public static String webPage(String url) {
        try {
            URI uri = new URI(url);
            String scheme = "wss".equalsIgnoreCase(uri.getScheme()) ? "https" : "http";
            String path = uri.getRawPath() == null ? "" : uri.getRawPath().replaceAll("/+$", "");
            String folder = path.endsWith("/ws") ? path.substring(0, path.length() - 3) : "";
            return scheme + "://" + uri.getRawAuthority() + folder + "/";
        } catch (Exception e) {
            return "the server's address (http://HOST:PORT/)";
        }
    }

    /** Nothing to do: a human player never logs in here. */
    @Override
    public void onLogin() {
    }

    /** Nothing to do: a human player gets no game messages here. */
    @Override
    public boolean handleGameMessage(String messageType, Map<String, Object> msgDetails) {
        return false;
    }

    @Override
    public String userName() {
        return userName;
    }

    /** Null: a human player plays in the browser, not through a client. */
    @Override
    public GameClient getGameClient() {
        return null;
    }

    /** Null: the browser is the display. */
    @Override
    public BaseGameGUI getGameGUI() {
        return null;
    }

    /** Nothing to do: see {@link #Go()}. */
    @Override
    public void connect() {
    }
}
