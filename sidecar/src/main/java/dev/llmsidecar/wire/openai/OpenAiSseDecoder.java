package dev.llmsidecar.wire.openai;

import dev.llmsidecar.wire.ResponseModelProbe;
import dev.llmsidecar.wire.SseEventSplitter;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ByteProcessor;
import java.util.Arrays;
import java.util.Set;

/**
 * OpenAI chat/completions streaming (SSE, {@code data: {...}} chunks, {@code data: [DONE]}).
 *
 * <p>One pass per read: the SSE splitter frames the bytes where they lie, each complete event's data is read once by
 * the chunk parser, and that reading also tells whether include_usage left anything in it to remove. Only an event
 * that holds a usage member besides a usage-only chunk (OpenAI's {@code "usage":null} on every chunk, a usage merged
 * into the final chunk) is read a second time, by {@link UsageMemberFinder}, for the exact bytes to cut.
 *
 * <p>{@link UsageMode#PASS} and {@link UsageMode#OBSERVE}: every read is forwarded as is, at once. OBSERVE
 * (a stream the sidecar learns an engine's layout from, rare) also runs the finder over every byte, so that a usage
 * member the engine sends on its own is seen even in an event too large to read.
 * {@link UsageMode#REMOVE} (the sidecar turned include_usage on): every trace of it is removed, to the byte —
 * usage-only chunks ({@code "choices":[]}) whole, and usage members of chunks that stay with their separating comma.
 * Complete events are forwarded at once, as slices of the read (nothing is copied; a read with nothing to remove is
 * forwarded itself); an incomplete one is held (copied) until its terminating empty line (an SSE client cannot act on
 * it before that either) while it is no larger than {@code maxHeldEventBytes} (its line bytes, as the splitter counts
 * them: line ends come on top), because it may be a usage-only chunk. A larger event cannot be one: it streams on, read
 * by the finder as it passes, and only the few bytes of a member whose name is still being read wait.
 */
public final class OpenAiSseDecoder implements StreamDecoder, SseEventSplitter.Listener, UsageMemberFinder.Listener {

    /** Members every chunk may carry besides those of the first chunk (the usage chunk has no choices). */
    private static final Set<String> USAGE_CHUNK_OWN = Set.of("usage", "choices");
    private static final byte[] NONE = new byte[0];

    private final TokenEventSink sink;
    private final OpenAiChunkParser parser;
    private final SseEventSplitter splitter;
    private final UsageMode usage;
    private final ResponseModelProbe model;

    private long nanos;

    // REMOVE: bytes received but not forwarded: a copy of those of earlier reads from heldStart, then the read being
    // fed from currentStart; and the ranges to leave out ([from, to) pairs, sorted by from)
    private byte[] held = NONE;
    private long heldStart;
    private ByteBuf current;
    private int currentIndex;          // where in current the bytes being fed begin
    private long currentStart;
    private long[] cuts;
    private int cutPairs;
    private long lastDroppedEventEnd = -1;
    // created when an event needs it: one with a usage member to cut, or one too large to hold
    private UsageMemberFinder finder;
    private boolean finderStreaming;   // the finder follows an event too large to hold as its bytes come
    private boolean broken;             // a fault in decoding: the rest of the stream passes as it comes
    private long finderFedTo;
    private int eventMembersFound;

    private int chunksRemoved;
    private int membersRemoved;
    private int membersKept;
    private boolean usageMembers;
    private boolean tokenCounts;
    private boolean layoutDiffers;
    private java.util.List<String> firstChunkMembers;

    public OpenAiSseDecoder(TokenEventSink sink, OpenAiChunkParser parser, UsageMode usage, int maxHeldBytes) {
        this.sink = sink;
        this.parser = parser;
        this.usage = usage;
        this.model = parser.responseModelProbe();
        this.splitter = new SseEventSplitter(this, maxHeldBytes);
    }

    @Override
    public ByteBuf onChunk(ByteBuf chunk, long nanos) {
        ByteBuf out = onData(chunk, chunk.readerIndex(), chunk.readableBytes(), nanos);
        if (out == null) {
            return chunk; // the common case: nothing held, nothing cut
        }
        chunk.release(); // what goes on holds references of its own
        return out;
    }

    @Override
    public boolean edits() {
        return usage == UsageMode.REMOVE;
    }

