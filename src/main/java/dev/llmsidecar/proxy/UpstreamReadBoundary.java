package dev.llmsidecar.proxy;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.impl.ConnectionBase;
import java.util.NoSuchElementException;

/**
 * Marks where one socket read from an upstream connection begins and ends. Netty decodes every HTTP chunk of a
 * read before it signals the read complete; under load (or with a fast engine) one read carries several SSE
 * events, each its own HTTP chunk. Vert.x flushes every response write on its own, so without this the sidecar
 * would make one client write (one {@code writev}) per event where nginx makes one per read. The exchange holds
 * what it forwards during a read and writes it once when the read completes.
 *
 * <p>It sits in the upstream connection's pipeline just before Vert.x's handler and lives as long as the
 * (pooled) connection; the exchange currently reading from it registers itself. All calls happen on the
 * connection's event loop.
 */
final class UpstreamReadBoundary extends ChannelInboundHandlerAdapter {

    static final String NAME = "llm-sidecar-read-boundary";

    /** Told when a read from the upstream connection has been decoded and delivered in full. */
    interface Listener {
        void onReadComplete();
    }

    private boolean inRead;
    private Listener listener;

    /**
     * The boundary of a Vert.x HTTP/1 client connection, installed on first use; {@code null} (every chunk then
     * written on its own) for a connection that is not a Netty pipeline Vert.x exposes, that lives on another
     * event loop than the caller's, or whose pipeline is already torn down.
     */
    static UpstreamReadBoundary of(HttpConnection connection) {
        if (!(connection instanceof ConnectionBase base) || !base.channel().eventLoop().inEventLoop()) {
            return null;
        }
        ChannelPipeline pipeline = base.channel().pipeline();
        if (pipeline.get(NAME) instanceof UpstreamReadBoundary installed) {
            return installed;
        }
        UpstreamReadBoundary boundary = new UpstreamReadBoundary();
        try {
            pipeline.addBefore(base.channelHandlerContext().name(), NAME, boundary);
        } catch (NoSuchElementException | IllegalArgumentException e) {
            return null; // the connection closed meanwhile
        }
        return boundary;
    }

    /** True while the chunks of one read are being delivered. */
    boolean inRead() {
        return inRead;
    }

    void listen(Listener listener) {
        this.listener = listener;
    }

    /** Stops telling {@code listener} (if it is still the one registered): its exchange has finished. */
    void release(Listener listener) {
        if (this.listener == listener) {
            this.listener = null;
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        inRead = true;
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
