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

    /**
     * The upstream broke off: returns the bytes held back so far (an incomplete event), which reach the client as
     * they would have directly, without decoding them further.
     */
    default Buffer releaseHeld() {
        return Buffer.buffer(0);
    }

    /**
     * True when the decoder holds on to the buffers it is given beyond the call (to forward them later with a part
     * removed): the proxy then hands it a copy, as the bytes it reads are lent for the call only.
     */
    default boolean keepsChunks() {
        return false;
    }

    /** What the decoder saw and did about usage; {@link UsageReport#NONE} for formats without usage handling. */
    default UsageReport usageReport() {
        return UsageReport.NONE;
    }
}
