package dev.llmsidecar.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.Locale;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * A compressed response ({@code Content-Encoding: gzip} or {@code deflate}) is still measured: the compressed bytes
 * are forwarded untouched, and an inflated copy goes to the format's decoder, stamped with the arrival time of the
 * compressed read that carried it: each read hands on all that the bytes so far inflate to. The inner decoder never
 * edits: what it returns is dropped. br and zstd would need native libraries; such responses pass undecoded (counted
 * by the proxy).
 *
 * <p>java.util.zip's {@link Inflater} inflates, called until it gives no more output (Netty's zlib decoder stopped
 * once zlib had taken all of a read's input, though zlib might still hold output it had had no room for: that came a
 * read late, and after the last read never). gzip is read as {@code GZIPInputStream} reads it (RFC 1952): concatenated
 * members, the optional header fields, CRC-32 and length checked, bytes after a member that do not begin another one
 * ignored. deflate is zlib-wrapped (RFC 9110) when its first two bytes are a zlib header by RFC 1950's rule, else raw
 * (some servers send that); bytes after its end are ignored.
 */
public final class InflatingDecoder implements StreamDecoder {

    /** Stops inflating past this many output bytes per input byte (a decompression bomb costs no more). */
    private static final long MAX_RATIO = 1000;
    /** Inflated bytes handed on at once, at most (each read's are handed on when it has been inflated). */
    private static final int HAND_ON_BYTES = 64 * 1024;
    /** A gzip header longer than this (its name or comment unterminated) is not waited for. */
    private static final int MAX_GZIP_HEADER = 64 * 1024;
    private static final int FHCRC = 0x02;
    private static final int FEXTRA = 0x04;
    private static final int FNAME = 0x08;
    private static final int FCOMMENT = 0x10;
    private static final byte[] NONE = new byte[0];

    private enum State {
        /** Before a gzip member's header is complete, or before deflate's first two bytes tell zlib from raw. */
        START,
        DATA,
        /** A gzip member's CRC-32 and length. */
        TRAILER,
        /** Past the end: what follows is ignored. */
        END
    }

    private final StreamDecoder inner;
    private final TokenEventSink sink;
    private final boolean gzip;
    private final CRC32 memberCrc;
    private Inflater inflater;
    private State state = State.START;
    private int members;
    private byte[] held = NONE;   // input not given to the inflater: a header or trailer still incomplete
    private byte[] room;          // the inflater's output space, allocated at the first inflating
    private byte[] inflated;      // this read's output not yet handed on: inflatedLength bytes
    private int inflatedLength;
    private long in;
    private long out;
    private boolean failed;

    private InflatingDecoder(StreamDecoder inner, TokenEventSink sink, boolean gzip) {
        this.inner = inner;
        this.sink = sink;
        this.gzip = gzip;
        this.memberCrc = gzip ? new CRC32() : null;
    }

    /** True for a Content-Encoding this decoder inflates (null and identity need none). */
    public static boolean inflates(String contentEncoding) {
        return gzip(contentEncoding) != null;
    }

    /** True when a Content-Encoding leaves the body as it is. */
    public static boolean identity(String contentEncoding) {
        return contentEncoding == null || contentEncoding.isBlank()
                || contentEncoding.trim().equalsIgnoreCase("identity");
    }

    /** Wraps {@code inner} for a response with {@code contentEncoding} ({@link #inflates} must be true). */
    public static StreamDecoder wrap(StreamDecoder inner, TokenEventSink sink, String contentEncoding) {
        return new InflatingDecoder(inner, sink, gzip(contentEncoding));
    }

    /** True for gzip, false for deflate, null for an encoding this decoder does not inflate. */
    private static Boolean gzip(String contentEncoding) {
        if (contentEncoding == null) {
            return null;
        }
        return switch (contentEncoding.trim().toLowerCase(Locale.ROOT)) {
            case "gzip", "x-gzip" -> true;
            case "deflate" -> false;
            default -> null;
        };
    }

    @Override
    public ByteBuf onChunk(ByteBuf chunk, long nanos) {
        onData(chunk, chunk.readerIndex(), chunk.readableBytes(), nanos);
        return chunk;
    }

    /** The compressed bytes pass as they are; an inflated copy goes to the inner decoder. */
    @Override
    public ByteBuf onData(ByteBuf read, int index, int length, long nanos) {
        if (!failed) {
            in += length;
            try {
                inflate(ByteBufUtil.getBytes(read, index, length), nanos);
            } catch (DataFormatException | RuntimeException e) {
                handOn(nanos); // what this read inflated to before the damage still counts
                fail();
            }
        }
        return null;
    }

    @Override
    public ByteBuf onEnd(long nanos) {
        if (!failed) {
            // every read was inflated as far as it goes: nothing is left to get out (a truncated body ends short)
            release();
            inner.onEnd(nanos).release();
        }
        return Unpooled.EMPTY_BUFFER;
    }


