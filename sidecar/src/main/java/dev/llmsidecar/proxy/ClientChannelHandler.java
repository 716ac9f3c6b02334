package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.LlmRoutes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * The client side of the proxy: one per HTTP/1.x connection, or per HTTP/2 stream (then fed by Netty's HTTP/2 to
 * HTTP/1 object codec, so both speak the same objects). It turns each request into an {@link Exchange}, one at a time:
 * a request pipelined behind one still being answered waits (and the connection stops reading) until the answer is
 * complete. A connection whose request body was not read to its end, or that must close, closes once what was
 * written reached the socket.
 */
final class ClientChannelHandler extends ChannelInboundHandlerAdapter implements ClientSide {

    private final ExchangeContext context;
    private final LlmRoutes routes;
    private final ConnectionErrors connectionErrors;
    private final LoopResources loop;
    private final boolean http2;
    private ChannelHandlerContext ctx;
    private ClientCodec codec;
    private Exchange current;
    private boolean requestComplete;
    private boolean closing;
    private boolean pausedByExchange;
    private final ArrayDeque<HttpObject> pipelined = new ArrayDeque<>(2);
    private long lastRequestNanos = System.nanoTime();
    private long headStartedNanos = -1; // the first byte of a request head not yet complete, or -1
    private boolean upgradeDecided;

    ClientChannelHandler(ExchangeContext context, LlmRoutes routes, ConnectionErrors connectionErrors,
            LoopResources loop, boolean http2) {
        this.context = context;
        this.routes = routes;
        this.connectionErrors = connectionErrors;
        this.loop = loop;
        this.http2 = http2;
    }

    @Override
    public Channel channel() {
        return ctx.channel();
    }

    @Override
    public boolean http2() {
        return http2;
    }

    @Override
    public void relayNextBody() {
        codec().relayNextBody();
    }

    @Override
    public void writeRaw(ByteBuf bytes) {
        codec().writeRaw(bytes);
    }