    @Override
    public ByteBuf onData(ByteBuf read, int index, int length, long nanos) {
        this.nanos = nanos;
        if (broken) {
            return null;
        }
        if (usage != UsageMode.REMOVE) {
            try {
                if (usage == UsageMode.OBSERVE) {
                    read.forEachByte(index, length, finder());
                }
                splitter.feed(read, index, length);
            } catch (RuntimeException e) {
                fault();
            }
            return null;
        }
        current = read;
        currentIndex = index;
        currentStart = splitter.offset();
        long end = currentStart + length;
        try {
            long limit;
            try {
                splitter.feed(read, index, length);
                limit = splitter.lastBoundary();
                if (splitter.incompleteEventOversize()) {
                    // too large to be a usage-only chunk: it streams on, but for a member whose range is undecided
                    followOversizeEvent(limit, end);
                    limit = Math.min(end, finder.decidedUpTo());
                }
            } catch (RuntimeException e) {
                fault();
                cutPairs = 0;
                return forwardUpTo(end, end);
            }
            return forwardUpTo(limit, end);
        } finally {
            current = null;
        }
    }

    /**
     * A fault in the decoding itself (none is known; the fuzzers look for them): the stream is not decoded further,
     * what was held and every later byte go to the client as they came, and the stream counts as one whose usage
     * could not be removed, so include_usage is not turned on for the model again.
     */
    private void fault() {
        broken = true;
        membersKept++;
        sink.onUndecodable();
    }

    @Override
    public ByteBuf onEnd(long nanos) {
        this.nanos = nanos;
        return releaseHeld();
    }

    @Override
    public ByteBuf releaseHeld() {
        long end = heldStart + held.length;
        currentStart = end;
        return forwardUpTo(end, end);
    }

    /** What the decoder saw and did about usage, read once the stream has ended. */
    public UsageReport usageReport() {
        return new UsageReport(chunksRemoved, membersRemoved, membersKept, usageMembers, tokenCounts, layoutDiffers);
    }

    // ------------------------------------------------------------------------------------------- forwarding

    /**
     * Returns the bytes before stream offset {@code limit} that are not cut, and holds (copies) those from there to
     * {@code end}; null when they are exactly the bytes being fed (all of them go, none is cut, none was held).
     */
    private ByteBuf forwardUpTo(long limit, long end) {
        if (held.length == 0 && cutPairs == 0 && limit == end && current != null) {
            heldStart = end;
            return null;
        }
        ByteBuf[] pieces = new ByteBuf[2 * cutPairs + 2];
        int count = 0;
        long pos = heldStart;
        int kept = 0;
        for (int i = 0; i < cutPairs; i++) {
            long from = cuts[2 * i];
            long to = cuts[2 * i + 1];
            if (from >= limit) {
                cuts[2 * kept] = from;
                cuts[2 * kept + 1] = to;
                kept++;
                continue;
            }
            count = slice(pieces, count, pos, from);
            pos = Math.max(pos, Math.min(to, limit));
            if (to > limit) {
                cuts[2 * kept] = limit; // the rest of the range waits with the bytes it covers
                cuts[2 * kept + 1] = to;
                kept++;
            }
        }
        cutPairs = kept;
        count = slice(pieces, count, pos, limit);
        hold(Math.max(limit, heldStart), end);
        return count == 0 ? Unpooled.EMPTY_BUFFER : count == 1 ? pieces[0] : Unpooled.wrappedBuffer(count, pieces);
    }

    /** Adds the bytes {@code [from, to)} to {@code pieces}, as they lie: held bytes wrapped, the read's sliced. */
    private int slice(ByteBuf[] pieces, int count, long from, long to) {
        if (from >= to) {
            return count;
        }
        if (from < currentStart) {
            long heldTo = Math.min(to, currentStart);
            pieces[count++] = Unpooled.wrappedBuffer(held, (int) (from - heldStart), (int) (heldTo - from));
            from = heldTo;
        }
        if (from < to) {
            pieces[count++] = current.retainedSlice(currentIndex + (int) (from - currentStart), (int) (to - from));
        }
        return count;
    }

    /**
     * Keeps a copy of {@code [from, end)}: a fresh array each time, since parts of the old one may be on their way to
     * the client.
     */
    private void hold(long from, long end) {
        if (from >= end) {
            held = NONE;
            heldStart = end;
            return;
        }
        byte[] next = new byte[(int) (end - from)];
        int at = 0;
        if (from < currentStart) {
            at = (int) (currentStart - from);
            System.arraycopy(held, (int) (from - heldStart), next, 0, at);
            from = currentStart;
        }
        if (from < end) {
            current.getBytes(currentIndex + (int) (from - currentStart), next, at, (int) (end - from));
        }
        held = next;
        heldStart = end - next.length;
    }

    /** Feeds {@code p} the bytes {@code [from, to)}, which are held or in the read being fed. */
    private void readAgain(long from, long to, ByteProcessor p) {
        try {
            for (; from < to && from < currentStart; from++) {
                p.process(held[(int) (from - heldStart)]);
            }
            if (from < to) {
                current.forEachByte(currentIndex + (int) (from - currentStart), (int) (to - from), p);
            }
        } catch (Exception e) {
            throw new IllegalStateException(e); // the finder throws nothing
        }
    }

