package dev.llmsidecar.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http.HttpStatusClass;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The HTTP/1.x codec of one client connection: Netty's request decoder and response encoder, paired by request method
 * as Netty's {@code HttpServerCodec} pairs them (a response to HEAD has no body), with one addition: a response whose
 * body the exchange relays raw ({@link #relayNextBody}) has only its head encoded here. Its body, framed by the engine
 * and terminated by the engine's own last chunk, is written beneath this codec ({@link #writeRaw}); the empty last
 * content that ends the exchange then writes nothing, so there is no second terminator. An upgrade to h2c removes it,
 * as it would remove Netty's codec.
 */
final class ClientCodec extends CombinedChannelDuplexHandler<ClientCodec.Decoder, ClientCodec.Encoder>
        implements HttpServerUpgradeHandler.SourceCodec {

    private final ArrayDeque<HttpMethod> methods = new ArrayDeque<>(2);
    private ChannelHandlerContext ctx;

    ClientCodec(int maxInitialLineLength, int maxHeaderSize, int maxChunkSize) {
        init(new Decoder(new HttpDecoderConfig().setMaxInitialLineLength(maxInitialLineLength)
                .setMaxHeaderSize(maxHeaderSize).setMaxChunkSize(maxChunkSize).setValidateHeaders(false)),
                new Encoder());
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        super.handlerAdded(ctx);
    }

    @Override
    public void upgradeFrom(ChannelHandlerContext ctx) {
        ctx.pipeline().remove(this);
    }

    /** The next response head written is that of a body relayed raw: encode the head only. */
    void relayNextBody() {
        outboundHandler().relayNext = true;
    }

    /** Writes bytes beneath the codec, straight to the socket's end of the pipeline. */
    void writeRaw(ByteBuf bytes) {
        ctx.write(bytes, ctx.voidPromise());
    }

    final class Decoder extends HttpRequestDecoder {
        Decoder(HttpDecoderConfig config) {
            super(config);
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
            int before = out.size();
            super.decode(ctx, buffer, out);
            for (int i = before; i < out.size(); i++) {
                if (out.get(i) instanceof HttpRequest request) {
                    methods.add(request.method());
                }
            }
        }
    }

    final class Encoder extends HttpResponseEncoder {
        private HttpMethod method;
        private boolean relayNext;

        @Override
        protected void sanitizeHeadersBeforeEncode(HttpResponse msg, boolean isAlwaysEmpty) {
            if (!isAlwaysEmpty && HttpMethod.CONNECT.equals(method)
                    && msg.status().codeClass() == HttpStatusClass.SUCCESS) {
                msg.headers().remove(HttpHeaderNames.TRANSFER_ENCODING); // RFC 9110 §9.3.6, as Netty's codec
                return;
            }
            super.sanitizeHeadersBeforeEncode(msg, isAlwaysEmpty);
        }

        @Override
        protected boolean isContentAlwaysEmpty(HttpResponse msg) {
            method = methods.poll();
            if (relayNext) {
                // the body follows beneath this encoder, framed and ended by the engine: this message's state ends
                // with an empty last content, which then writes nothing
                relayNext = false;
                return true;
            }
            return HttpMethod.HEAD.equals(method) || super.isContentAlwaysEmpty(msg);
        }
    }
}
