package dev.llmsidecar.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The chunked body of one response, relayed to the client as the bytes the engine's reads held: a strict
 * {@link ChunkedScanner} walks each read in place and hands the wire decoder the data ranges, and the read itself is
 * written beneath the client's codec, one write per read, framing and all. Nothing is decoded into HTTP objects and
 * nothing is copied.
 *
 * <p>A decoder that may cut bytes (include_usage's removal, {@link Decoding#edits}) is given whole chunks only: a chunk
 * cut by the end of a read waits (copied) until its end arrives, and is read again from its start then. A chunk whose
 * data the decoder returns unchanged still goes as the engine framed it; one it changes goes in its place with framing
 * of the relay's own, and every chunk after it as it came, so the client always gets a well-framed body whose entity
 * is the decoder's output. A chunk that grows past {@link #MAX_HELD_BYTES} before its end is not waited for: from its
 * start on, every piece of data goes through the decoder as it comes and out with the relay's framing (as the object
 * path frames each read). Confined to the exchange's event loop.
 */
final class RawRelay implements ChunkedScanner.Sink {

    /** The decoding side of the relayed body (the exchange's {@code LlmCall}, when it has a decoder). */
    interface Decoding {
        /** See {@code StreamDecoder.onData}: null when the range goes unchanged. */
        ByteBuf onData(ByteBuf read, int index, int length, long nanos);

        /** The body ended: what the decoder still held. */
        ByteBuf onEnd(long nanos);

        /** The body broke off: what the decoder held back. */
        ByteBuf releaseHeld();

        /** The decoder may cut bytes. */
        boolean edits();
    }

    /** Decoding that observes nothing: a body no decoder reads. */
    static final Decoding NONE = new Decoding() {
        @Override
        public ByteBuf onData(ByteBuf read, int index, int length, long nanos) {
            return null;
        }

        @Override
        public ByteBuf onEnd(long nanos) {
            return Unpooled.EMPTY_BUFFER;
        }

        @Override
        public ByteBuf releaseHeld() {
            return Unpooled.EMPTY_BUFFER;
        }

        @Override
        public boolean edits() {
            return false;
        }
    };

    /** Where the relay writes: beneath the client's codec. */
    interface Writer {
        void write(ByteBuf bytes);
    }

    /** What one read did to the body. */
    enum Step {
        /** More of the body is to come. */
        MORE,
        /** The body ended with this read, and the read held nothing after it. */
        END,
        /** The body ended, and bytes followed it: the connection cannot carry another response. */
        END_WITH_MORE_BYTES,
        /** A byte broke the framing: what came before it was relayed; both connections must close. */
        ANOMALY
    }

    private static final byte[] CRLF = {'\r', '\n'};
    /** The most of one chunk the relay waits for (include_usage holds at most one event of this size either). */
    static final int MAX_HELD_BYTES = 1 << 20;

    private final ChunkedScanner scanner = new ChunkedScanner();
    private final Decoding decoding;
    private final boolean editing;
    private final Writer writer;

    private long nanos;
    // editing: the start of the current chunk in the buffer being scanned, and its data range
    private int chunkStart;
    private int dataIndex;
    private int dataLength;
    // editing: the chunks from here on in the buffer being scanned are written as they came
    private int rawFrom;
    private ByteBuf scanned;
    private ByteBuf held;                    // editing: the start of a chunk a read cut, copied
    private boolean reframing;               // editing: a chunk too large to wait for; every piece framed anew
    private boolean reframed;
    private int writtenBytes;
    private boolean dataSeen;

    RawRelay(Decoding decoding, Writer writer) {
        this.decoding = decoding;
        this.editing = decoding.edits();
        this.writer = writer;
    }

    /** True once a chunk went with the relay's own framing (include_usage cut some of it). */
    boolean reframed() {
        return reframed;
    }

    /** What went wrong, for the log and the error: null unless {@link Step#ANOMALY}. */
    String anomaly() {
        return scanner.anomaly();
    }

    /** The last {@link #onRead} wrote bytes to the client (to be flushed when the read is complete). */
    boolean wrote() {
        return writtenBytes > 0;
    }

    /**
     * The last {@link #onRead} wrote bytes of the body's data, not framing alone (such as the last chunk): a
     * forwarded read, timed as the object path times it.
     */
    boolean wroteData() {
        return dataSeen && writtenBytes > 0;
    }

    /** One upstream read; takes its reference. */
    Step onRead(ByteBuf read, long nanos) {
        this.nanos = nanos;
        this.writtenBytes = 0;
        this.dataSeen = false;
        return editing ? edited(read) : passed(read);
    }

    // ---------------------------------------------------------------------------------------- bytes unchanged

    /** A decoder that only reads: every byte goes on at once, the read itself. */
    private Step passed(ByteBuf read) {
        int from = read.readerIndex();
        int to = read.writerIndex();
        int r = scanner.scan(read, from, to, this);
        if (r == ChunkedScanner.MORE) {
            write(read);
            return Step.MORE;
        }
        if (r == ChunkedScanner.ANOMALY) {
            read.writerIndex(scanner.anomalyIndex()); // what came before the damage, as it came
            write(read);
            return Step.ANOMALY;
        }
        Step step = r < to ? Step.END_WITH_MORE_BYTES : Step.END;
        read.writerIndex(r);
        write(read);
        return step;
    }

