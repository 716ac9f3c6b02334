package dev.llmsidecar.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * One wire format's view of a response body. It observes the bytes as they arrive and reports token events to
 * a {@link TokenEventSink}; it returns the bytes to forward, which are the received bytes themselves except
 * where a rewrite asked its decoder to cut (OpenAI's, for include_usage).
 *
 * <p>Ownership: a decoder takes the reference to each read it is given and hands back one to what it returns. The
 * common case returns the read itself (the same object: nothing copied); a decoder that forwards other bytes has
 * released the read, or kept slices of it in what it returns.
 */
public interface StreamDecoder {

    /** Observes one read from upstream; returns what to write to the client now (possibly empty, never null). */
    ByteBuf onChunk(ByteBuf chunk, long nanos);

    /**
     * The raw relay's call: observes the data bytes {@code [index, index + length)} of {@code read} where they lie
     * (the read stays the caller's: not released, not retained) and returns null when the client gets exactly those
     * bytes, or the bytes to send in their place (a buffer the caller owns, possibly empty: the decoder holds or cut
     * some). Only a decoder that {@link #edits} returns non-null. This default reads a slice through {@link #onChunk};
     * the decoders of the hot path read the range itself.
     */
    default ByteBuf onData(ByteBuf read, int index, int length, long nanos) {
        ByteBuf view = read.retainedSlice(index, length);
        ByteBuf out = onChunk(view, nanos);
        if (out == view) {
            view.release();
            return null;
        }
        return out;
    }

    /** Whether this decoder may forward other bytes than it was given (a rewrite asked it to cut). */
    default boolean edits() {
        return false;
    }

    /** The upstream body ended; returns any bytes still held (usually none). */
    ByteBuf onEnd(long nanos);

    /**
     * The upstream broke off: returns the bytes held back so far (an incomplete event), which reach the client as
     * they would have directly, without decoding them further.
     */
    default ByteBuf releaseHeld() {
        return Unpooled.EMPTY_BUFFER;
    }
}
