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

    private WebSocketLink(WebSocket socket) {
        this.socket = socket;
    }

    /**
     * Opens a connection to {@code url}, waiting for the handshake; throws {@link IOException} with a clear
     * message when it fails ({@link ConnectException} when nobody listens there: worth trying again later).
     */
    public static WebSocketLink open(HttpClient http, String url, Events events) throws IOException {
        try {
            WebSocket socket = http.newWebSocketBuilder()
                    .subprotocols(SUBPROTOCOL)
                    .connectTimeout(TIMEOUT)
                    .buildAsync(URI.create(url), new Listener(events))
                    .get(TIMEOUT.toSeconds() + 5, TimeUnit.SECONDS);
            return new WebSocketLink(socket);
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

    /** Assembles whole messages and hands them on; asks for one message at a time. */
    private static final class Listener implements WebSocket.Listener {
        private final Events events;
        private final StringBuilder text = new StringBuilder();
        private final java.io.ByteArrayOutputStream binary = new java.io.ByteArrayOutputStream();

        Listener(Events events) {
            this.events = events;
        }

        @Override
        public void onOpen(WebSocket webSocket) {
            webSocket.request(1);
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
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
            webSocket.request(1); // the JDK sends the pong itself
            return null;
        }

        @Override
        public CompletionStage<?> onPong(WebSocket webSocket, ByteBuffer message) {
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