    @Override
    public void data(ByteBuf read, int index, int length) {
        dataSeen = true;
        if (!editing) {
            decoding.onData(read, index, length, nanos);
        } else if (reframing) {
            decodeAndFrame(read, index, length);
        } else {
            dataIndex = index;
            dataLength = length;
        }
    }

    /** Decodes a piece of data and writes what goes on in the relay's own framing. */
    private void decodeAndFrame(ByteBuf buf, int index, int length) {
        ByteBuf out = decoding.onData(buf, index, length, nanos);
        writeFramed(out != null ? out : buf.retainedSlice(index, length));
    }

    // ------------------------------------------------------------------------------------ bytes that may change

    /** A decoder that may cut: whole chunks only, each as it came unless the decoder changed it. */
    private Step edited(ByteBuf read) {
        ByteBuf buf = read;
        if (held != null) {
            CompositeByteBuf both = read.alloc().compositeBuffer(2);
            both.addComponents(true, held, read);
            held = null;
            buf = both;
        }
        int from = buf.readerIndex();
        int to = buf.writerIndex();
        scanned = buf;
        chunkStart = from;
        rawFrom = from;
        dataLength = 0;
        int r = scanner.scan(buf, from, to, this);
        Step step;
        if (r == ChunkedScanner.MORE) {
            step = Step.MORE;
            writeAsCame(buf, chunkStart);
            if (reframing) {
                rawFrom = to; // every piece went through the decoder as it came
            } else if (to - chunkStart > MAX_HELD_BYTES) {
                // too large to wait for: from this chunk's start on, each piece is framed anew as it comes
                reframing = true;
                reframed = true;
                if (dataLength > 0) {
                    decodeAndFrame(buf, dataIndex, dataLength);
                }
                rawFrom = to;
            } else if (chunkStart < to) {
                // a chunk the read cut: it waits for its end, and is scanned again from its start then
                held = buf.alloc().buffer(to - chunkStart);
                held.writeBytes(buf, chunkStart, to - chunkStart);
                scanner.reset();
            }
        } else if (r == ChunkedScanner.ANOMALY) {
            step = Step.ANOMALY;
            writeAsCame(buf, chunkStart);
            writeFramed(decoding.releaseHeld()); // an incomplete event held back reaches the client, as directly
        } else {
            step = r < to ? Step.END_WITH_MORE_BYTES : Step.END;
            // what the decoder still held goes before the last chunk, which goes as it came (its trailers too)
            writeAsCame(buf, chunkStart);
            writeFramed(decoding.onEnd(nanos));
            rawFrom = chunkStart;
            writeAsCame(buf, r);
        }
        scanned = null;
        buf.release();
        return step;
    }

    @Override
    public void chunkEnd(int index) {
        if (!editing || reframing) {
            chunkStart = index;
            rawFrom = index; // reframing: the chunk's pieces went already; its framing is the relay's own
            return;
        }
        ByteBuf out = decoding.onData(scanned, dataIndex, dataLength, nanos);
        if (out != null) {
            // the decoder changed this chunk: the chunks before it as they came, then its bytes, framed anew
            writeAsCame(scanned, chunkStart);
            writeFramed(out);
            rawFrom = index;
            reframed = true;
        }
        chunkStart = index;
        dataLength = 0;
    }

    /** Writes the chunks of {@code buf} from {@link #rawFrom} to {@code to} as they came. */
    private void writeAsCame(ByteBuf buf, int to) {
        if (rawFrom < to) {
            write(buf.retainedSlice(rawFrom, to - rawFrom));
            rawFrom = to;
        }
    }

    /** Writes {@code bytes} as one chunk of the relay's own framing (nothing for none); takes their reference. */
    private void writeFramed(ByteBuf bytes) {
        int n = bytes.readableBytes();
        if (n == 0) {
            bytes.release();
            return;
        }
        ByteBuf size = bytes.alloc().buffer(10);
        ByteBufUtil.writeAscii(size, Integer.toHexString(n));
        size.writeBytes(CRLF);
        write(size);
        write(bytes);
        write(Unpooled.wrappedBuffer(CRLF));
    }

    private void write(ByteBuf bytes) {
        writtenBytes += bytes.readableBytes();
        writer.write(bytes);
    }

    /**
     * The body broke off (the upstream closed or went quiet): what is held goes to the client as it would directly,
     * the decoder's held bytes first, then the cut chunk as it came.
     */
    void releaseHeld() {
        if (!editing) {
            return;
        }
        writeFramed(decoding.releaseHeld());
        if (held != null) {
            write(held);
            held = null;
        }
    }

    /** Lets go of what is held without writing it (the client is gone). */
    void discard() {
        if (held != null) {
            held.release();
            held = null;
        }
    }
}
