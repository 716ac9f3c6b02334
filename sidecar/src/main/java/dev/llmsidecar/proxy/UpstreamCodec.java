package dev.llmsidecar.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The HTTP/1.1 codec of one upstream connection: Netty's request encoder and response decoder, paired by request
 * method the way Netty's {@code HttpClientCodec} pairs them (a response to HEAD has no body), with one addition: after
 * a response head the connection's exchange may take the body raw ({@link #relayBody}). Then every later read is handed
 * on as the {@link ByteBuf} the socket produced, not decoded at all (the part of the head's own read after the head, as
 * one slice of it), until the exchange gives the connection back with {@link #endRelay}, which readies the decoder for
 * the next response. After a 200 to CONNECT every byte is handed on undecoded, as Netty's codec does (a tunnel is not
 * proxied: the connection, expecting no such bytes, closes).
 */
final class UpstreamCodec extends CombinedChannelDuplexHandler<UpstreamCodec.Decoder, UpstreamCodec.Encoder> {

    private final ArrayDeque<HttpMethod> methods = new ArrayDeque<>(2);

    UpstreamCodec(int maxInitialLineLength, int maxHeaderSize, int maxChunkSize) {
        init(new Decoder(new HttpDecoderConfig().setMaxInitialLineLength(maxInitialLineLength)
                .setMaxHeaderSize(maxHeaderSize).setMaxChunkSize(maxChunkSize).setValidateHeaders(false)),
                new Encoder());
    }

    /** The body of the response whose head was just delivered is taken raw: no decoding until {@link #endRelay}. */
    void relayBody() {
        inboundHandler().raw = true;
    }

    /** The relayed body ended: the next read is the next response's head. */
    void endRelay() {
        Decoder d = inboundHandler();
        d.raw = false;
        d.inResponse = false;
        d.reset();
    }

    final class Encoder extends HttpRequestEncoder {
        @Override
        protected void encode(ChannelHandlerContext ctx, Object msg, List<Object> out) throws Exception {
            if (msg instanceof HttpRequest request) {
                methods.offer(request.method());
            }
            super.encode(ctx, msg, out);
        }
    }

    final class Decoder extends HttpResponseDecoder {
        private boolean raw;
        private boolean tunnel;
        /** A final response's head was decoded and its end was not yet: its bytes are still to come. */
        private boolean inResponse;

        Decoder(HttpDecoderConfig config) {
            super(config);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            if ((raw || tunnel) && msg instanceof ByteBuf && !internalBuffer().isReadable()) {
                ctx.fireChannelRead(msg); // the read itself: nothing decoded, nothing copied
                return;
            }
            if (unasked() && msg instanceof ByteBuf && !internalBuffer().isReadable()) {
                // bytes no request asked for (an idle pooled connection that talks): not buffered as the beginning of
                // the next response, where they would be read into another client's answer, but handed on as they
                // are, which the connection refuses by closing
                ctx.fireChannelRead(msg);
                return;
            }
            super.channelRead(ctx, msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
            if (raw) {
                // every raw read was handed on: no read to ask for (the exchange's autoRead decides)
                ctx.fireChannelReadComplete();
                return;
            }
            super.channelReadComplete(ctx);
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
            if (raw || tunnel) {
                // what the head's read held after the head: the body's first bytes, as they were read
                if (buffer.isReadable()) {
                    out.add(buffer.readRetainedSlice(buffer.readableBytes()));
                }
                return;
            }
            int before = out.size();
            super.decode(ctx, buffer, out);
            for (int i = before; i < out.size(); i++) {
                Object o = out.get(i);
                if (o instanceof HttpResponse r && r.status().codeClass() != HttpStatusClass.INFORMATIONAL) {
                    inResponse = true;
                }
                if (o instanceof LastHttpContent) {
                    inResponse = false;
                }
            }
            if (unasked() && buffer.isReadable() && out.size() > before) {
                // the read held bytes after the response's end: handed on after it, undecoded, so that the
                // connection closes instead of going back to the pool with them
                out.add(buffer.readRetainedSlice(buffer.readableBytes()));
            }
        }

        /** No request is waiting for its answer and no response is under way: any byte now was not asked for. */
        private boolean unasked() {
            return !raw && !tunnel && !inResponse && methods.isEmpty();
        }

        @Override
        protected boolean isContentAlwaysEmpty(HttpMessage msg) {
            if (((HttpResponse) msg).status().codeClass() == HttpStatusClass.INFORMATIONAL) {
                return super.isContentAlwaysEmpty(msg); // not paired with a request
            }
            HttpMethod method = methods.poll();
            if (HttpMethod.CONNECT.equals(method) && ((HttpResponse) msg).status().code() == 200) {
                tunnel = true;
                return true;
            }
            return HttpMethod.HEAD.equals(method) || super.isContentAlwaysEmpty(msg);
        }
    }
}
