package dev.llmsidecar.proxy;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.config.HttpTarget;
import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.rewrite.Rewriter;
import dev.llmsidecar.wire.LlmRoutes;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2ServerUpgradeCodec;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLException;
import org.jboss.logging.Logger;

/**
 * The data path: the proxy port, served by Netty directly on the event loops it is given (Vert.x's, in the
 * application), HTTP/1.x and cleartext HTTP/2 (prior knowledge or Upgrade), with one {@link UpstreamPool} of HTTP/1.1
 * engine connections per event loop. Every request becomes an {@link Exchange} on the event loop of its client
 * connection, which is also that of its upstream connection. What it sees and does goes to the one
 * {@link TrafficObserver}. Quarkus keeps configuration, CDI, the management port and health ({@link ProxyLifecycle}).
 */
public final class ProxyServer {

    private static final Logger LOG = Logger.getLogger(ProxyServer.class);
    /** An h2c Upgrade request carries its body before the switch: bodies up to this size can upgrade. */
    private static final int MAX_UPGRADE_BODY_BYTES = 1 << 20;

    /**
     * What the proxy port reads from clients.
     *
     * @param maxInitialLineLength longest request line (longer: 414)
     * @param maxHeaderSize largest request head (larger: 431)
     * @param idleTimeout an idle client connection (no request in progress) is closed after this; zero: never
     */
    public record Settings(int maxInitialLineLength, int maxHeaderSize, Duration idleTimeout) {
        public static final Settings DEFAULTS = new Settings(4096, 20 * 1024, Duration.ofMinutes(30));
    }

    private final SidecarConfig config;
    private final HttpTarget target;
    private final LlmRoutes routes;
    private final ConnectionErrors connectionErrors;
    private final ExchangeContext exchanges;
    private final EventLoopGroup group;
    private final boolean epoll;
    private final Settings settings;
    private final SslContext upstreamSsl;
    private final long keepAliveNanos;
    private final Map<EventLoop, LoopResources> loops = new ConcurrentHashMap<>();
    private final long upstreamIdleNanos;
    private final long headTimeoutNanos;
    private final MemoryMark memory;
    private io.netty.util.concurrent.ScheduledFuture<?> memoryCheck;
    private io.netty.util.concurrent.ScheduledFuture<?> clientIdleSweep;
    private final ChannelGroup clientChannels = new DefaultChannelGroup("llm-sidecar-clients",
            GlobalEventExecutor.INSTANCE);
    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    /** Requests whose response has not ended (or whose connection has not closed) yet. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile boolean draining;
    /** The one drain, once started. */
    private CompletableFuture<Void> drained;
    private Channel serverChannel;

    /**
     * @param rewriter the request and response rewriting features (include_usage), behind the one hook every
     *     LLM exchange calls; {@link Rewriter#NONE} for none
     */
    public ProxyServer(EventLoopGroup group, SidecarConfig config, TrafficObserver traffic, Rewriter rewriter,
            Settings settings) {
        this.group = group;
        this.epoll = group instanceof EpollEventLoopGroup;
        this.config = config;
        this.settings = settings;
        this.target = config.upstream().url(); // taken apart once, when the configuration was read
        this.routes = new LlmRoutes(new JsonFactory(), config.conversations().enabled());
        this.connectionErrors = new ConnectionErrors(traffic);
        Duration keepAlive = config.upstream().keepAliveTimeout();
        this.keepAliveNanos = keepAlive.isNegative() ? 0 : keepAlive.toNanos();
        this.upstreamIdleNanos = Math.max(1, config.upstream().idleTimeout().toNanos());
        this.exchanges = new ExchangeContext(traffic, rewriter, target, config.upstream().preserveHost(),
                config.proxy().maxRequestBodyBytes(), config.llm().maxInspectedBodyBytes(),
                config.llm().maxHeldEventBytes(), upstreamIdleNanos, config.proxy().rawRelay(),
                positive(config.limits().requestBodyTimeout()), positive(config.limits().sendTimeout()),
                new InspectBudget(config.limits().inspectBudget().orElse(defaultInspectBudget())), new ServerHooks());
        this.headTimeoutNanos = positive(config.limits().requestHeadTimeout());
        this.memory = new MemoryMark(config.limits().shedHeapFraction(), config.limits().shedDirectFraction());
        try {
            this.upstreamSsl = target.ssl() ? SslContextBuilder.forClient().build() : null;
        } catch (SSLException e) {
            throw new IllegalStateException("cannot set up TLS to " + config.upstream().url().uri(), e);
        }
    }

