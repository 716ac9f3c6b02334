package dev.llmsidecar.load;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Splits a server-sent-events byte stream into events across reads: an event ends at a blank line ({@code \n\n},
 * {@code \r\n\r\n}, or mixed). Each event goes to the handler as a byte range, without its blank line, with the time of
 * the read that completed it. Copies each byte once; the handler decides what to decode.
 */
public final class SseFramer {

    /** One complete event: {@code bytes[from, to)}, valid only during the call. */
    @FunctionalInterface
    public interface Handler {
        void event(byte[] bytes, int from, int to, long nanos);
    }

    private final Handler handler;
    private byte[] buf = new byte[1024];
    private int length;
    /** Where the next search for a blank line starts. */
    private int scanned;

    public SseFramer(Handler handler) {
        this.handler = handler;
    }

    public void feed(Buffer chunk, long nanos) {
        int n = chunk.length();
        if (length + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, length + n));
        }
        chunk.getBytes(0, n, buf, length);
        length += n;
        int start = 0;
        int i = scanned;
        for (; i < length - 1; i++) {
            if (buf[i] != '\n') {
                continue;
            }
            int end;
            if (buf[i + 1] == '\n') {
                end = i + 2;
            } else if (buf[i + 1] == '\r') {
                if (i + 2 >= length) {
                    break; // "\n\r" at the end of the read: the next one says whether an event ended
                }
                if (buf[i + 2] != '\n') {
                    continue;
                }
                end = i + 3;
            } else {
                continue;
            }
            handler.event(buf, start, i, nanos);
            start = end;
            i = end - 1;
        }
        if (start > 0) {
            System.arraycopy(buf, start, buf, 0, length - start);
            length -= start;
        }
        scanned = Math.max(0, i - start);
    }

    /**
     * An event's data: its {@code data:} lines joined by {@code \n} (one space after the colon dropped), stripped;
     * null when it has none (a comment, a bare {@code event:}).
     */
    public static String data(byte[] b, int from, int to) {
        StringBuilder data = null;
        int line = from;
        while (line < to) {
            int eol = line;
            while (eol < to && b[eol] != '\n') {
                eol++;
            }
            int end = eol > line && b[eol - 1] == '\r' ? eol - 1 : eol;
            if (end - line >= 5 && b[line] == 'd' && b[line + 1] == 'a' && b[line + 2] == 't' && b[line + 3] == 'a'
                    && b[line + 4] == ':') {
                int v = line + 5 < end && b[line + 5] == ' ' ? line + 6 : line + 5;
                String d = new String(b, v, end - v, StandardCharsets.UTF_8);
                if (data == null) {
                    data = new StringBuilder(d);
                } else {
                    data.append('\n').append(d);
                }
            }
            line = eol + 1;
        }
        return data == null ? null : data.toString().strip();
    }
}
