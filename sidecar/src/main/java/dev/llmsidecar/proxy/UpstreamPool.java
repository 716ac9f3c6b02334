package dev.llmsidecar.proxy;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;

/**
 * The upstream connections of one event loop: the client connections of that loop take theirs here, so a read from
 * the engine is handled, timestamped and written to the client on one thread, with no hand-over. Idle connections
 * are kept most recently used first: the busiest few carry the traffic, and the rest grow idle at the other end and
 * age out (closed once idle for the keep-alive timeout, which must stay below the engine's own). A connection taken
 * is checked again, since the engine may be closing it at that moment; a request whose reused connection closes
 * before a single response byte anyway is sent once more by its exchange ({@link Exchange}).
 *
 * <p>Confined to its event loop: no locks.
 */
final class UpstreamPool implements UpstreamConnection.Owner {

    /** What asked for a connection. */
    interface Waiter {
        void connected(UpstreamConnection connection);

        void failed(Throwable cause);
    }

    /** Opens upstream channels on an event loop: the target, TLS and codec limits are the proxy's. */
    interface Connector {
        ChannelFuture connect(EventLoop loop, ChannelInitializer<Channel> init);
    }

    /** A sweep waits at least this long (connections that age within it are closed together). */
    private static final long SWEEP_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final EventLoop loop;
    private final Connector connector;
    private final SslContext ssl;
    private final String sslHost;
    private final int sslPort;
    private final long keepAliveNanos;
    private final int maxConnections;
    private final Runnable onRetired; // the count of idle connections retired
    private final Runnable onConnectionError;
    private final Runnable onUnaskedBytes;
    private final ArrayDeque<UpstreamConnection> idle = new ArrayDeque<>();
    private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
    private int open;
    private ScheduledFuture<?> sweeper;

    /**
     * @param keepAliveNanos an idle connection is not reused from this age on; 0: no reuse
     * @param maxConnections connections open at most on this loop; more requests wait for one
     */
    UpstreamPool(EventLoop loop, Connector connector, SslContext ssl, String sslHost, int sslPort,
            long keepAliveNanos, int maxConnections, Runnable onRetired, Runnable onConnectionError,
            Runnable onUnaskedBytes) {
        this.loop = loop;
        this.connector = connector;
        this.ssl = ssl;
        this.sslHost = sslHost;
        this.sslPort = sslPort;
        this.keepAliveNanos = keepAliveNanos;
        this.maxConnections = maxConnections;
        this.onRetired = onRetired;
        this.onConnectionError = onConnectionError;
        this.onUnaskedBytes = onUnaskedBytes;
    }

    /**
     * A connection for one request: the most recently used idle one that is still fresh, else a new one (or, at the
     * cap, the next one released). Idle ones past the keep-alive age are closed on the way: the head is the newest, so
     * a stale head means every idle connection is stale.
     */
    void acquire(Waiter waiter) {
        long now = System.nanoTime();
        while (!idle.isEmpty()) {
            UpstreamConnection c = idle.pollFirst();
            if (c.closed()) {
                continue;
            }
            if (c.idleFor(now, keepAliveNanos)) {
                retireAll(c);
                break;
            }
            waiter.connected(c);
            return;
        }
        if (open >= maxConnections) {
            waiting.addLast(waiter);
            return;
        }
        connect(waiter, true);
    }

    /** A connection of its own for one request (sent again after a reused connection closed): never pooled. */
    void acquireFresh(Waiter waiter) {
        connect(waiter, false);
    }

    private void connect(Waiter waiter, boolean reusable) {
        open++;
        UpstreamConnection[] made = new UpstreamConnection[1];
        ChannelFuture f = connector.connect(loop, new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                if (ssl != null) {
                    ch.pipeline().addLast(ssl.newHandler(ch.alloc(), sslHost, sslPort));
                }
                // content is handed on as the read delivered it (a retained slice, no copy, or the read itself when
                // relayed raw); no aggregation
                UpstreamCodec codec = new UpstreamCodec(4096, 8192, 1 << 20);
                ch.pipeline().addLast(codec);
                made[0] = new UpstreamConnection(ch, UpstreamPool.this, codec, reusable && keepAliveNanos > 0);
                ch.pipeline().addLast(made[0]);
            }
        });
        f.addListener(done -> {
            if (done.isSuccess()) {
                waiter.connected(made[0]);
            } else {
                if (made[0] == null || made[0].uncount()) {
                    open--;
                }
                waiter.failed(done.cause());
                serveWaiting();
            }
        });
    }

    /** Back from an exchange: idle from now, first in line. */
    @Override
    public void release(UpstreamConnection c) {
        Waiter next = waiting.pollFirst();
        if (next != null) {
            next.connected(c);
            return;
        }
        idle.addFirst(c);
        if (sweeper == null) {
            scheduleSweep(System.nanoTime());
        }
    }

    /** A connection of this pool closed (any state). */
    @Override
    public void closed(UpstreamConnection c) {
        if (c.uncount()) {
            open--;
        }
        idle.remove(c);
        serveWaiting();
    }

    /** A pooled connection failed while no exchange was using it. */
    @Override
    public void connectionError() {
        onConnectionError.run();
    }

    /** A connection no request was waiting on sent bytes (it closes): the engine broke the framing of its last answer. */
    @Override
    public void unaskedBytes() {
        onUnaskedBytes.run();
    }

    private void serveWaiting() {
        while (!waiting.isEmpty() && open < maxConnections) {
            connect(waiting.pollFirst(), true);
        }
    }

    /** Closes {@code stale} and every idle connection older than it. */
    private void retireAll(UpstreamConnection stale) {
        stale.close();
        onRetired.run();
        for (UpstreamConnection c : idle) {
            c.close();
            onRetired.run();
        }
        idle.clear();
    }

    /** Closes idle connections that reached the keep-alive age (the oldest are at the tail), then waits for the next. */
    private void sweep() {
        sweeper = null;
        long now = System.nanoTime();
        for (Iterator<UpstreamConnection> it = idle.descendingIterator(); it.hasNext();) {
            UpstreamConnection c = it.next();
            if (!c.idleFor(now, keepAliveNanos)) {
                break;
            }
            it.remove();
            c.close();
            onRetired.run();
        }
        if (!idle.isEmpty()) {
            scheduleSweep(now);
        }
    }

    /**
     * One timer, for when the oldest idle connection reaches the keep-alive age (not a fixed tick: an idle pool does
     * not wake its event loop while nothing is due).
     */
    private void scheduleSweep(long now) {
        UpstreamConnection oldest = idle.peekLast();
        long due = oldest == null ? keepAliveNanos : oldest.untilIdleFor(now, keepAliveNanos);
        sweeper = loop.schedule(this::sweep, Math.max(SWEEP_SLACK_NANOS, due), TimeUnit.NANOSECONDS);
    }

    /** Closes every idle connection (shutdown). */
    void closeIdle() {
        for (UpstreamConnection c : idle) {
            c.close();
        }
        idle.clear();
        if (sweeper != null) {
            sweeper.cancel(false);
            sweeper = null;
        }
    }

    /**
     * How much each read asks for, one instance for every connection (client and upstream): the allocator is only its
     * settings, each channel's state is in its own handle, and one per channel was 40 bytes of every open connection.
     */
    static final AdaptiveRecvByteBufAllocator READS = new AdaptiveRecvByteBufAllocator();

    static Bootstrap options(Bootstrap b, int connectTimeoutMillis) {
        return b.option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.RCVBUF_ALLOCATOR, READS)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
                .option(ChannelOption.SO_KEEPALIVE, true);
    }
}
