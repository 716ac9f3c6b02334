package dev.llmsidecar.wire;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A request body's bytes where they lie (the buffers the proxy gathered, not copied), for hashing a JSON string's text
 * without decoding it: the bytes between its quotes go to a {@link HistoryDigest} as UTF-8 (what a UTF-8 body's text
 * is), eight at a time while none of them is a quote or a backslash, and an escape as the UTF-8 of what it stands for.
 * So the digest is the one of the decoded text ({@link HistoryDigest#text}) without Jackson decoding every message's
 * text into characters first: measured, that decoding was a third of the feature's cost per request.
 *
 * <p>Strings are found by the offset the parser reports for their opening quote, in bytes from the start of the body
 * (a byte-order mark included); a body the parser reads as UTF-16 or UTF-32 reports none, and is hashed from its
 * decoded text. A malformed string is hashed as far as it goes: the parser refuses the body then, and the whole
 * reading with it.
 */
public final class BodyText {

    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;
    private static final long QUOTES = ONES * '"';
    private static final long BACKSLASHES = ONES * '\\';

    /** The body's buffers in order, each a little-endian view from its first byte, and where each starts. */
    private final ByteBuffer[] parts;
    private final long[] starts;

    private BodyText(ByteBuffer[] parts) {
        this.parts = parts;
        this.starts = new long[parts.length];
        long at = 0;
        for (int k = 0; k < parts.length; k++) {
            parts[k] = parts[k].slice().order(ByteOrder.LITTLE_ENDIAN);
            starts[k] = at;
            at += parts[k].limit();
        }
    }

    /**
     * Buffers a body may come in and still be read in place: one view of each is made per inspection (about 130 bytes
     * each and 8 for where it starts). A 16 MiB body (the inspection limit's default) read 16 KiB at a time is 1 024;
     * a client that sends its body in more, smaller pieces has its texts hashed from the parser's characters instead
     * (the same digests, Jackson's cost), so the views never outgrow about 140 KB a request, whatever the body.
     */
    static final int MAX_PARTS = 1024;

    /**
     * The readable bytes of {@code body}, offsets counted from its reader index (as the parser counts them); null when
     * it is in more than {@link #MAX_PARTS} buffers.
     */
    public static BodyText of(ByteBuf body) {
        if (body.nioBufferCount() > MAX_PARTS) {
            return null;
        }
        return new BodyText(body.nioBuffers(body.readerIndex(), body.readableBytes()));
    }

    /** A body in one array (tests). */
    static BodyText of(byte[] body) {
        return new BodyText(new ByteBuffer[] {ByteBuffer.wrap(body)});
    }

    /**
     * Gives {@code digest} the text of the string whose opening quote is at {@code quote}.
     *
     * @return false, having given nothing, when there is no quote at {@code quote}
     */
    public boolean digest(long quote, HistoryDigest digest) {
        if (byteAt(quote) != '"') {
            return false;
        }
        long pos = quote + 1;
        while (true) {
            int k = partOf(pos);
            if (k < 0) {
                return true; // the body ends inside the string: the parser refuses it
            }
            ByteBuffer b = parts[k];
            int n = b.limit();
            int i = (int) (pos - starts[k]);
            for (; i + 32 <= n; i += 32) {
                long w0 = b.getLong(i);
                long w1 = b.getLong(i + 8);
                long w2 = b.getLong(i + 16);
                long w3 = b.getLong(i + 24);
                if ((special(w0) | special(w1) | special(w2) | special(w3)) != 0) {
                    break;
                }
                digest.utf8(w0, w1, w2, w3);
            }
            for (; i + 8 <= n; i += 8) {
                long w = b.getLong(i);
                if (special(w) != 0) {
                    break;
                }
                digest.utf8(w);
            }
            // a quote or a backslash in the next eight bytes, or the part's last few: one at a time to it
            for (; i < n; i++) {
                byte c = b.get(i);
                if (c == '"') {
                    return true;
                }
                if (c == '\\') {
                    break;
                }
                digest.utf8Byte(c);
            }
            pos = i == n ? starts[k] + n : escape(starts[k] + i + 1, digest);
        }
    }

    /** Nonzero when a byte of {@code w} is a quote or a backslash (each byte's high bit then set: a zero-byte test). */
    private static long special(long w) {
        long q = w ^ QUOTES;
        long s = w ^ BACKSLASHES;
        return ((q - ONES) & ~q | (s - ONES) & ~s) & HIGHS;
    }

    /** The escape after a backslash at {@code at - 1}: gives what it stands for, returns where the string goes on. */
    private long escape(long at, HistoryDigest digest) {
        int c = byteAt(at);
        switch (c) {
            case '"', '\\', '/' -> digest.utf8Byte(c);
            case 'b' -> digest.utf8Byte('\b');
            case 'f' -> digest.utf8Byte('\f');
            case 'n' -> digest.utf8Byte('\n');
            case 'r' -> digest.utf8Byte('\r');
            case 't' -> digest.utf8Byte('\t');
            case 'u' -> {
                int unit = hex4(at + 1);
                if (unit < 0) {
                    digest.utf8Byte(c); // not JSON: the parser refuses it
                    return at + 1;
                }
                if (Character.isHighSurrogate((char) unit) && byteAt(at + 5) == '\\' && byteAt(at + 6) == 'u') {
                    int low = hex4(at + 7);
                    if (low >= 0 && Character.isLowSurrogate((char) low)) {
                        digest.codePoint(Character.toCodePoint((char) unit, (char) low));
                        return at + 11;
                    }
                }
                digest.codePoint(unit);
                return at + 5;
            }
            default -> {
                if (c < 0) {
                    return at; // the body ends here
                }
                digest.utf8Byte(c); // not JSON: the parser refuses it
            }
        }
        return at + 1;
    }

    /** The four hex digits at {@code at} as a number, or -1. */
    private int hex4(long at) {
        int v = 0;
        for (int j = 0; j < 4; j++) {
            int d = Character.digit(byteAt(at + j), 16);
            if (d < 0) {
                return -1;
            }
            v = v << 4 | d;
        }
        return v;
    }

    /** The byte at {@code at} (0-255), or -1 past the end. */
    private int byteAt(long at) {
        int k = partOf(at);
        return k < 0 ? -1 : parts[k].get((int) (at - starts[k])) & 0xFF;
    }

    /** The part holding {@code at}, or -1 past the end. */
    private int partOf(long at) {
        int k = Arrays.binarySearch(starts, at);
        if (k < 0) {
            k = -k - 2; // the last part starting before it
        }
        while (k >= 0 && k < parts.length && at - starts[k] >= parts[k].limit()) {
            k++; // an empty part starts where the next does
        }
        return k < 0 || k >= parts.length ? -1 : k;
    }
}
