package dev.llmsidecar.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An independent HTTP/1.1 client on a plain socket with its own clock: one request ({@code connection: close}), the
 * response read to its end, every read kept with the {@link System#nanoTime()} it returned at. Nothing is parsed while
 * reading, so a stamp is the read's and not the client's work after it; what arrived when is worked out afterwards
 * ({@link Response#arrivalOf}). The tests' client and the reference reader beside it ({@link ReferenceReader}) are this
 * one code, so their delays are alike.
 */
public final class RawHttp {

    private RawHttp() {
    }

    /**
     * A response as read.
     *
     * @param raw every byte read, head and body as they came on the wire
     * @param readEnds the offset in {@code raw} after each read
     * @param readNanos when each read returned
     * @param sentNanos just before the request was written
     * @param endNanos when the connection's end was read
     */
    public record Response(int status, String head, byte[] raw, int bodyStart, int[] readEnds, long[] readNanos,
            long sentNanos, long endNanos) {

        /** The body without its chunked framing (as the body bytes, when the response was not chunked). */
        public String entity() {
            byte[] body = Arrays.copyOfRange(raw, bodyStart, raw.length);
            return new String(head.toLowerCase().contains("transfer-encoding: chunked") ? dechunk(body) : body,
                    StandardCharsets.UTF_8);
        }

        /** When the byte at {@code offset} of {@code raw} arrived (the read that held it). */
        public long arrivalOf(int offset) {
            int i = Arrays.binarySearch(readEnds, offset + 1);
            return readNanos[i >= 0 ? i : -i - 1];
        }

        /** When the first match of {@code pattern} in the body was complete (-1: none). */
        public long firstArrival(Pattern pattern) {
            Matcher m = pattern.matcher(latin1());
            return m.find(bodyStart) ? arrivalOf(m.end() - 1) : -1;
        }

        /** The raw bytes as ISO-8859-1 text, one character per byte, so that offsets are byte offsets. */
        public String latin1() {
            return new String(raw, StandardCharsets.ISO_8859_1);
        }

        /** When the last byte of the response arrived (its end on the wire, before the connection's close). */
        public long lastByteNanos() {
            return raw.length == 0 ? endNanos : arrivalOf(raw.length - 1);
        }

        public double ttftMs(Pattern firstToken) {
            return (firstArrival(firstToken) - sentNanos) / 1e6;
        }

        public double e2eMs() {
            return (endNanos - sentNanos) / 1e6;
        }
    }

    /** POSTs {@code body} and reads the whole response (60 s read timeout). */
    public static Response post(int port, String path, String body, Map<String, String> headers) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        StringBuilder head = new StringBuilder("POST " + path + " HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n"
                + "content-type: application/json\r\ncontent-length: " + bytes.length + "\r\n");
        headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.write(head.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
        request.write(bytes);
        byte[] wire = request.toByteArray();
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setTcpNoDelay(true);
            s.setSoTimeout(60_000);
            InputStream in = s.getInputStream();
            byte[] raw = new byte[1 << 16];
            int length = 0;
            int[] readEnds = new int[256];
            long[] readNanos = new long[256];
            int reads = 0;
            long sent = System.nanoTime();
            s.getOutputStream().write(wire);
            while (true) {
                if (length == raw.length) {
                    raw = Arrays.copyOf(raw, raw.length * 2);
                }
                int n = in.read(raw, length, raw.length - length);
                long now = System.nanoTime();
                if (n < 0) {
                    long end = now;
                    return response(Arrays.copyOf(raw, length), Arrays.copyOf(readEnds, reads),
                            Arrays.copyOf(readNanos, reads), sent, end);
                }
                length += n;
                if (reads == readEnds.length) {
                    readEnds = Arrays.copyOf(readEnds, reads * 2);
                    readNanos = Arrays.copyOf(readNanos, reads * 2);
                }
                readEnds[reads] = length;
                readNanos[reads++] = now;
            }
        }
    }

    static Response response(byte[] raw, int[] readEnds, long[] readNanos, long sent, long end) throws IOException {
        String text = new String(raw, StandardCharsets.ISO_8859_1);
        int split = text.indexOf("\r\n\r\n");
        if (split < 0 || !text.startsWith("HTTP/1.")) {
            throw new IOException("no HTTP response head in " + raw.length + " bytes");
        }
        String head = text.substring(0, split);
        return new Response(Integer.parseInt(head.substring(9, 12)), head, raw, split + 4, readEnds, readNanos, sent,
                end);
    }

    /** The data of a chunked body (strict enough for a test: sizes in hex, CRLF after each chunk). */
    public static byte[] dechunk(byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int i = 0;
        while (i < b.length) {
            int eol = indexOfCrlf(b, i);
            String line = new String(b, i, eol - i, StandardCharsets.US_ASCII);
            int semicolon = line.indexOf(';');
            int size = Integer.parseInt((semicolon < 0 ? line : line.substring(0, semicolon)).trim(), 16);
            if (size == 0) {
                break;
            }
            out.write(b, eol + 2, Math.min(size, b.length - eol - 2));
            i = eol + 2 + size + 2;
        }
        return out.toByteArray();
    }

    static int indexOfCrlf(byte[] b, int from) {
        for (int i = from; i < b.length - 1; i++) {
            if (b[i] == '\r' && b[i + 1] == '\n') {
                return i;
            }
        }
        return b.length;
    }
}
