package dev.llmsidecar.wire.openai;

import dev.llmsidecar.wire.ResponseModelProbe;
import dev.llmsidecar.wire.SseEventSplitter;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UsageHandling;
import dev.llmsidecar.wire.UsageReport;
import io.vertx.core.buffer.Buffer;
import java.util.Arrays;
import java.util.Set;

/**
 * OpenAI chat/completions streaming (SSE, {@code data: {...}} chunks, {@code data: [DONE]}).
 *
 * <p>{@link UsageHandling#PASS} and {@link UsageHandling#OBSERVE}: every read is forwarded as is, at once.
 * {@link UsageHandling#REMOVE} (the sidecar turned include_usage on): every trace of it is removed, to the byte —
 * usage-only chunks ({@code "choices":[]}) whole, and usage members of chunks that stay (OpenAI's
 * {@code "usage":null} on every chunk, a usage merged into the final chunk) with their separating comma. Complete
 * events are forwarded at once; an incomplete one is held until its terminating empty line (an SSE client cannot act
 * on it before that either) while it is no larger than {@code maxHeldEventBytes} (its line bytes, as the splitter
 * counts them: line ends come on top), because it may be a usage-only chunk. A larger event cannot be one: it streams
 * on, and only the few bytes of a member whose name is still being read wait ({@link UsageMemberFinder}).
 */
public final class OpenAiSseDecoder implements StreamDecoder, SseEventSplitter.Listener, UsageMemberFinder.Listener {

    private static final Buffer EMPTY = Buffer.buffer(0);
    /** Members every chunk may carry besides those of the first chunk (the usage chunk has no choices). */
    private static final Set<String> USAGE_CHUNK_OWN = Set.of("usage", "choices");

    private final TokenEventSink sink;
    private final OpenAiChunkParser parser;
    private final SseEventSplitter splitter;
    private final UsageHandling usage;
    private final UsageMemberFinder finder;
    private final ResponseModelProbe model;

    private long nanos;

    // REMOVE: bytes received but not yet forwarded, from stream offset heldStart, and the ranges to leave out
    private Buffer held;
    private long heldStart;
    private long[] cuts = new long[8];  // [from, to) pairs, sorted by from
    private int cutPairs;
    private long lastDroppedEventEnd = -1;

    private int chunksRemoved;
    private boolean usageMembers;
    private boolean tokenCounts;
    private boolean layoutDiffers;
    private Set<String> firstChunkMembers;

    public OpenAiSseDecoder(TokenEventSink sink, OpenAiChunkParser parser, UsageHandling usage, int maxHeldBytes) {
        this.sink = sink;
        this.parser = parser;
        this.usage = usage;
        this.model = parser.responseModelProbe();
        this.splitter = new SseEventSplitter(this, maxHeldBytes);
        this.finder = usage == UsageHandling.PASS ? null : new UsageMemberFinder(this);
    }

    @Override
    public Buffer onChunk(Buffer chunk, long nanos) {
        this.nanos = nanos;
        if (usage != UsageHandling.REMOVE) {
            if (finder != null) {
                feedFinder(chunk);
            }
            splitter.feed(chunk);
            return chunk;
        }
        long chunkStart = splitter.offset();
        boolean heldIsChunk = held == null;
        if (heldIsChunk) {
            held = chunk;
            heldStart = chunkStart;
        } else {
            held = Buffer.buffer(held.length() + chunk.length()).appendBuffer(held).appendBuffer(chunk);
        }
        feedFinder(chunk);
        splitter.feed(chunk);
        long end = splitter.offset();
        // an incomplete event that may still be a usage-only chunk waits for its end: one the splitter will read
        // (not oversize by its count of line bytes; counting line ends too forwarded part of one it then removed)
        long limit = splitter.incompleteEventOversize() ? end : splitter.lastBoundary();
        limit = Math.min(limit, finder.decidedUpTo());
        if (heldIsChunk && cutPairs == 0 && limit == end) {
            held = null; // the common case: the received buffer itself
            heldStart = end;
            return chunk;
        }
        return forwardUpTo(limit);
    }

    private void feedFinder(Buffer chunk) {
        chunk.getByteBuf().forEachByte(finder);
    }

    @Override
    public Buffer onEnd(long nanos) {
        this.nanos = nanos;
        return releaseHeld();
    }

    @Override
    public Buffer releaseHeld() {
        if (held == null) {
            return EMPTY;
        }
        return forwardUpTo(heldStart + held.length());
    }

    @Override
    public boolean keepsChunks() {
        return usage == UsageHandling.REMOVE;
    }

    @Override
    public UsageReport usageReport() {
        int found = finder == null ? 0 : finder.found();
        return new UsageReport(chunksRemoved, usage == UsageHandling.REMOVE ? Math.max(0, found - chunksRemoved) : 0,
                usageMembers, tokenCounts, layoutDiffers);
    }

    /** Forwards held bytes before stream offset {@code limit}, leaving out the cut ranges. */
    private Buffer forwardUpTo(long limit) {
        if (held == null || limit <= heldStart) {
            return EMPTY;
        }
        Buffer out = null;
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
            if (from > pos) {
                out = append(out, pos, from);
            }
            pos = Math.max(pos, Math.min(to, limit));
            if (to > limit) {
                cuts[2 * kept] = limit; // the rest of the range waits with the bytes it covers
                cuts[2 * kept + 1] = to;
                kept++;
            }
        }
        cutPairs = kept;
        if (pos < limit) {
            out = append(out, pos, limit);
        }
        int consumed = (int) (limit - heldStart);
        held = consumed >= held.length() ? null : held.getBuffer(consumed, held.length());
        heldStart = limit;
        return out == null ? EMPTY : out;
    }

    private Buffer append(Buffer out, long from, long to) {
        int start = (int) (from - heldStart);
        int length = (int) (to - from);
        if (out == null) {
            out = Buffer.buffer(Math.max(length, held.length() - start));
        }
        return out.appendBuffer(held, start, length);
    }

    private void cut(long from, long to) {
        if (to <= from) {
            return;
        }
        if (2 * cutPairs + 2 > cuts.length) {
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

    @Override
    public void onUsageMember(long from, long to) {
        usageMembers = true;
        if (usage == UsageHandling.REMOVE) {
            cut(from, to);
        }
    }

    @Override
    public void onEvent(byte[] data, int length, String eventType, boolean oversize, long start, long end) {
        if (oversize) {
            sink.onUndecodable();
            return;
        }
        if (length == 0 || isDone(data, length)) {
            return; // comment-only block, keep-alive, [DONE]
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
        if (usage == UsageHandling.REMOVE) {
            checkUsageChunk(chunk, data, length, start, end);
        }
    }

    private void checkUsageChunk(OpenAiChunk chunk, byte[] data, int length, long start, long end) {
        if (firstChunkMembers == null && chunk.choicesPresent() && !chunk.choicesEmpty()) {
            firstChunkMembers = parser.memberNames(data, 0, length);
        }
        if (!chunk.isUsageOnly()) {
            return;
        }
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
    }

    @Override
    public void onEventEndExtended(long newEnd) {
        if (usage == UsageHandling.REMOVE && lastDroppedEventEnd == newEnd - 1) {
            cut(newEnd - 1, newEnd); // the LF of a CRLF belongs to the dropped event
            lastDroppedEventEnd = newEnd;
        }
    }

    private static boolean isDone(byte[] data, int length) {
        return length == 6 && data[0] == '[' && data[1] == 'D' && data[2] == 'O' && data[3] == 'N'
                && data[4] == 'E' && data[5] == ']';
    }
}