    /** Inflates one read as far as it goes and hands the output on, stamped {@code nanos}. */
    private void inflate(byte[] bytes, long nanos) throws DataFormatException {
        byte[] input = held.length == 0 ? bytes : concat(held, bytes);
        held = NONE;
        int pos = 0;
        inflated = null;
        while (!failed) {
            if (state == State.START) {
                int header = gzip ? gzipHeader(input, pos) : deflateStart(input, pos);
                if (header < 0) {
                    held = Arrays.copyOfRange(input, pos, input.length);
                    break;
                }
                pos += header;
            } else if (state == State.DATA) {
                if (inflater.needsInput() && pos < input.length) {
                    inflater.setInput(input, pos, input.length - pos);
                    pos = input.length;
                }
                if (room == null) {
                    room = new byte[8192];
                }
                int n = inflater.inflate(room);
                if (n > 0) {
                    emit(n, nanos);
                } else if (inflater.finished()) {
                    pos = input.length - inflater.getRemaining();
                    state = gzip ? State.TRAILER : State.END;
                } else if (inflater.needsDictionary()) {
                    throw new DataFormatException("a preset dictionary is needed");
                } else if (inflater.needsInput()) {
                    break; // all input taken, all output out: the next read goes on
                } else {
                    throw new DataFormatException("the inflater stalled");
                }
            } else if (state == State.TRAILER) {
                if (input.length - pos < 8) {
                    held = Arrays.copyOfRange(input, pos, input.length);
                    break;
                }
                if (littleEndian(input, pos, 4) != memberCrc.getValue()
                        || littleEndian(input, pos + 4, 4) != (inflater.getBytesWritten() & 0xFFFFFFFFL)) {
                    throw new DataFormatException("corrupt gzip trailer");
                }
                pos += 8;
                state = State.START; // another member may follow
            } else {
                break;
            }
        }
        handOn(nanos);
    }

    /**
     * deflate: zlib-wrapped when the first two bytes are a zlib header (RFC 1950: CM 8, a window of at most 32 KiB,
     * CMF and FLG a multiple of 31), else raw. Netty's guess took only a 32 KiB window for zlib, and read zlib with a
     * smaller one as raw. Returns the header bytes to skip (none: zlib reads its own), or -1 until two have come.
     */
    private int deflateStart(byte[] input, int pos) {
        if (input.length - pos < 2) {
            return -1;
        }
        int cmf = input[pos] & 0xFF;
        int flg = input[pos + 1] & 0xFF;
        boolean zlib = (cmf & 0x0F) == 8 && cmf >>> 4 <= 7 && (cmf << 8 | flg) % 31 == 0;
        inflater = new Inflater(!zlib);
        state = State.DATA;
        return 0;
    }

    /**
     * gzip: the length of the member header at {@code pos}, or -1 while it is incomplete. A malformed first header is
     * damage; after a member, as for {@code GZIPInputStream}, it ends the body (trailing bytes are ignored). The
     * reserved flag bits are ignored, as java.util.zip does.
     */
    private int gzipHeader(byte[] input, int pos) throws DataFormatException {
        int end = input.length;
        int available = end - pos;
        if (available == 0) {
            return -1;
        }
        // the fixed part is checked as far as it has come: a wrong byte need not wait for the rest
        boolean valid = (input[pos] & 0xFF) == 0x1F && (available < 2 || (input[pos + 1] & 0xFF) == 0x8B)
                && (available < 3 || input[pos + 2] == 8);
        int p = pos + 10;
        if (valid && p <= end) {
            int flags = input[pos + 3] & 0xFF;
            if ((flags & FEXTRA) != 0) {
                p = p + 2 <= end ? p + 2 + (int) littleEndian(input, p, 2) : end + 1;
            }
            if ((flags & FNAME) != 0) {
                p = afterZero(input, p);
            }
            if ((flags & FCOMMENT) != 0) {
                p = afterZero(input, p);
            }
            if ((flags & FHCRC) != 0) {
                if (p + 2 <= end) {
                    CRC32 headerCrc = new CRC32();
                    headerCrc.update(input, pos, p - pos);
                    valid = (headerCrc.getValue() & 0xFFFF) == littleEndian(input, p, 2);
                }
                p += 2;
            }
        }
        if (!valid || p > end && available > MAX_GZIP_HEADER) {
            if (members == 0) {
                throw new DataFormatException("not a gzip header");
            }
            state = State.END;
            return available;
        }
        if (p > end) {
            return -1;
        }
        members++;
        if (inflater == null) {
            inflater = new Inflater(true);
        } else {
            inflater.reset();
        }
        memberCrc.reset();
        state = State.DATA;
        return p - pos;
    }

    /** Just past the zero byte that ends a header field from {@code p}; past {@code input}'s end when it has none. */
    private static int afterZero(byte[] input, int p) {
        while (p < input.length && input[p] != 0) {
            p++;
        }
        return p + 1;
    }

    private void emit(int n, long nanos) {
        out += n;
        if (out > MAX_RATIO * Math.max(in, 1024)) {
            handOn(nanos); // what came before the bound still counts
            fail();
            return;
        }
        if (memberCrc != null) {
            memberCrc.update(room, 0, n);
        }
        if (inflated == null) {
            inflated = new byte[Math.max(n, 1024)];
            inflatedLength = 0;
        } else if (inflatedLength + n > inflated.length) {
            inflated = Arrays.copyOf(inflated, Math.max(inflatedLength + n, 2 * inflated.length));
        }
        System.arraycopy(room, 0, inflated, inflatedLength, n);
        inflatedLength += n;
        if (inflatedLength >= HAND_ON_BYTES) {
            handOn(nanos);
        }
    }

    private void handOn(long nanos) {
        if (inflated != null && inflatedLength > 0) {
            ByteBuf bytes = Unpooled.wrappedBuffer(inflated, 0, inflatedLength);
            inflated = null;
            inner.onChunk(bytes, nanos).release(); // the inner decoder measures; what it would forward is not used
        }
    }

    private void fail() {
        failed = true;
        inflated = null;
        held = NONE;
        sink.onUndecodable();
        release();
    }

    private void release() {
        if (inflater != null) {
            inflater.end();
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }

    private static long littleEndian(byte[] bytes, int at, int length) {
        long value = 0;
        for (int i = length - 1; i >= 0; i--) {
            value = value << 8 | bytes[at + i] & 0xFF;
        }
        return value;
    }
}
