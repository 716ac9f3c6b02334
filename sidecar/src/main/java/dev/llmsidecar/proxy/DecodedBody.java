package dev.llmsidecar.proxy;

import dev.llmsidecar.proxy.FlowControl.Written;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * A response body through the codecs, the object path: each piece the upstream codec decoded goes to the wire decoder
 * and on to the client as the same {@link HttpContent}, a retained slice of the read (or, where the decoder changed
 * it, the decoder's bytes in its place), and the client's codec frames it. Every body the raw relay does not take
 * goes this way: HTTP/2 streams, HTTP/1.0 clients, bodyless responses, bodies framed by a length or by the close, a
 * rewrite's re-frame, the relay off ({@code RelayedBody.fallback}).
 */
final class DecodedBody implements ResponseBody {

    private final Channel clientChannel;
    private final LlmCall llm;               // null: no decoder reads the body
    private final FlowControl flow;

    DecodedBody(Channel clientChannel, LlmCall llm, FlowControl flow) {
        this.clientChannel = clientChannel;
        this.llm = llm;
        this.flow = flow;
    }

    /**
     * The timestamping point of the object path: the piece is decoded with its arrival time, then written; the flush
     * waits for the end of the read.
     */
    @Override
    public Step onContent(HttpContent content, long arrived) {
        boolean last = content instanceof LastHttpContent;
        ByteBuf data = content.content();
        ByteBuf out = llm == null ? data : llm.onChunk(data, arrived);
        if (out == data) {
            write(content, arrived);
        } else {
            if (out.isReadable()) {
                write(new DefaultHttpContent(out), arrived);
            } else {
                out.release();
            }
            if (last) {
                LastHttpContent end = (LastHttpContent) content;
                write(end.trailingHeaders().isEmpty() ? LastHttpContent.EMPTY_LAST_CONTENT
                        : new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER, end.trailingHeaders()), arrived);
            }
        }
        if (!last) {
            return Step.MORE;
        }
        if (llm != null) {
            ByteBuf rest = llm.onEnd(arrived); // what the decoder still held
            if (rest.isReadable()) {
                clientChannel.write(new DefaultHttpContent(rest), clientChannel.voidPromise());
            }
        }
        return Step.END;
    }

    /** Writes forwarded bytes; a write with bytes is timed to the client's socket when its read is flushed. */
    private void write(HttpContent content, long arrived) {
        flow.wrote(content.content().isReadable() ? Written.DATA : Written.NOTHING, arrived);
        clientChannel.write(content, clientChannel.voidPromise());
    }

    /** Never called: the upstream connection hands on raw reads only once a {@link RelayedBody} asked for them. */
    @Override
    public Step onRead(ByteBuf read, long arrived) {
        read.release();
        return Step.MORE;
    }

    /** Never asked: a framing the codecs cannot read fails their decoding, before it reaches a body. */
    @Override
    public String anomaly() {
        return null;
    }

    /** An incomplete event the decoder held back (for usage removal) reaches the client, as it would directly. */
    @Override
    public void releaseHeld() {
        if (llm != null) {
            ByteBuf held = llm.releaseHeld();
            if (held.isReadable()) {
                clientChannel.write(new DefaultHttpContent(held), clientChannel.voidPromise());
            }
        }
    }

    /** Nothing is held on this path but by the decoder, whose bytes are its own. */
    @Override
    public void discard() {
    }
}