    /** Binds the proxy port; returns the port bound (for port 0, the one the system chose). */
    public int start(String host, int port) {
        ServerBootstrap b = new ServerBootstrap()
                .group(group)
                .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 4096)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.RCVBUF_ALLOCATOR, UpstreamPool.READS)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        clientChannels.add(ch);
                        initClient(ch);
                    }
                });
        serverChannel = b.bind(host, port).syncUninterruptibly().channel();
        long idle = settings.idleTimeout().toNanos();
        long shortest = Math.min(idle > 0 ? idle : Long.MAX_VALUE, headTimeoutNanos);
        // one sweep over every client connection, not a timer per connection
        long every = Math.max(TimeUnit.MILLISECONDS.toNanos(10), Math.min(TimeUnit.SECONDS.toNanos(15), shortest / 4));
        clientIdleSweep = group.next().scheduleAtFixedRate(() -> sweepClients(idle), every, every,
                TimeUnit.NANOSECONDS);
        memory.check();
        // two MXBean reads five times a second: shedding starts within 200 ms of a collection that shows the mark
        memoryCheck = group.next().scheduleAtFixedRate(this::checkMemory, 200, 200, TimeUnit.MILLISECONDS);
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /**
     * Closes client connections idle (no request in progress) for {@code idleNanos} (zero: never), and those whose
     * request head has not come whole within the head timeout; each on its own loop.
     */
    private void sweepClients(long idleNanos) {
        for (Channel ch : clientChannels) {
            ClientChannelHandler handler = ch.pipeline().get(ClientChannelHandler.class);
            if (handler != null) {
                ch.eventLoop().execute(() -> handler.sweep(System.nanoTime(), idleNanos, headTimeoutNanos));
            }
        }
    }

    private void checkMemory() {
        boolean was = memory.over();
        MemoryMark.Reading r = memory.check();
        if (r.over() != was) {
            LOG.warnf(r.over() ? "memory past its mark (heap %d of %d bytes after collection, direct %d of %d): new "
                    + "requests get 503 until it is back under; open streams go on (llm_sidecar_requests_shed_total)"
                    : "memory back under its mark (heap %d of %d bytes after collection, direct %d of %d): new requests "
                    + "are served again", r.heapUsed(), r.heapMark(), r.directUsed(), r.directMark());
        }
    }

    /** Memory against the marks past which new requests are shed. */
    public MemoryMark memory() {
        return memory;
    }

    /** 30 % of the maximum direct memory, where inspected bodies are held (sidecar.limits.inspect-budget unset). */
    static long defaultInspectBudget() {
        return io.netty.util.internal.PlatformDependent.maxDirectMemory() * 3 / 10;
    }

    /** Bytes of request bodies held for inspection now, all exchanges. */
    public long inspectBudgetUsed() {
        return exchanges.inspectBudget().used();
    }

    /** sidecar.limits.inspect-budget, as in force. */
    public long inspectBudgetLimit() {
        return exchanges.inspectBudget().limit();
    }

    /** A duration as nanoseconds; zero or negative: never (the largest value). */
    private static long positive(java.time.Duration d) {
        return d.isNegative() || d.isZero() ? Long.MAX_VALUE : d.toNanos();
    }

    private void initClient(Channel ch) {
        ClientCodec codec = new ClientCodec(settings.maxInitialLineLength(), settings.maxHeaderSize(), 1 << 20);
        ChannelInitializer<Channel> stream = new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel streamChannel) {
                streamChannel.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(true, false),
                        new ClientChannelHandler(exchanges, routes, connectionErrors, loop(streamChannel.eventLoop()),
                                true));
            }
        };
        HttpServerUpgradeHandler upgrade = new HttpServerUpgradeHandler(codec, protocol ->
                AsciiString.contentEquals(Http2CodecUtil.HTTP_UPGRADE_PROTOCOL_NAME, protocol)
                        ? new Http2ServerUpgradeCodec(Http2FrameCodecBuilder.forServer().build(),
                                new Http2MultiplexHandler(stream, stream))
                        : null, MAX_UPGRADE_BODY_BYTES);
        ChannelInitializer<Channel> priorKnowledge = new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel h2) {
                // in this initializer's place, ahead of the HTTP/1 handler at the end of the pipeline
                String self = h2.pipeline().context(this).name();
                h2.pipeline().addAfter(self, "h2-frames", Http2FrameCodecBuilder.forServer().build());
                h2.pipeline().addAfter("h2-frames", "h2-streams", new Http2MultiplexHandler(stream));
            }
        };
        ClientChannelHandler handler = new ClientChannelHandler(exchanges, routes, connectionErrors,
                loop(ch.eventLoop()), false);
        ch.pipeline().addLast(handler.headClock(), new CleartextUpgrade(codec, upgrade, priorKnowledge), handler);
        if (RelayHold.ON) {
            ch.pipeline().addFirst(new RelayHold());
        }
    }

    /** The upstream connections and idle timeouts of {@code loop} (created on first use, from that loop). */
    private LoopResources loop(EventLoop loop) {
        LoopResources r = loops.get(loop);
        return r != null ? r : loops.computeIfAbsent(loop, l -> new LoopResources(
                new UpstreamPool(l, this::connect, upstreamSsl, target.host(), target.port(), keepAliveNanos,
                        config.upstream().maxConnections(),
                        () -> exchanges.traffic().count(ProxyEvent.IDLE_CONNECTION_RETIRED),
                        () -> connectionErrors.record(Peer.UPSTREAM, new java.io.IOException("idle connection failed")),
                        () -> exchanges.traffic().count(ProxyEvent.RELAY_FRAMING_ANOMALY)),
                new LoopTimeouts(l, exchanges.shortestTimeoutNanos())));
    }

    private ChannelFuture connect(EventLoop loop, ChannelInitializer<Channel> init) {
        Bootstrap b = UpstreamPool.options(new Bootstrap(), (int) config.upstream().connectTimeout().toMillis())
                .group(loop)
                .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .handler(init);
        return b.connect(target.host(), target.port());
    }

    /** The server's side of every exchange's life: in-flight count, draining, one-time warnings. */
    private final class ServerHooks implements ExchangeContext.Server {
        @Override
        public boolean draining() {
            return draining;
        }

        @Override
        public boolean shedding() {
            return memory.over();
        }

        @Override
        public void exchangeStarted() {
            inFlight.incrementAndGet();
        }

        @Override
        public void exchangeEnded() {
            inFlight.decrementAndGet();
        }

        @Override
        public void warnOnce(String kind, String message) {
            if (warned.add(kind)) {
                LOG.warn(message);
            }
        }

        @Override
        public void logBug(String message, Throwable t) {
            LOG.error(message, t);
        }
    }

    /** Requests in progress (responses not yet ended), LLM or not. */
    public int inFlight() {
        return inFlight.get();
    }

    public boolean draining() {
        return draining;
    }

    /**
     * Graceful shutdown: from now on new requests get 503 with {@code Connection: close}; the returned future
     * completes when every request in progress has ended, or after {@code grace}, whichever comes first (it
     * never fails). Streams still open then are cut when the server closes. Only the first call starts the drain:
     * later ones (the signal's hook, then each shutdown phase) get the same future, so the grace is counted once.
     */
    public synchronized CompletableFuture<Void> drain(Duration grace) {
        if (drained != null) {
            return drained;
        }
        draining = true;
        CompletableFuture<Void> done = new CompletableFuture<>();
        drained = done;
        long deadline = System.nanoTime() + grace.toNanos();
        int open = inFlight.get();
        if (open > 0) {
            LOG.infof("draining %d open request(s) for up to %s", open, grace);
        }
        if (open == 0 || grace.isZero() || grace.isNegative()) {
            done.complete(null);
            return done;
        }
        EventLoop timer = group.next();
        var check = timer.scheduleAtFixedRate(() -> {
            if (inFlight.get() == 0 || System.nanoTime() - deadline >= 0) {
                done.complete(null);
            }
        }, 20, 20, TimeUnit.MILLISECONDS);
        done.whenComplete((v, t) -> check.cancel(false));
        return done;
    }

    /**
     * Stops listening, closes every client connection (cutting open streams) and every idle upstream one, and waits
     * (at most 5 s) until every exchange has ended, so that what observes them has seen each end before it closes.
     */
    public void close() {
        draining = true;
        if (clientIdleSweep != null) {
            clientIdleSweep.cancel(false);
        }
        if (memoryCheck != null) {
            memoryCheck.cancel(false);
        }
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
        }
        clientChannels.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        for (Map.Entry<EventLoop, LoopResources> e : loops.entrySet()) {
            e.getKey().submit(e.getValue().pool()::closeIdle).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        // a closed channel's exchange ends on its loop after the close future completed
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (inFlight() > 0 && System.nanoTime() - deadline < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
