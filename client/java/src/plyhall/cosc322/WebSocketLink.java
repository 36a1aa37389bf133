package plyhall.cosc322;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One WebSocket connection to a Plyhall server, speaking {@code plyhall.v1.json}: whole text messages in,
 * whole text messages out. The JDK's WebSocket answers the server's keepalive pings by itself, as long as
 * messages keep being read: the listener here only hands each message on and asks for the next one, so a
 * bot that thinks for a long time never stops the reading.
 *
 * <p>The link also notes when anything last came from the server (a message, a ping, a pong): a connection can
 * die without a word, and {@link Session} asks {@link #silentMillis()} to find one. The network may drop it
 * without any FIN or RST ever arriving (a laptop that slept, a Wi-Fi change), and the JDK's WebSocket itself can
 * lose an end of stream that comes right behind a message (JDK 17 to 25 at least: when its transport reads the
 * end before the WebSocket asked it for the next frame, reporting it fails inside the JDK with an
 * {@code InternalError}), calling neither {@code onClose} nor {@code onError}: either way the link just goes quiet.
 */
public final class WebSocketLink {

    /** The subprotocol this library speaks. */
    public static final String SUBPROTOCOL = "plyhall.v1.json";

    /** What the link reports, from the JDK's WebSocket threads (hand it on to another thread at once). */
    public interface Events {
        /** One whole message arrived. */
        void onMessage(String text);

        /** The server closed the connection. */
        void onClosed(int code, String reason);

        /** The connection broke. */
        void onFailure(Throwable error);
    }

    private static final Duration TIMEOUT = Duration.ofSeconds(15);

    private final WebSocket socket;
    private final Listener listener;
    private volatile long probedNanos;

    private WebSocketLink(WebSocket socket, Listener listener) {
        this.socket = socket;
        this.listener = listener;
    }

    /**
     * Opens a connection to {@code url}, waiting for the handshake; throws {@link IOException} with a clear
     * message when it fails ({@link ConnectException} when nobody listens there: worth trying again later).
     */
    public static WebSocketLink open(HttpClient http, String url, Events events) throws IOException {
        try {
            Listener listener = new Listener(events);
            WebSocket socket = http.newWebSocketBuilder()
                    .subprotocols(SUBPROTOCOL)
                    .connectTimeout(TIMEOUT)
                    .buildAsync(URI.create(url), listener)
                    .get(TIMEOUT.toSeconds() + 5, TimeUnit.SECONDS);
            listener.heard(); // open: the handshake's answer came just now
            return new WebSocketLink(socket, listener);
        } catch (ExecutionException e) {
            throw describe(url, e.getCause() == null ? e : e.getCause());
        } catch (TimeoutException e) {
            throw new ConnectException("no answer from " + url + " within " + TIMEOUT.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while connecting to " + url);
        }
    }

    /** An HTTP client for WebSocket connections (its threads are daemon threads: they never keep Java running). */
    public static HttpClient newHttpClient() {
        return HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    }

    private static IOException describe(String url, Throwable cause) {
        if (cause instanceof WebSocketHandshakeException) {
            int status = ((WebSocketHandshakeException) cause).getResponse().statusCode();
            String hint = status == 404 && !url.replaceAll("/+$", "").endsWith("/ws")
                    ? ": there is no WebSocket endpoint there; add /ws" : "";
            return new IOException("the server at " + url + " refused the WebSocket handshake (HTTP " + status + ")"
                    + hint);
        }
        if (causedBy(cause, UnknownHostException.class) || causedBy(cause, UnresolvedAddressException.class)) {
            // the JDK's client reports a name no DNS knows as a ConnectException over an UnresolvedAddressException
            return new ConnectException("no server at " + url + " (unknown host)");
        }
        if (causedBy(cause, ConnectException.class)) {
            return new ConnectException("no server at " + url + " (connection refused)");
        }
        if (cause instanceof IOException) {
            return new ConnectException("cannot connect to " + url + " (" + cause.getMessage() + ")");
        }
        return new IOException("cannot connect to " + url + ": " + cause);
    }

    /** Whether {@code error} or one of its causes is a {@code kind}. */
    private static boolean causedBy(Throwable error, Class<? extends Throwable> kind) {
        for (int depth = 0; error != null && depth < 10; depth++, error = error.getCause()) {
            if (kind.isInstance(error)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Sends one message, waiting until it is written (the JDK allows one send at a time, so sends from
     * several threads take turns here).
     */
    public synchronized void send(String text) throws IOException {
        try {
            socket.sendText(text, true).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IOException("sending failed (" + cause.getMessage() + ")", cause);
        } catch (TimeoutException e) {
            throw new IOException("sending took longer than " + TIMEOUT.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while sending");
        }
    }

    /** Closes the connection politely (a close frame), then for good. */
    public void close() {
        try {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye").get(2, TimeUnit.SECONDS);
        } catch (Exception e) {
            // closing anyway
        }
        socket.abort();
    }

    /** Drops the connection at once, without a close frame (it is broken already). */
    public void abort() {
        socket.abort();
    }

    /** Milliseconds since anything (a message, a ping, a pong) last came from the server, or the link opened. */
    public long silentMillis() {
        return (System.nanoTime() - listener.heardNanos) / 1_000_000L;
    }

    /**
     * Sends a WebSocket ping, without waiting: the server's WebSocket answers it with a pong, which proves the
     * connection still carries data both ways. When a ping is still on its way, or the connection is closing,
     * the JDK fails this one (its future, ignored here): the one on its way will do.
     */
    public void probe() {
        probedNanos = System.nanoTime();
        try {
            socket.sendPing(ByteBuffer.allocate(0));
        } catch (RuntimeException e) {
            // a link that cannot even take a ping: it will stay silent, and be counted as lost
        }
    }

    /**
     * Milliseconds since the last {@link #probe()} went unanswered: since it was sent, when nothing has come from
     * the server after it; -1 when nothing was sent, or something came after it.
     */
    public long unansweredMillis() {
        long probed = probedNanos;
        if (probed == 0 || probed - listener.heardNanos < 0) {
            return -1;
        }
        return (System.nanoTime() - probed) / 1_000_000L;
    }

    /** Assembles whole messages and hands them on; asks for one message at a time. */
    private static final class Listener implements WebSocket.Listener {
        private final Events events;
        private final StringBuilder text = new StringBuilder();
        private final java.io.ByteArrayOutputStream binary = new java.io.ByteArrayOutputStream();
        /** When anything last came from the server ({@link System#nanoTime()}). */
        volatile long heardNanos = System.nanoTime();

        Listener(Events events) {
            this.events = events;
        }

        void heard() {
            heardNanos = System.nanoTime();
        }

        @Override
        public void onOpen(WebSocket webSocket) {
            heard();
            webSocket.request(1);
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            heard();
            text.append(data);
            if (last) {
                String message = text.toString();
                text.setLength(0);
                events.onMessage(message);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            heard();
            byte[] bytes = new byte[data.remaining()];
            data.get(bytes);
            binary.write(bytes, 0, bytes.length);
            if (last) {
                String message = new String(binary.toByteArray(), StandardCharsets.UTF_8);
                binary.reset();
                events.onMessage(message);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onPing(WebSocket webSocket, ByteBuffer message) {
            heard();
            webSocket.request(1); // the JDK sends the pong itself
            return null;
        }

        @Override
        public CompletionStage<?> onPong(WebSocket webSocket, ByteBuffer message) {
            heard(); // the answer to probe()
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            events.onClosed(statusCode, reason);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            events.onFailure(error);
        }
    }
}