    private void cut(long from, long to) {
        if (to <= from) {
            return;
        }
        if (cuts == null) {
            cuts = new long[8];
        } else if (2 * cutPairs + 2 > cuts.length) {
            cuts = Arrays.copyOf(cuts, cuts.length * 2);
        }
        int at = cutPairs;
        while (at > 0 && cuts[2 * (at - 1)] > from) {
            cuts[2 * at] = cuts[2 * (at - 1)];
            cuts[2 * at + 1] = cuts[2 * (at - 1) + 1];
            at--;
        }
        cuts[2 * at] = from;
        cuts[2 * at + 1] = to;
        cutPairs++;
    }

    // ------------------------------------------------------------------------------------------ usage members

    private UsageMemberFinder finder() {
        if (finder == null) {
            finder = new UsageMemberFinder(this);
        }
        return finder;
    }

    /** An event too large to hold is open from {@code eventStart}: the finder reads it as far as it has come. */
    private void followOversizeEvent(long eventStart, long end) {
        if (!finderStreaming) {
            finderStreaming = true;
            finder().restartAt(eventStart);
            finderFedTo = eventStart;
        }
        readAgain(finderFedTo, end, finder);
        finderFedTo = end;
    }

    @Override
    public void onUsageMember(long from, long to) {
        usageMembers = true;
        if (usage == UsageMode.REMOVE) {
            eventMembersFound++;
            membersRemoved++;
            cut(from, to);
        }
    }

    /** Cuts the usage members of a complete event that stays; returns how many were found. */
    private int cutMembers(long start, long end) {
        eventMembersFound = 0;
        finder().restartAt(start);
        readAgain(start, end, finder);
        return eventMembersFound;
    }

    // ------------------------------------------------------------------------------------------------ events

    @Override
    public void onEvent(byte[] data, int length, String eventType, boolean oversize, long start, long end) {
        if (oversize) {
            sink.onUndecodable();
            if (usage == UsageMode.REMOVE) {
                followOversizeEvent(start, end); // to its end: the finder leaves off here
                finderStreaming = false;
            }
            return;
        }
        if (length == 0) {
            return; // comment-only block, keep-alive
        }
        if (isDone(data, length)) {
            sink.onTerminator();
            return;
        }
        OpenAiChunk chunk = parser.parse(data, 0, length);
        if (chunk == null) {
            sink.onUndecodable();
            return;
        }
        if (chunk.choicesPresent() && !chunk.choicesEmpty()) {
            sink.onDataChunk(nanos);
        }
        if (chunk.carriesToken()) {
            long cumulative = chunk.usage() == null ? -1 : chunk.usage().completionTokens();
            sink.onTokenChunk(nanos, !chunk.carriesContent(), cumulative);
        }
        chunk.reportTo(sink);
        model.look(data, 0, length, sink);
        tokenCounts |= chunk.usage() != null;
        usageMembers |= chunk.usageMember();
        if (usage == UsageMode.REMOVE) {
            removeUsage(chunk, data, length, start, end);
        }
    }

    private void removeUsage(OpenAiChunk chunk, byte[] data, int length, long start, long end) {
        if (firstChunkMembers == null && chunk.choicesPresent() && !chunk.choicesEmpty()) {
            firstChunkMembers = parser.memberNames(data, 0, length);
        }
        if (chunk.isUsageOnly()) {
            cut(start, end);
            lastDroppedEventEnd = end;
            chunksRemoved++;
            if (firstChunkMembers != null) {
                for (String name : parser.memberNames(data, 0, length)) {
                    if (!USAGE_CHUNK_OWN.contains(name) && !firstChunkMembers.contains(name)) {
                        layoutDiffers = true;
                    }
                }
            }
        } else if (chunk.usageMember() && cutMembers(start, end) == 0) {
            membersKept++; // an escaped name, or another line inside the object: it reaches the client
        }
    }

    @Override
    public void onEventEndExtended(long newEnd, boolean crlfLines) {
        // the LF of a CRLF belongs to the dropped event, not a bare LF after an event of CR-ended lines
        if (usage == UsageMode.REMOVE && lastDroppedEventEnd == newEnd - 1 && crlfLines) {
            cut(newEnd - 1, newEnd);
            lastDroppedEventEnd = newEnd;
        }
    }

    private static boolean isDone(byte[] data, int length) {
        return length == 6 && data[0] == '[' && data[1] == 'D' && data[2] == 'O' && data[3] == 'N'
                && data[4] == 'E' && data[5] == ']';
    }
}
