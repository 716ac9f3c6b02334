package dev.llmsidecar.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http2.Http2CodecUtil;
import java.util.List;

/**
 * Cleartext HTTP/2 by prior knowledge or by Upgrade, HTTP/1.x otherwise, as Netty's
 * {@code CleartextHttp2ServerUpgradeHandler} does, for the sidecar's own HTTP/1.x codec ({@link ClientCodec}; Netty's
 * handler takes only its {@code HttpServerCodec}). The first bytes of a connection decide: the HTTP/2 preface puts the
 * HTTP/2 handlers in place; anything else leaves the codec and the upgrade handler.
 */
final class CleartextUpgrade extends ByteToMessageDecoder {

    private static final ByteBuf PREFACE = Unpooled.unreleasableBuffer(Http2CodecUtil.connectionPrefaceBuf())
            .asReadOnly();

    private final ChannelHandler codec;
    private final HttpServerUpgradeHandler upgrade;
    private final ChannelHandler priorKnowledge;

    CleartextUpgrade(ChannelHandler codec, HttpServerUpgradeHandler upgrade, ChannelHandler priorKnowledge) {
        this.codec = codec;
        this.upgrade = upgrade;
        this.priorKnowledge = priorKnowledge;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        ctx.pipeline().addAfter(ctx.name(), null, upgrade).addAfter(ctx.name(), null, codec);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int length = PREFACE.readableBytes();
        int read = Math.min(in.readableBytes(), length);
        if (!ByteBufUtil.equals(PREFACE, PREFACE.readerIndex(), in, in.readerIndex(), read)) {
            ctx.pipeline().remove(this); // HTTP/1.x: what was read goes on to the codec
        } else if (read == length) {
            ctx.pipeline().remove(codec).remove(upgrade);
            ctx.pipeline().addAfter(ctx.name(), null, priorKnowledge);
            ctx.pipeline().remove(this);
        }
    }
}
