package dev.llmsidecar.proxy;

import io.netty.buffer.ByteBuf;

/**
 * Walks an HTTP/1.1 chunked body (RFC 9112 §7.1) as the upstream sends it, byte by byte where the read lies, without
 * copying, and tells its {@link Sink} where each chunk's data is and where the body ends. Strict, because the bytes it
 * passes go to the client as they are and the connection goes back to a pool shared by every client: a chunk size is
 * 1 to 16 hex digits and at most {@link #MAX_CHUNK_SIZE} (no overflow); every line ends in CRLF (no bare LF, no bare
 * CR); the data of every chunk is followed by CRLF; a chunk extension is {@code ;name[=token|quoted-string]} with
 * optional whitespace only where the grammar has it, its size line at most {@link #MAX_LINE} bytes; a trailer field is
 * {@code token ":" value} and the trailer section at most {@link #MAX_TRAILERS} bytes. Anything else, and any byte
 * after the body's end, is an anomaly: the scanner stops there and stays stopped. Confined to one connection's event
 * loop; reused for the next response after {@link #reset}.
 */
final class ChunkedScanner {

    /** Longest chunk-size line, extensions included (Netty's own line limit on the sidecar's upstream codec). */
    static final int MAX_LINE = 4096;
    /** Largest trailer section (the upstream codec's header limit). */
    static final int MAX_TRAILERS = 8192;
    /** Largest chunk size (Netty's decoder reads it as a positive int). */
    static final long MAX_CHUNK_SIZE = Integer.MAX_VALUE;

    /** What the scanner reports, in stream order. */
    interface Sink {
        /** Data bytes {@code [index, index + length)} of {@code read}, belonging to the current chunk. */
        void data(ByteBuf read, int index, int length);

        /** The current chunk (its CRLF after the data included) ended just before {@code index} of the read. */
        default void chunkEnd(int index) {
        }
    }

    private enum State {
        SIZE_FIRST, SIZE, EXT_BEFORE_SEMI, EXT_NAME_START, EXT_NAME, EXT_AFTER_NAME, EXT_VALUE_START, EXT_TOKEN,
        EXT_QUOTED, EXT_QUOTED_ESCAPE, EXT_AFTER_VALUE, SIZE_LF, DATA, DATA_CR, DATA_LF,
        TRAILER_START, TRAILER_NAME, TRAILER_VALUE, TRAILER_LF, END_LF, DONE, ANOMALY
    }

    /** {@link #scan}'s answer when the body has not ended and nothing is wrong: more bytes are expected. */
    static final int MORE = -1;
    /** {@link #scan}'s answer for an anomaly (see {@link #anomaly()}). */
    static final int ANOMALY = -2;

    private State state = State.SIZE_FIRST;
    private int digits;
    private long size;
    private long remaining;
    private int lineBytes;
    private int trailerBytes;
    private boolean justEndedChunk;
    private String anomaly;
    private int anomalyIndex = -1;

    /** Ready for the next body on the same connection. */
    void reset() {
        state = State.SIZE_FIRST;
        digits = 0;
        size = 0;
        remaining = 0;
        lineBytes = 0;
        trailerBytes = 0;
        justEndedChunk = false;
        anomaly = null;
        anomalyIndex = -1;
    }

    /** What went wrong, or null. */
    String anomaly() {
        return anomaly;
    }

    /** The body has ended (its terminating empty line was read). */
    boolean ended() {
        return state == State.DONE;
    }

    /** Inside a chunk's data or its framing: the bytes read so far end in the middle of a chunk. */
    boolean midChunk() {
        return state != State.SIZE_FIRST && state != State.DONE && state != State.ANOMALY;
    }

