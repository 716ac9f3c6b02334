package dev.llmsidecar.fuzz;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A byte-level HTTP/1.1 engine on blocking loopback sockets: each request gets exactly the bytes its script
 * returns, written in the pieces the script says (one write and flush per piece, an optional pause after it so the
 * sidecar sees the piece in a read of its own), on a keep-alive connection unless the reply says to close. Unlike
 * {@code reliability.RawUpstream} it keeps nothing per request or connection once served, so it can serve a fuzzing
 * run of millions of requests; connection threads come from a pool.
 */
final class ScriptedUpstream implements AutoCloseable {

    /** A request as the engine read it. */
    record Request(String head, byte[] body) {
        String header(String name) {
            for (String line : head.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return null;
        }
    }

    /**
     * What to write for one request.
     *
     * @param wire every byte of the response, head included
     * @param pieceEnds ascending offsets in {@code wire} after which the engine flushes (the last is wire.length)
     * @param pauseNanos per piece, how long to wait after writing it (0: none)
     * @param close close the connection after the response (its framing or its own habit says so)
     */
    record Reply(byte[] wire, int[] pieceEnds, long[] pauseNanos, boolean close) {
    }

    interface Script {
        Reply reply(Request request) throws Exception;
    }

    /** Longest wait for a request on an open connection (the sidecar's pool closes idle ones after 4 s). */
    private static final int IDLE_MILLIS = 30_000;
    private static final int MAX_HEAD = 64 * 1024;

    private final ServerSocket server;
    private final Script script;
    private final ExecutorService connections = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "scripted-upstream-conn");
        t.setDaemon(true);
        return t;
    });
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    /** The first failure of a script or of the engine's own reading: a harness bug the test must report. */
    final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean closed;

    ScriptedUpstream(Script script) throws IOException {
        this.script = script;
        server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        acceptor = new Thread(this::accept, "scripted-upstream-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket s = server.accept();
                open.add(s);
                connections.execute(() -> serve(s));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            s.setTcpNoDelay(true);
            s.setSoTimeout(IDLE_MILLIS);
            InputStream in = new BufferedInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            while (!closed) {
                Request request = read(in);
                if (request == null) {
                    return;
                }
                Reply reply = script.reply(request);
                write(out, reply);
                if (reply.close() || "close".equalsIgnoreCase(request.header("connection"))) {
                    return;
                }
            }
        } catch (SocketException | EOFException e) {
            // the peer left (the sidecar resets a connection it no longer wants): nothing to serve
        } catch (Exception e) {
            if (!closed) {
                failure.compareAndSet(null, e);
            }
        } finally {
            open.remove(s);
        }
    }

    private static void write(OutputStream out, Reply reply) throws IOException {
        int from = 0;
        for (int i = 0; i < reply.pieceEnds().length; i++) {
            int to = reply.pieceEnds()[i];
            if (to > from) {
                out.write(reply.wire(), from, to - from);
                out.flush();
            }
            from = Math.max(from, to);
            if (reply.pauseNanos()[i] > 0) {
                LockSupport.parkNanos(reply.pauseNanos()[i]);
            }
        }
        if (from < reply.wire().length) {
            out.write(reply.wire(), from, reply.wire().length - from);
            out.flush();
        }
    }

    /** Reads one request (head, and a Content-Length or chunked body); null at a clean end of the connection. */
    static Request read(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                if (head.size() == 0) {
                    return null;
                }
                throw new EOFException("connection closed inside a request head");
            }
            if (head.size() >= MAX_HEAD) {
                throw new IOException("request head over " + MAX_HEAD + " bytes");
            }
            head.write(b);
            matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        Request partial = new Request(head.toString(StandardCharsets.ISO_8859_1), new byte[0]);
        String length = partial.header("content-length");
        String te = partial.header("transfer-encoding");
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
            while (true) {
                String size = RawHttp.line(in);
                int n = Integer.parseInt(size.split(";")[0].trim(), 16);
                if (n == 0) {
                    while (!RawHttp.line(in).isEmpty()) {
                        // trailers
                    }
                    break;
                }
                body.write(readExactly(in, n));
                RawHttp.line(in);
            }
        } else if (length != null) {
            body.write(readExactly(in, Integer.parseInt(length)));
        }
        return new Request(partial.head(), body.toByteArray());
    }

    private static byte[] readExactly(InputStream in, int n) throws IOException {
        byte[] bytes = in.readNBytes(n);
        if (bytes.length != n) {
            throw new EOFException("request body ended after " + bytes.length + " of " + n + " bytes");
        }
        return bytes;
    }

    @Override
    public void close() throws Exception {
        closed = true;
        server.close();
        for (Socket s : open) {
            s.close();
        }
        acceptor.join(TimeUnit.SECONDS.toMillis(5));
        connections.shutdownNow();
        connections.awaitTermination(5, TimeUnit.SECONDS);
    }
}
