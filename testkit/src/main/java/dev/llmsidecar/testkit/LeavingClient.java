package dev.llmsidecar.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A client on a raw socket that reads what it is sent as long as it likes and leaves by closing: the client that
 * gives up on a stream, or waits out a stall. One POST to {@code /v1/chat/completions}; the bytes kept as read (head,
 * framing and all). Unlike {@link RawHttp}, which reads a response to its end, it stops reading when its test says.
 */
public final class LeavingClient implements AutoCloseable {

    private final Socket socket;
    private final InputStream in;
    private final ByteArrayOutputStream received = new ByteArrayOutputStream();
    private final byte[] buffer = new byte[16384];
    private long lastByteNanos;

    /** Connects to 127.0.0.1:{@code port} and sends the request, with {@code headers} besides its own. */
    public LeavingClient(int port, String body, Map<String, String> headers) throws IOException {
        socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setSoTimeout(20); // reads wake up often, so that a test's deadline holds
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        StringBuilder head = new StringBuilder("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                + "content-type: application/json\r\ncontent-length: " + bytes.length + "\r\n");
        headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
        OutputStream out = socket.getOutputStream();
        out.write(head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
        out.write(bytes);
        out.flush();
        in = socket.getInputStream();
    }

    /** Everything received so far. */
    public String text() {
        return received.toString(StandardCharsets.UTF_8);
    }

    /** When the last byte arrived ({@link System#nanoTime()}), 0 before the first. */
    public long lastByteNanos() {
        return lastByteNanos;
    }

    /** Reads until {@code enough} holds of what was received, or the connection ends, for at most {@code seconds}. */
    public boolean readUntil(Predicate<String> enough, double seconds) throws IOException {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < deadline) {
            if (enough.test(text())) {
                return true;
            }
            if (!readOnce()) {
                break;
            }
        }
        return enough.test(text());
    }

    /**
     * Reads until {@code enough} holds (at most {@code seconds}), then on until nothing came for {@code quietMs} or
     * the connection ends. Returns whether {@code enough} held.
     */
    public boolean readUntilQuiet(Predicate<String> enough, long quietMs, double seconds) throws IOException {
        if (!readUntil(enough, seconds)) {
            return false;
        }
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        long last = System.nanoTime();
        while (System.nanoTime() < deadline && System.nanoTime() - last < quietMs * 1_000_000L) {
            int before = received.size();
            if (!readOnce()) {
                break;
            }
            if (received.size() > before) {
                last = System.nanoTime();
            }
        }
        return true;
    }

    /** One read of at most 20 ms; false when the connection ended. */
    private boolean readOnce() throws IOException {
        try {
            int n = in.read(buffer);
            if (n < 0) {
                return false;
            }
            received.write(buffer, 0, n);
            lastByteNanos = System.nanoTime();
        } catch (SocketTimeoutException quiet) {
            // nothing yet
        }
        return true;
    }

    /** The client leaves. */
    @Override
    public void close() throws IOException {
        socket.close();
    }
}