    /**
     * Scans {@code read}'s bytes {@code [from, to)}. Returns the index just past the body's end when it ends within
     * them, {@link #MORE} when it has not ended, {@link #ANOMALY} when a byte breaks the framing (then
     * {@link #anomalyIndex} says where, and every later call returns ANOMALY). Bytes after the end are not scanned:
     * the caller decides what they are (here, an anomaly: nothing follows a response on a connection the sidecar
     * sends one request at a time).
     */
    int scan(ByteBuf read, int from, int to, Sink sink) {
        int i = from;
        while (i < to) {
            switch (state) {
                case DATA -> {
                    int n = (int) Math.min(remaining, to - i);
                    sink.data(read, i, n);
                    remaining -= n;
                    i += n;
                    if (remaining == 0) {
                        state = State.DATA_CR;
                    }
                    continue;
                }
                case DONE -> {
                    return i;
                }
                case ANOMALY -> {
                    return ANOMALY;
                }
                default -> {
                }
            }
            byte b = read.getByte(i);
            if (!step(b)) {
                anomalyIndex = i;
                return ANOMALY;
            }
            i++;
            if (justEndedChunk) {
                justEndedChunk = false;
                sink.chunkEnd(i);
            }
            if (state == State.DONE) {
                return i;
            }
        }
        return MORE;
    }

    /** Where the anomaly was found in the read that had it. */
    int anomalyIndex() {
        return anomalyIndex;
    }

    private boolean fail(String why) {
        anomaly = why;
        state = State.ANOMALY;
        return false;
    }

    /** One framing byte (not a data byte). */
    private boolean step(byte b) {
        if (state == State.SIZE_FIRST) {
            lineBytes = 0;
        }
        if (inSizeLine() && b != '\r' && ++lineBytes > MAX_LINE) {
            return fail("chunk size line longer than " + MAX_LINE + " bytes"); // CRLF not counted, as Netty's
        }
        switch (state) {
            case SIZE_FIRST -> {
                int v = hex(b);
                if (v < 0) {
                    return fail("chunk size must start with a hex digit");
                }
                digits = 1;
                size = v;
                state = State.SIZE;
                return true;
            }
            case SIZE -> {
                int v = hex(b);
                if (v >= 0) {
                    if (++digits > 16) {
                        return fail("chunk size longer than 16 hex digits");
                    }
                    size = size * 16 + v;
                    if (size > MAX_CHUNK_SIZE) {
                        return fail("chunk size over " + MAX_CHUNK_SIZE);
                    }
                    return true;
                }
                return afterSize(b);
            }
            case EXT_BEFORE_SEMI -> {
                return isWhitespace(b) || afterSize(b);
            }
            case EXT_NAME_START -> {
        if (isWhitespace(b)) {
                    return true;
                }
                if (!isTchar(b)) {
                    return fail("chunk extension name expected");
                }
                state = State.EXT_NAME;
                return true;
            }
            case EXT_NAME -> {
        if (isTchar(b)) {
                    return true;
                }
                state = State.EXT_AFTER_NAME;
                return extAfterName(b);
            }
            case EXT_AFTER_NAME -> {
                return extAfterName(b);
            }
            case EXT_VALUE_START -> {
        if (isWhitespace(b)) {
                    return true;
                }
                if (b == '"') {
                    state = State.EXT_QUOTED;
                    return true;
                }
                if (!isTchar(b)) {
                    return fail("chunk extension value expected");
                }
                state = State.EXT_TOKEN;
                return true;
            }
            case EXT_TOKEN -> {
        if (isTchar(b)) {
                    return true;
                }
                state = State.EXT_AFTER_VALUE;
                return extAfterValue(b);
            }
            case EXT_QUOTED -> {
        if (b == '"') {
                    state = State.EXT_AFTER_VALUE;
                    return true;
                }
                if (b == '\\') {
                    state = State.EXT_QUOTED_ESCAPE;
                    return true;
                }
                return isQdtext(b) || fail("byte not allowed in a quoted chunk extension value");
            }
            case EXT_QUOTED_ESCAPE -> {
        state = State.EXT_QUOTED;
                return b == '\t' || b == ' ' || (b >= 0x21 && b <= 0x7E) || (b & 0xFF) >= 0x80
                        || fail("byte not allowed after a backslash in a chunk extension");
            }
            case EXT_AFTER_VALUE -> {
                return extAfterValue(b);
            }
            case SIZE_LF -> {
                if (b != '\n') {
                    return fail("CR not followed by LF after the chunk size");
                }
                if (size == 0) {
                    trailerBytes = 0;
                    state = State.TRAILER_START;
                } else {
                    remaining = size;
                    state = State.DATA;
                }
                return true;
            }
            case DATA_CR -> {
                if (b != '\r') {
                    return fail("chunk data not followed by CRLF");
                }
                state = State.DATA_LF;
                return true;
            }
            case DATA_LF -> {
                if (b != '\n') {
                    return fail("chunk data not followed by CRLF");
                }
                state = State.SIZE_FIRST;
                justEndedChunk = true;
                return true;
            }
            case TRAILER_START -> {
                if (b == '\r') {
                    state = State.END_LF;
                    return true;
                }
                if (!trailerByte() || !isTchar(b)) {
                    return anomaly != null ? false : fail("trailer field name expected");
                }
                state = State.TRAILER_NAME;
                return true;
            }
            case TRAILER_NAME -> {
                if (!trailerByte()) {
                    return false;
                }
                if (b == ':') {
                    state = State.TRAILER_VALUE;
                    return true;
                }
                return isTchar(b) || fail("byte not allowed in a trailer field name");
            }
            case TRAILER_VALUE -> {
                if (!trailerByte()) {
                    return false;
                }
                if (b == '\r') {
                    state = State.TRAILER_LF;
                    return true;
                }
                return b == '\t' || b == ' ' || (b >= 0x21 && b <= 0x7E) || (b & 0xFF) >= 0x80
                        || fail("byte not allowed in a trailer field value");
            }
            case TRAILER_LF -> {
                if (b != '\n' || !trailerByte()) {
                    return anomaly != null ? false : fail("CR not followed by LF in the trailer section");
                }
                state = State.TRAILER_START;
                return true;
            }
            case END_LF -> {
                if (b != '\n') {
                    return fail("CR not followed by LF at the end of the body");
                }
                state = State.DONE;
                return true;
            }
            default -> throw new IllegalStateException(state.name());
        }
    }

