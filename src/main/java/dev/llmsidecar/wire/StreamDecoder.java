package dev.llmsidecar.wire;

import io.vertx.core.buffer.Buffer;

/**
 * One wire format's view of a response body. It observes the bytes as they arrive and reports token events to
 * a {@link TokenEventSink}; it returns the bytes to forward, which are the received bytes themselves except
 * where a format documents a removal (the injected include_usage chunk).
 */
public interface StreamDecoder {

    /** Observes one read from upstream; returns what to write to the client now (possibly empty, never null). */
    Buffer onChunk(Buffer chunk, long nanos);

    /** The upstream body ended; returns any bytes still held (usually empty). */
    Buffer onEnd(long nanos);
}
