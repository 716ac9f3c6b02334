package dev.llmsidecar.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * A text/event-stream response observed as it passes: every read is forwarded at once and unchanged, and each
 * complete event goes to the format's {@link EventHandler} with the arrival time of the read that completed it.
 * Nothing thrown by a handler escapes to the event loop: it counts as undecodable.
 */
public final class SseDecoder implements StreamDecoder, SseEventSplitter.Listener {

    /** One format's reading of one SSE event. */
    public interface EventHandler {
        /**
         * @param data the event's data, valid only during the call
         * @param eventType the {@code event:} field, or null
         * @return false when the data could not be decoded
         */
        boolean onEvent(byte[] data, int length, String eventType, long nanos);
    }

    private final TokenEventSink sink;
    private final EventHandler handler;
    private final SseEventSplitter splitter;
    private final ResponseModelProbe model;
    private long nanos;
    private boolean broken;

    public SseDecoder(TokenEventSink sink, EventHandler handler, int maxEventBytes) {
        this(sink, handler, maxEventBytes, null);
    }

    /** @param model finds the answering model in the first events, or null for a format that never names it */
    public SseDecoder(TokenEventSink sink, EventHandler handler, int maxEventBytes, ResponseModelProbe model) {
        this.sink = sink;
        this.handler = handler;
        this.model = model;
        this.splitter = new SseEventSplitter(this, maxEventBytes);
    }

    @Override
    public ByteBuf onChunk(ByteBuf chunk, long nanos) {
        onData(chunk, chunk.readerIndex(), chunk.readableBytes(), nanos);
        return chunk;
    }

    @Override
    public ByteBuf onData(ByteBuf read, int index, int length, long nanos) {
        this.nanos = nanos;
        if (!broken) {
            try {
                splitter.feed(read, index, length);
            } catch (RuntimeException e) {
                broken = true;
                sink.onUndecodable();
            }
        }
        return null;
    }

    @Override
    public ByteBuf onEnd(long nanos) {
        return Unpooled.EMPTY_BUFFER;
    }

    @Override
    public void onEvent(byte[] data, int length, String eventType, boolean oversize, long start, long end) {
        if (oversize) {
            sink.onUndecodable();
            return;
        }
        if (length == 0) {
            return; // comments, keep-alives, retry-only events
        }
        DecodeGuard.run(sink, () -> handler.onEvent(data, length, eventType, nanos));
        if (model != null) {
            model.look(data, 0, length, sink);
        }
    }

    /** True for the OpenAI end-of-stream sentinel {@code [DONE]}. */
    public static boolean isDone(byte[] data, int length) {
        return length == 6 && data[0] == '[' && data[1] == 'D' && data[2] == 'O' && data[3] == 'N'
                && data[4] == 'E' && data[5] == ']';
    }
}
