package dev.llmsidecar.wire.openai;

import dev.llmsidecar.wire.SseEventSplitter;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import io.vertx.core.buffer.Buffer;

/**
 * OpenAI chat/completions streaming (SSE, {@code data: {...}} chunks, {@code data: [DONE]}).
 *
 * <p>Without stripping every read is forwarded as is, at once. With stripping (the sidecar injected
 * include_usage), complete events are forwarded at once and only an event still incomplete at the end of a
 * read is held until its terminating empty line arrives (an SSE client cannot act on it before that either),
 * so that the usage-only chunk can be removed whole.
 */
public final class OpenAiSseDecoder implements StreamDecoder, SseEventSplitter.Listener {

    private static final Buffer EMPTY = Buffer.buffer(0);

    private final TokenEventSink sink;
    private final OpenAiChunkParser parser;
    private final SseEventSplitter splitter;
    private final int maxHeldBytes;
    private boolean strip;

    private long nanos;
    private Buffer held;          // bytes received but not yet forwarded (strip mode)
    private long heldStart;       // stream offset of held[0]
    private long forwardedUpTo;   // stream offset up to which bytes were forwarded or dropped
    private Buffer out;           // output being assembled for the current read (strip mode)
    private boolean lastEventStripped;
    private boolean usageSeen;
    private int strippedEvents;

    public OpenAiSseDecoder(TokenEventSink sink, OpenAiChunkParser parser, boolean stripUsageChunk,
            int maxHeldBytes) {
        this.sink = sink;
        this.parser = parser;
        this.strip = stripUsageChunk;
        this.maxHeldBytes = maxHeldBytes;
        this.splitter = new SseEventSplitter(this, maxHeldBytes);
    }

    /** Number of usage-only chunks removed from the client stream (0 or 1 in practice). */
    public int strippedEvents() {
        return strippedEvents;
    }

    /** True while stripping is active (false once given up, e.g. an event larger than the hold limit). */
    public boolean stripping() {
        return strip;
    }

    @Override
    public Buffer onChunk(Buffer chunk, long nanos) {
        this.nanos = nanos;
        if (!strip) {
            splitter.feed(chunk);
            return chunk;
        }
        long chunkStart = splitter.offset();
        boolean heldIsChunk = held == null || held.length() == 0;
        if (heldIsChunk) {
            held = chunk;
            heldStart = chunkStart;
        } else {
            held = held.copy().appendBuffer(chunk);
        }
        out = null;
        splitter.feed(chunk);
        long boundary = splitter.lastBoundary();
        if (heldIsChunk && out == null && forwardedUpTo == heldStart && boundary == heldStart + held.length()) {
            // common case: nothing dropped, everything complete: forward the received buffer itself
            forwardedUpTo = boundary;
            held = null;
            heldStart = boundary;
            return chunk;
        }
        emitUpTo(boundary);
        Buffer result = out == null ? EMPTY : out;
        out = null;
        if (held.length() - (int) (forwardedUpTo - heldStart) > maxHeldBytes) {
            // an event too large to hold: stop stripping for this stream and forward everything
            strip = false;
            emitUpTo(heldStart + held.length());
            result = out;
            out = null;
        }
        compactHeld();
        return result;
    }

    @Override
    public Buffer onEnd(long nanos) {
        this.nanos = nanos;
        if (held == null) {
            return EMPTY;
        }
        out = null;
        emitUpTo(heldStart + held.length());
        Buffer rest = out == null ? EMPTY : out;
        held = null;
        out = null;
        return rest;
    }

    @Override
    public void onEvent(byte[] data, int length, String eventType, boolean oversize, long start, long end) {
        lastEventStripped = false;
        if (oversize) {
            sink.onUndecodable();
            return;
        }
        if (length == 0) {
            return; // comment-only block or keep-alive
        }
        if (isDone(data, length)) {
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
        if (strip && chunk.isUsageOnly() && !usageSeen) {
            emitUpTo(start);
            forwardedUpTo = end;
            lastEventStripped = true;
            strippedEvents++;
        }
        usageSeen |= chunk.usage() != null && chunk.isUsageOnly();
    }

    @Override
    public void onEventEndExtended(long newEnd) {
        if (strip && lastEventStripped && forwardedUpTo == newEnd - 1) {
            forwardedUpTo = newEnd; // the LF of a CRLF belongs to the dropped event
        }
    }

    private void emitUpTo(long streamOffset) {
        if (streamOffset <= forwardedUpTo) {
            return;
        }
        int from = (int) (forwardedUpTo - heldStart);
        int to = (int) (streamOffset - heldStart);
        if (out == null) {
            out = Buffer.buffer(to - from);
        }
        out.appendBuffer(held, from, to - from);
        forwardedUpTo = streamOffset;
    }

    private void compactHeld() {
        int consumed = (int) (forwardedUpTo - heldStart);
        if (consumed <= 0) {
            return;
        }
        held = consumed >= held.length() ? null : held.getBuffer(consumed, held.length());
        heldStart = forwardedUpTo;
    }

    private static boolean isDone(byte[] data, int length) {
        return length == 6 && data[0] == '[' && data[1] == 'D' && data[2] == 'O' && data[3] == 'N'
                && data[4] == 'E' && data[5] == ']';
    }
}
