package dev.llmsidecar.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A misbehaving HTTP/1.1 upstream on a blocking loopback socket, one thread per connection, for faults a real
 * server library would not produce: closing or resetting before the status line, dying in the middle of an event,
 * stalling, sending malformed bodies. Every script gets the parsed request and the raw socket. By default a
 * connection serves one request and is closed (and says so with {@code Connection: close}); a persistent upstream
 * serves requests on a connection until a script closes it.
 */
public final class RawUpstream implements AutoCloseable {

    /** What to do with one request. */
    public interface Script {
        void serve(Request request, Socket socket, OutputStream out) throws Exception;
    }

    public record Request(String head, byte[] body) {
        public String header(String name) {
            for (String line : head.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return null;
        }
    }

    public final ServerSocket server;
    public final List<Request> requests = new CopyOnWriteArrayList<>();
    public final List<Socket> sockets = new CopyOnWriteArrayList<>();
    /** Bytes of response body written by scripts that count them. */
    public final AtomicLong written = new AtomicLong();
    public final AtomicLong closedAtNanos = new AtomicLong();
    private final Thread acceptor;
    private final boolean persistent;
    private final boolean keepBodies;
    private volatile boolean closed;

    public RawUpstream(Script script) throws IOException {
        this(script, false, true);
    }

    public RawUpstream(Script script, boolean persistent) throws IOException {
        this(script, persistent, true);
    }

    /** An upstream that reads request bodies and throws them away (their memory is not the test's to measure). */
    public static RawUpstream discardingBodies(Script script) throws IOException {
        return new RawUpstream(script, false, false);
    }

    private RawUpstream(Script script, boolean persistent, boolean keepBodies) throws IOException {
        this.persistent = persistent;
        this.keepBodies = keepBodies;
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(() -> {
            while (!closed) {
                try {
                    Socket s = server.accept();
                    sockets.add(s);
                    Thread t = new Thread(() -> handle(s, script), "raw-upstream-conn");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "raw-upstream-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public String url() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    private void handle(Socket s, Script script) {
        try {
            s.setTcpNoDelay(true);
            InputStream in = s.getInputStream();
            do {
                Request r = read(in, keepBodies);
                if (r == null) {
                    return;
                }
                requests.add(r);
                script.serve(r, s, s.getOutputStream());
            } while (persistent && !s.isClosed());
        } catch (Exception e) {
            closedAtNanos.compareAndSet(0, System.nanoTime());
        } finally {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    /** Reads one request head and its body (Content-Length or chunked); without {@code keepBody} the body is skipped. */
    public static Request read(InputStream in, boolean keepBody) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            head.write(b);
            matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        String h = head.toString(StandardCharsets.ISO_8859_1);
        Request partial = new Request(h, new byte[0]);
        String length = partial.header("content-length");
        String te = partial.header("transfer-encoding");
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (length != null) {
            body(in, Integer.parseInt(length), body, keepBody);
        } else if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
            while (true) {
                String size = line(in);
                int n = Integer.parseInt(size.split(";")[0].trim(), 16);
                if (n == 0) {
                    line(in);
                    break;
                }
                body(in, n, body, keepBody);
                line(in);
            }
        }
        return new Request(h, body.toByteArray());
    }

    private static void body(InputStream in, int n, ByteArrayOutputStream body, boolean keep) throws IOException {
        if (keep) {
            body.write(in.readNBytes(n));
        } else {
            in.skipNBytes(n);
        }
    }

    /** One line without its CR LF. */
    public static String line(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int b;
        while ((b = in.read()) >= 0 && b != '\n') {
            if (b != '\r') {
                sb.append((char) b);
            }
        }
        return sb.toString();
    }

    /** A chunked 200 head for a connection that closes after this response. */
    public static void writeHead(OutputStream out, String contentType) throws IOException {
        out.write(("HTTP/1.1 200 OK\r\ncontent-type: " + contentType + "\r\ntransfer-encoding: chunked\r\n"
                + "connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    public static void writeChunk(OutputStream out, byte[] bytes) throws IOException {
        out.write((Integer.toHexString(bytes.length) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(bytes);
        out.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    public static void writeEnd(OutputStream out) throws IOException {
        out.write("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /** Closes with a TCP reset instead of a FIN. */
    public static void reset(Socket s) throws IOException {
        s.setSoLinger(true, 0);
        s.close();
    }

    @Override
    public void close() throws Exception {
        closed = true;
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
        acceptor.join(TimeUnit.SECONDS.toMillis(5));
    }
}
