package dev.llmsidecar.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Incremental text/event-stream framing (WHATWG rules: one leading UTF-8 BOM ignored; LF, CRLF or CR line ends;
 * ':' comments; data lines joined with LF; an empty line dispatches; one extension: llama.cpp's {@code error:} line is
 * read as an {@code error} event with that data). Bytes are only read, never changed; events may be split across
 * reads at any byte, and one read may hold many events.
 *
 * <p>Stream offsets are reported so a caller can drop exactly one event's bytes (include_usage stripping).
 *
 * <p>One pass: a read is scanned where it lies (a heap buffer) or after one bulk copy into the thread's block (the
 * direct buffers sockets read into); a line that ends within the read is taken from there, so only data values are
 * copied, once, into the event's data.
 */
public final class SseEventSplitter {

    /** Receives each event when its terminating empty line has been read. */
    public interface Listener {
        /**
         * @param data the event's data (data lines joined by LF); valid only during the call
         * @param dataLength bytes of {@code data} in use; 0 for an event with no data line (comments only)
         * @param eventType value of the last {@code event:} field, or null
         * @param oversize true when the event exceeded the size limit and its data was not kept
         * @param startOffset stream offset of the event's first byte
         * @param endOffset stream offset just past the empty line that ended it
         */
        void onEvent(byte[] data, int dataLength, String eventType, boolean oversize, long startOffset, long endOffset);

        /**
         * A LF followed the CR that ended an event; by the WHATWG rules it completes that CRLF, and the event really
         * ended at {@code newEndOffset}.
         *
         * @param crlfLines the event's last field line ended in CRLF too: the LF is most likely the end of the
         *     event's empty line as its writer meant it, not a bare LF written after an event of CR-ended lines
         */
        default void onEventEndExtended(long newEndOffset, boolean crlfLines) {
        }
    }

