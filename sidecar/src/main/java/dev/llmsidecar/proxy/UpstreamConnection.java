package dev.llmsidecar.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpObject;
import io.netty.util.ReferenceCountUtil;

/**
 * One HTTP/1.1 connection to the engine, and the last handler of its pipeline: it hands what the connection reads to
 * the exchange currently using it and keeps what the pool and the retry rule need to know (how many exchanges it has
 * carried, since when it is idle, whether anything was read since the current exchange started). All calls happen
 * on the connection's event loop, which is also the event loop of the client connections it serves.
 */
final class UpstreamConnection extends ChannelInboundHandlerAdapter {

    /** What the exchange using the connection is told. */
    interface Listener {
        /** A decoded piece of the response (head, content, last content); the listener owns it. */
        void onUpstream(HttpObject message);

        /** A read of a body relayed raw ({@link #relayBody}), as the socket produced it; the listener owns it. */
        void onUpstreamRaw(ByteBuf read);

        /** Every piece of one socket read has been delivered. */
        void onUpstreamReadComplete();

        /** The connection can take more of the request body again. */
        void onUpstreamWritable();

        /** The connection closed or failed. */
        void onUpstreamClosed(Throwable cause);
    }

    /** Where the connection goes back when idle, and tells that it closed (its pool). */
    interface Owner {
        /** Back from an exchange, reusable. */
        void release(UpstreamConnection c);

        /** Closed, in any state. */
        void closed(UpstreamConnection c);

        /** Failed while no exchange was using it. */
        void connectionError();

        /** Sent bytes while no exchange was using it (it closes). */
        void unaskedBytes();
    }

    final Channel channel;
    private final Owner pool;
    private final UpstreamCodec codec;
    /** False for a connection opened for one request only (a request sent again; keep-alive off). */
    final boolean reusable;
    private Listener listener;
    private long exchanges;
    private long idleSinceNanos;
    private long readsSinceStart;
    private boolean closed;
    private boolean counted = true;
    private boolean relaying;

    UpstreamConnection(Channel channel, Owner pool, UpstreamCodec codec, boolean reusable) {
        this.channel = channel;
        this.pool = pool;
        this.codec = codec;
        this.reusable = reusable;
        this.idleSinceNanos = System.nanoTime();
    }

    /** An exchange starts on this connection: its request is about to be written, what is read goes to {@code l}. */
    void startExchange(Listener l) {
        exchanges++;
        readsSinceStart = 0;
        listener = l;
    }

    /** True when the connection carried an exchange before the current one. */
    boolean reused() {
        return exchanges > 1;
    }

    /** True when nothing has been read from the connection since the current exchange started. */
    boolean nothingReadSinceStart() {
        return readsSinceStart == 0;
    }

    /** The body of the response whose head was just delivered is relayed raw: reads come undecoded. */
    void relayBody() {
        relaying = true;
        codec.relayBody();
    }

    /** The relayed body ended whole: the next read is a response head again. */
    void endRelay() {
        relaying = false;
        codec.endRelay();
    }

    /** True when it has no exchange now and has been idle (or, never used, open) for at least {@code nanos}. */
    /** How long until it has been idle for {@code nanos} (0: already; its idle time counts from its last release). */
    long untilIdleFor(long now, long nanos) {
        return Math.max(0, idleSinceNanos + nanos - now);
    }

    boolean idleFor(long now, long nanos) {
        return listener == null && now - idleSinceNanos >= nanos;
    }

    /**
     * The exchange of {@code l} is done with the connection. {@code keepAlive}: the response ended cleanly and the
     * connection may carry another request, so it goes back to the pool (idle from {@code now}); else it is closed.
     */
    void endExchange(Listener l, boolean keepAlive, long now) {
        if (listener != l) {
            return;
        }
        listener = null;
        idleSinceNanos = now;
        if (keepAlive && reusable && channel.isActive() && !closed) {
            pool.release(this);
        } else {
            close();
        }
    }

    /** Handed over for an exchange that ended meanwhile: back to the pool as it was. */
    void endExchangeUnused() {
        if (reusable && !closed()) {
            pool.release(this);
        } else {
            close();
        }
    }

    void close() {
        if (!closed) {
            closed = true;
            channel.close();
        }
    }

    /** True the first time: the pool counts each connection out once, whether it failed to connect or closed. */
    boolean uncount() {
        boolean was = counted;
        counted = false;
        return was;
    }

    boolean closed() {
        return closed || !channel.isActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        readsSinceStart++;
        Listener l = listener;
        if (l != null && relaying && msg instanceof ByteBuf raw) {
            l.onUpstreamRaw(raw);
            return;
        }
        if (l == null || !(msg instanceof HttpObject http)) {
            // nothing expects it (an idle connection that talks, a tunnel): such a connection cannot be trusted again
            ReferenceCountUtil.release(msg);
            if (l == null && !closed()) {
                pool.unaskedBytes();
            }
            close();
            return;
        }
        l.onUpstream(http);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        Listener l = listener;
        if (l != null) {
            l.onUpstreamReadComplete();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        Listener l = listener;
        if (l != null && ctx.channel().isWritable()) {
            l.onUpstreamWritable();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        pool.closed(this);
        Listener l = listener;
        listener = null;
        if (l != null) {
            l.onUpstreamClosed(null);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Listener l = listener;
        if (l == null) {
            pool.connectionError();
        }
        listener = null;
        closed = true;
        ctx.close();
        if (l != null) {
            l.onUpstreamClosed(cause);
        }
    }
}
