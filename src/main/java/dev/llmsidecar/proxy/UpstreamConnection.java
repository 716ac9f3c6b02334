package dev.llmsidecar.proxy;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.impl.ConnectionBase;
import java.util.NoSuchElementException;

/**
 * What the sidecar keeps about one pooled upstream connection, in a handler of its Netty pipeline that lives as long
 * as the connection: where one socket read begins and ends, how many exchanges it has carried, since when it has
 * been idle, and whether anything has been read since the current exchange started.
 *
 * <p>Reuse: an idle connection is retired when taken if it has been idle for the keep-alive timeout or longer (not
 * only by Vert.x's periodic sweep, which can hand out a connection just past its time), and a request whose reused
 * connection closes before a single response byte arrives may be sent again ({@link Exchange}).
 *
 * <p>Reads: Netty decodes every HTTP chunk of a read before it signals the read complete; under load (or with a fast engine) one read carries several SSE
 * events, each its own HTTP chunk. Vert.x flushes every response write on its own, so without this the sidecar
 * would make one client write (one {@code writev}) per event where nginx makes one per read. The exchange holds
 * what it forwards during a read and writes it once when the read completes.
 *
 * <p>It sits in the upstream connection's pipeline just before Vert.x's handler; the exchange currently using the
 * connection registers itself. All calls happen on the connection's event loop.
 */
final class UpstreamConnection extends ChannelInboundHandlerAdapter {

    static final String NAME = "llm-sidecar-upstream-connection";

    /** Told when a read from the upstream connection has been decoded and delivered in full. */
    interface Listener {
        void onReadComplete();
    }

    private boolean inRead;
    private Listener listener;
    private long exchanges;
    private long idleSinceNanos;
    private long readsSinceStart;

    /**
     * The state of a Vert.x HTTP/1 client connection, installed on first use; {@code null} (every chunk then
     * written on its own) for a connection that is not a Netty pipeline Vert.x exposes, that lives on another
     * event loop than the caller's, or whose pipeline is already torn down.
     */
    static UpstreamConnection of(HttpConnection connection) {
        if (!(connection instanceof ConnectionBase base) || !base.channel().eventLoop().inEventLoop()) {
            return null;
        }
        ChannelPipeline pipeline = base.channel().pipeline();
        if (pipeline.get(NAME) instanceof UpstreamConnection installed) {
            return installed;
        }
        UpstreamConnection boundary = new UpstreamConnection();
        try {
            pipeline.addBefore(base.channelHandlerContext().name(), NAME, boundary);
        } catch (NoSuchElementException | IllegalArgumentException e) {
            return null; // the connection closed meanwhile
        }
        return boundary;
    }

    /**
     * True when the connection has carried an exchange, has none now, and has been idle for at least {@code nanos}.
     */
    boolean idleFor(long now, long nanos) {
        return exchanges > 0 && listener == null && now - idleSinceNanos >= nanos;
    }

    /** An exchange starts on this connection: its request is about to be written, its reads go to {@code l}. */
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

    /** True while the chunks of one read are being delivered. */
    boolean inRead() {
        return inRead;
    }

    /**
     * The exchange of {@code l} has finished (if it is still the current one): the connection, if it stays open,
     * goes back to the pool, idle from {@code now}.
     */
    void endExchange(Listener l, long now) {
        if (listener == l) {
            listener = null;
            idleSinceNanos = now;
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        inRead = true;
        readsSinceStart++;
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        inRead = false;
        Listener current = listener;
        try {
            if (current != null) {
                current.onReadComplete();
            }
        } finally {
            ctx.fireChannelReadComplete();
        }
    }
}