    private static final byte[] DATA = "data".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT = "event".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ERROR = "error".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BOM = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};

    private static final byte[] NONE = new byte[0];
    /** Scratch buffers grown beyond this are not kept for the thread (one huge event must not pin memory). */
    private static final int MAX_KEPT_SCRATCH = 64 * 1024;

    /**
     * Per event-loop thread: the block a read is copied into, and the line and data buffers lent to the splitter
     * being fed. A stream keeps buffers of its own only while a line or an event is incomplete at the end of a
     * read; between events (the usual state of thousands of open streams) it holds none.
     */
    private static final class Scratch {
        final byte[] block = new byte[8192];
        byte[] line = new byte[512];
        byte[] data = new byte[2048];
        boolean busy;
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private final Listener listener;
    private final int maxEventBytes;

    // NONE, the thread's scratch during a feed, or the stream's own copy of an incomplete line or event
    private byte[] line = NONE;
    private int lineLength;
    // Separate from lineLength: an oversize event keeps no bytes, yet its lines are not empty lines.
    private boolean lineNonEmpty;
    // the line was read where it lay (takeLine): its field is done
    private boolean lineTaken;
    private byte[] data = NONE;
    private int dataLength;
    private boolean hasData;
    private String eventType;
    private boolean oversize;
    private int eventBytes;
    private boolean lent;   // line and data are the thread's scratch (during a feed only)

    private long offset;
    private long eventStart;
    private long lastBoundary;
    private boolean afterCr;
    private boolean crEndedEvent;
    // the last line end was a CRLF (false for LF, and for a CR once the next byte is known not to be LF)
    private boolean lastLineCrlf;
    private boolean crlfEvent;
    // bytes of a leading BOM matched so far (it may be split across reads); -1 once the stream's start is decided
    private int bomMatched;

    public SseEventSplitter(Listener listener, int maxEventBytes) {
        this.listener = listener;
        this.maxEventBytes = maxEventBytes;
    }

    /** Stream offset just past the last complete event (everything before it has been dispatched). */
    public long lastBoundary() {
        return lastBoundary;
    }

    /** Total bytes fed so far. */
    public long offset() {
        return offset;
    }

    /**
     * True when the incomplete event (after {@link #lastBoundary()}) has gone over the size limit, which counts line
     * bytes, not line ends: it will be reported oversize, without its data.
     */
    public boolean incompleteEventOversize() {
        return oversize;
    }

    /** Feeds the readable bytes of {@code chunk} (its indices are left as they are). */
    public void feed(ByteBuf chunk) {
        feed(chunk, chunk.readerIndex(), chunk.readableBytes());
    }

    /** Feeds the bytes {@code [from, from + n)} of {@code buf} where they lie (its indices are left as they are). */
    public void feed(ByteBuf buf, int from, int n) {
        if (buf.hasArray()) {
            int start = buf.arrayOffset() + from;
            feed(buf.array(), start, start + n);
            return;
        }
        Scratch scratch = SCRATCH.get();
        if (scratch.busy) {
            // fed from inside another stream's listener: the thread's block is in use
            byte[] bytes = ByteBufUtil.getBytes(buf, from, n);
            feed(bytes, 0, bytes.length);
            return;
        }
        byte[] block = scratch.block;
        borrow(scratch);
        try {
            // copy in blocks (one bulk copy each, no allocation), then scan plain arrays
            for (int done = 0; done < n; done += block.length) {
                int len = Math.min(block.length, n - done);
                buf.getBytes(from + done, block, 0, len);
                scan(block, 0, len);
            }
        } finally {
            keepOnlyIncomplete(scratch);
        }
    }

    /** Feeds {@code bytes[from, to)}. */
    public void feed(byte[] bytes, int from, int to) {
        Scratch scratch = SCRATCH.get();
        if (scratch.busy) {
            // fed from inside another stream's listener: scan with this stream's own buffers
            refuseReentry();
            scan(bytes, from, to);
            keepOnlyIncomplete(null);
            return;
        }
        borrow(scratch);
        try {
            scan(bytes, from, to);
        } finally {
            keepOnlyIncomplete(scratch);
        }
    }

    /** Bytes of buffer this stream holds between reads (0 unless a line or an event is incomplete). */
    public int heldBufferBytes() {
        return line.length + data.length;
    }

    /** Marks the thread's scratch busy and, unless this stream holds an incomplete event, lends it its buffers. */
    private void borrow(Scratch scratch) {
        scratch.busy = true;
        if (line == NONE && data == NONE) {
            lent = true;
            line = scratch.line;
            data = scratch.data;
        }
    }

    private void refuseReentry() {
        if (lent) {
            throw new IllegalStateException("an SSE splitter was fed again from its own listener");
        }
    }

    /** After a feed: returns lent buffers, and keeps a copy of an incomplete line or event only. */
    private void keepOnlyIncomplete(Scratch scratch) {
        if (scratch != null) {
            scratch.busy = false;
        }
        if (lent) {
            lent = false;
            // the thread keeps what scanning grew, within reason
            if (line.length <= MAX_KEPT_SCRATCH) {
                scratch.line = line;
            }
            if (data.length <= MAX_KEPT_SCRATCH) {
                scratch.data = data;
            }
            line = lineLength > 0 ? Arrays.copyOf(line, lineLength) : NONE;
            data = dataLength > 0 ? Arrays.copyOf(data, dataLength) : NONE;
        } else if (lineLength == 0 && dataLength == 0) {
            line = NONE;
            data = NONE;
        }
    }

    private void scan(byte[] bytes, int from, int to) {
        int i = bomMatched < 0 ? from : skipBom(bytes, from, to);
        while (i < to) {
            if (afterCr) {
                afterCr = false;
                if (bytes[i] == '\n') {
                    lastLineCrlf = true;
                    offset++;
                    i++;
                    if (crEndedEvent) {
                        crEndedEvent = false;
                        lastBoundary = offset;
                        eventStart = offset;
                        listener.onEventEndExtended(offset, crlfEvent);
                    }
                    continue;
                }
                lastLineCrlf = false;
                crEndedEvent = false;
            }
            int j = i;
            while (j < to && bytes[j] != '\n' && bytes[j] != '\r') {
                j++;
            }
            if (j > i) {
                if (j < to && lineLength == 0 && !lineNonEmpty) {
                    takeLine(bytes, i, j - i); // the whole line is here: read it in place
                } else {
                    appendToLine(bytes, i, j - i);
                }
                offset += j - i;
            }
            if (j == to) {
                return;
            }
            long here = offset++;
            afterCr = bytes[j] == '\r';
            if (!afterCr) {
                lastLineCrlf = false;
            }
            endLine(here + 1);
            i = j + 1;
        }
    }

    /**
     * WHATWG: "One leading U+FEFF BYTE ORDER MARK character must be ignored" (it would hide the first line's field
     * name). Returns where the line bytes start; a partial match turns out to be line bytes after all.
     */
    private int skipBom(byte[] bytes, int from, int to) {
        int i = from;
        while (i < to && bomMatched < BOM.length) {
            if (bytes[i] != BOM[bomMatched]) {
                int matched = bomMatched;
                bomMatched = -1;
                if (matched > 0) {
                    appendToLine(BOM, 0, matched);
                }
                return i;
            }
            bomMatched++;
            offset++;
            i++;
        }
        if (bomMatched == BOM.length) {
            bomMatched = -1;
        }
        return i;
    }

    private void appendToLine(byte[] bytes, int from, int length) {
        lineNonEmpty = true;
        if (oversize) {
            return;
        }
        if (eventBytes + (long) length > maxEventBytes) {
            oversize = true;
            lineLength = 0;
            dataLength = 0;
            return;
        }
        eventBytes += length;
        if (lineLength + length > line.length) {
            line = Arrays.copyOf(line, Math.max(lineLength + length, line.length * 2));
        }
        System.arraycopy(bytes, from, line, lineLength, length);
        lineLength += length;
    }

    /** A line that lies whole in {@code bytes}, none of it held from an earlier read: no copy of it is made. */
    private void takeLine(byte[] bytes, int from, int length) {
        lineNonEmpty = true;
        lineTaken = true;
        if (oversize) {
            return;
        }
        if (eventBytes + (long) length > maxEventBytes) {
            oversize = true;
            dataLength = 0;
            return;
        }
        eventBytes += length;
        if (bytes[from] != ':') {
            processField(bytes, from, from + length);
        }
    }

    private void endLine(long endOffset) {
        if (!lineNonEmpty) {
            dispatch(endOffset);
            return;
        }
        if (!lineTaken && !oversize && line[0] != ':') {
            processField(line, 0, lineLength);
        }
        lineLength = 0;
        lineNonEmpty = false;
        lineTaken = false;
    }

    /** The field of the line {@code bytes[from, to)}. */
    private void processField(byte[] bytes, int from, int to) {
        int colon = indexOf(bytes, from, to, (byte) ':');
        int nameEnd = colon < 0 ? to : colon;
        int valueStart = colon < 0 ? to : colon + 1;
        if (valueStart < to && bytes[valueStart] == ' ') {
            valueStart++;
        }
        boolean error = fieldIs(ERROR, bytes, from, nameEnd);
        if (error) {
            // llama.cpp server writes stream errors as a non-standard "error: {json}" line: read it as an error event
            eventType = "error";
        }
        if (error || fieldIs(DATA, bytes, from, nameEnd)) {
            int valueLength = to - valueStart;
            int needed = dataLength + (hasData ? 1 : 0) + valueLength;
            if (needed > data.length) {
                data = Arrays.copyOf(data, Math.max(needed, data.length * 2));
            }
            if (hasData) {
                data[dataLength++] = '\n';
            }
            System.arraycopy(bytes, valueStart, data, dataLength, valueLength);
            dataLength += valueLength;
            hasData = true;
        } else if (fieldIs(EVENT, bytes, from, nameEnd)) {
            eventType = new String(bytes, valueStart, to - valueStart, StandardCharsets.UTF_8);
        }
    }

    private static boolean fieldIs(byte[] name, byte[] bytes, int from, int nameEnd) {
        if (nameEnd - from != name.length) {
            return false;
        }
        for (int i = 0; i < name.length; i++) {
            if (bytes[from + i] != name[i]) {
                return false;
            }
        }
        return true;
    }

    private void dispatch(long endOffset) {
        crlfEvent = lastLineCrlf;
        listener.onEvent(data, hasData ? dataLength : 0, eventType, oversize, eventStart, endOffset);
        crEndedEvent = afterCr;
        lastBoundary = endOffset;
        eventStart = endOffset;
        dataLength = 0;
        hasData = false;
        eventType = null;
        oversize = false;
        eventBytes = 0;
    }

    private static int indexOf(byte[] bytes, int from, int to, byte wanted) {
        for (int i = from; i < to; i++) {
            if (bytes[i] == wanted) {
                return i;
            }
        }
        return -1;
    }
}