    /** After the size's digits: optional whitespace, then an extension or the end of the line. */
    private boolean afterSize(byte b) {
        if (b == '\r') {
            state = State.SIZE_LF;
            return true;
        }
        if (b == ';') {
            state = State.EXT_NAME_START;
            return true;
        }
        if (isWhitespace(b)) {
            state = State.EXT_BEFORE_SEMI;
            return true;
        }
        return fail(b == '\n' ? "bare LF after the chunk size" : "byte not allowed after the chunk size");
    }

    private boolean extAfterName(byte b) {
        if (isWhitespace(b)) {
            return true;
        }
        if (b == '=') {
            state = State.EXT_VALUE_START;
            return true;
        }
        return afterSizeOrNextExtension(b);
    }

    private boolean extAfterValue(byte b) {
        return isWhitespace(b) || afterSizeOrNextExtension(b);
    }

    private boolean afterSizeOrNextExtension(byte b) {
        if (b == ';') {
            state = State.EXT_NAME_START;
            return true;
        }
        if (b == '\r') {
            state = State.SIZE_LF;
            return true;
        }
        return fail(b == '\n' ? "bare LF in a chunk extension" : "byte not allowed in a chunk extension");
    }

    private boolean inSizeLine() {
        return state.compareTo(State.SIZE_FIRST) >= 0 && state.compareTo(State.EXT_AFTER_VALUE) <= 0;
    }

    private boolean trailerByte() {
        return ++trailerBytes <= MAX_TRAILERS || fail("trailer section larger than " + MAX_TRAILERS + " bytes");
    }

    private static boolean isWhitespace(byte b) {
        return b == ' ' || b == '\t';
    }

    private static int hex(byte b) {
        if (b >= '0' && b <= '9') {
            return b - '0';
        }
        if (b >= 'a' && b <= 'f') {
            return b - 'a' + 10;
        }
        if (b >= 'A' && b <= 'F') {
            return b - 'A' + 10;
        }
        return -1;
    }

    /** RFC 9110 tchar. */
    private static boolean isTchar(byte b) {
        if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')) {
            return true;
        }
        return switch (b) {
            case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~' -> true;
            default -> false;
        };
    }

    /** RFC 9110 qdtext. */
    private static boolean isQdtext(byte b) {
        int c = b & 0xFF;
        return c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x5B) || (c >= 0x5D && c <= 0x7E)
                || c >= 0x80;
    }
}
