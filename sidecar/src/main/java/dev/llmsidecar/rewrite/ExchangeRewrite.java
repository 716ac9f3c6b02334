package dev.llmsidecar.rewrite;

import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.WireFormat;
import io.netty.buffer.ByteBuf;

/**
 * What one rewriting feature does to one exchange, called by the transport at the request body, the request head
 * going upstream, the response head and the end, in that order, from the exchange's event loop. Bytes of the
 * response body are not passed here one by one: a rewrite that edits them chooses the decoder that does
 * ({@link #decoder}), so that the one pass over each read both measures and cuts. Every method has a default that
 * leaves the exchange as the client sent it: {@link #NONE} is that rewrite.
 */
public interface ExchangeRewrite {

    /** Leaves everything as it is. */
    ExchangeRewrite NONE = new ExchangeRewrite() {
    };

    /** What the transport does once a response head arrived. */
    enum Verdict {
        /** The response goes to the client. */
        FORWARD,
        /**
         * Abandon this answer (nothing of it has been forwarded; the engine stops generating) and send the request as
         * the client wrote it, on a new connection ({@link #undo} first).
         */
        RESEND_AS_THE_CLIENT_WROTE_IT
    }

    /**
     * The body to send upstream: {@code clientBody} itself when unchanged, else a new buffer (the transport keeps the
     * client's own for a resend, and releases both).
     */
    default ByteBuf requestBody(ByteBuf clientBody) {
        return clientBody;
    }

    /** Edits the head of the request going upstream (after the trace context and hop-by-hop handling). */
    default void requestHeaders(Headers upstream) {
    }

    /** A response head arrived, before a byte of it is forwarded. */
    default Verdict responseHead(int status, Headers response) {
        return Verdict.FORWARD;
    }

    /**
     * The request goes out again as the client wrote it: undo this rewrite's edits of {@code upstreamRequest} (its
     * body edit is undone by the transport, which kept the client's own), and leave the answer to it unedited.
     */
    default void undo(Headers upstreamRequest) {
    }

    /**
     * The decoder of a 2xx response that will be decoded, or null for the format's own. A rewrite that edits the
     * response body returns a decoder that cuts in its single pass.
     */
    default StreamDecoder decoder(WireFormat format, TokenEventSink sink, UpstreamResponse response) {
        return null;
    }

    /**
     * Whether the response entity may differ from the engine's (known once {@link #decoder} was asked): a
     * length-framed response is then sent to the client chunked.
     */
    default boolean editsResponseBody() {
        return false;
    }

    /**
     * The exchange ended, once, however it ended.
     *
     * @param completedStream a 2xx token stream that ran to its end
     */
    default void ended(boolean completedStream) {
    }
}