    private ClientCodec codec() {
        if (codec == null) {
            codec = ctx.pipeline().get(ClientCodec.class); // in place once the connection's first request was read
        }
        return codec;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof HttpObject http) || closing) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (current != null && requestComplete || !pipelined.isEmpty()) {
            // a request pipelined behind one still being answered: it waits, and so does the connection
            pipelined.add(http);
            updateAutoRead();
            return;
        }
        handle(http);
    }

    private void handle(HttpObject msg) {
        if (msg instanceof HttpRequest request) {
            if (current != null) {
                ReferenceCountUtil.release(msg); // cannot happen: a request starts only after the last one's end
                return;
            }
            start(request);
            return;
        }
        if (msg instanceof HttpContent content) {
            if (current == null || requestComplete) {
                content.release(); // the rest of a request answered without reading it
                return;
            }
            requestComplete = content instanceof LastHttpContent;
            current.onRequestContent(content);
        }
    }

    private void start(HttpRequest request) {
        long receivedNanos = System.nanoTime();
        lastRequestNanos = receivedNanos;
        headStartedNanos = -1;
        upgradeDecided = true;
        if (request.decoderResult().isFailure()) {
            ReferenceCountUtil.release(request);
            refuse(badRequest(request.decoderResult().cause()), null);
            return;
        }
        LlmOperation operation = routes.match(request.method().name(), path(request.uri()));
        if (context.server().draining()) {
            // shutting down: open streams finish, new requests go elsewhere (the client or balancer retries)
            ReferenceCountUtil.release(request);
            context.traffic().refused(operation != null, SidecarError.SHUTTING_DOWN.status);
            refuse(SidecarError.SHUTTING_DOWN, null);
            return;
        }
        if (context.server().shedding()) {
            // memory past its mark: no new work, so the streams already open live (the client retries)
            ReferenceCountUtil.release(request);
            context.traffic().shed(operation);
            refuse(SidecarError.OVERLOADED, null);
            return;
        }
        HttpRequest head = request;
        HttpContent body = null;
        boolean bodyFollows = http2 ? !(request instanceof FullHttpRequest)
                : HttpUtil.getContentLength(request, 0L) != 0 || HttpUtil.isTransferEncodingChunked(request);
        if (request instanceof FullHttpRequest full) {
            // HTTP/2 gives a request without body whole: its head goes upstream, its (empty) body follows it
            head = new DefaultHttpRequest(full.protocolVersion(), full.method(), full.uri(), full.headers());
            body = new DefaultLastHttpContent(full.content());
        }
        requestComplete = false;
        Exchange exchange;
        try {
            exchange = new Exchange(context, loop, this, head, bodyFollows, receivedNanos, operation);
        } catch (RuntimeException e) {
            // a bug must cost this request, not the connection or the event loop
            ReferenceCountUtil.release(body);
            context.server().logBug("llm-sidecar could not start an exchange", e);
            refuse(SidecarError.UPSTREAM_CLOSED, null);
            return;
        }
        current = exchange;
        context.server().exchangeStarted();
        exchange.start();
        if (body != null) {
            handle(body);
        }
    }

    private static String path(String uri) {
        int query = uri.indexOf('?');
        return query < 0 ? uri : uri.substring(0, query);
    }

    private static SidecarError badRequest(Throwable cause) {
        if (cause instanceof TooLongHttpLineException) {
            return SidecarError.URI_TOO_LONG;
        }
        if (cause instanceof TooLongHttpHeaderException || cause instanceof TooLongFrameException) {
            return SidecarError.HEADERS_TOO_LARGE;
        }
        return SidecarError.BAD_REQUEST;
    }

    /** Answers a request that became no exchange, and closes the connection (its body, if any, is not read). */
    private void refuse(SidecarError error, String detail) {
        closing = true;
        var response = error.response(HttpVersion.HTTP_1_1, detail, !http2);
        if (error == SidecarError.SHUTTING_DOWN || error == SidecarError.OVERLOADED) {
            response.headers().set("retry-after", "1");
        }
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (upgradeDecided && !http2 && ctx.pipeline().get(HttpServerUpgradeHandler.class) != null) {
            // cleartext HTTP/2 comes by Upgrade on a connection's first request or not at all: later ones would
            // pass the upgrade handler (an aggregator) for nothing. Out of its own read, not from inside it.
            ctx.pipeline().remove(HttpServerUpgradeHandler.class);
        }
        if (current != null) {
            current.onClientReadComplete();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (current != null && ctx.channel().isWritable()) {
            current.onClientWritable();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closing = true;
        Exchange gone = current;
        current = null;
        if (gone != null) {
            gone.onClientGone();
        }
        for (HttpObject o; (o = pipelined.poll()) != null;) {
            ReferenceCountUtil.release(o);
        }
    }

    /**
     * Closes the connection if no request is in progress and either none came for {@code idleNanos} (an idle
     * keep-alive; zero: never) or one began arriving {@code headNanos} ago and its head is not complete yet.
     */
    void sweep(long now, long idleNanos, long headNanos) {
        if (current != null || !pipelined.isEmpty() || closing) {
            return;
        }
        if (headStartedNanos >= 0 && now - headStartedNanos >= headNanos
                && ctx.pipeline().get(Http2MultiplexHandler.class) == null) {
            context.traffic().count(ProxyEvent.CLIENT_TIMEOUT_REQUEST_HEAD);
            closing = true;
            ctx.close();
            return;
        }
        if (idleNanos > 0 && now - lastRequestNanos >= idleNanos) {
            ctx.close();
        }
    }

    /**
     * Ahead of the HTTP codec on an HTTP/1.x connection: notes when the bytes of a request head begin to arrive (a
     * read while no request is in progress), for the head timeout. A field store per such read, nothing else.
     */
    ChannelInboundHandlerAdapter headClock() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext c, Object msg) {
                if (current == null && headStartedNanos < 0) {
                    headStartedNanos = System.nanoTime();
                }
                c.fireChannelRead(msg);
            }
        };
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // a peer resetting, a broken pipe: counted, and the exchange (if any) ends as the client going away
        connectionErrors.record(Peer.CLIENT, cause);
        ctx.close();
    }

    @Override
    public void setAutoRead(boolean on) {
        pausedByExchange = !on;
        updateAutoRead();
    }

    /** Reads go on unless the exchange holds them back, a pipelined request waits, or the connection closes. */
    private void updateAutoRead() {
        ctx.channel().config().setAutoRead(!pausedByExchange && pipelined.isEmpty() && !closing);
    }

    /**
     * Runs {@code action} once everything written so far has reached the socket (true) or failed (false). On HTTP/1.x
     * an empty buffer goes straight to the socket's end of the pipeline behind them; Netty completes writes in order.
     * On an HTTP/2 stream the bytes wait in the connection's flow control, out of sight: it runs now.
     */
    @Override
    public void whenWritten(Consumer<Boolean> action) {
        if (http2) {
            action.accept(ctx.channel().isActive());
            return;
        }
        ctx.pipeline().firstContext().writeAndFlush(Unpooled.EMPTY_BUFFER)
                .addListener(f -> action.accept(f.isSuccess()));
    }

    /**
     * The exchange's response is complete (or cut). The connection serves the next request, or closes once what was
     * written is on the socket: when asked, or when the request body was not read to its end (its rest would be
     * read as a request).
     */
    @Override
    public void exchangeDone(Object exchange, boolean close) {
        if (exchange != current) {
            return;
        }
        current = null;
        pausedByExchange = false;
        lastRequestNanos = System.nanoTime();
        if (close || !requestComplete || closing) {
            closing = true;
            for (HttpObject o; (o = pipelined.poll()) != null;) {
                ReferenceCountUtil.release(o);
            }
            if (http2) {
                ctx.close(); // resets the stream if it is not complete
            } else {
                whenWritten(ok -> ctx.close());
            }
            return;
        }
        // the next request and its body; what follows it waits until it is answered
        while (!pipelined.isEmpty() && !closing && !(current != null && requestComplete)) {
            handle(pipelined.poll());
        }
        updateAutoRead();
    }
}
