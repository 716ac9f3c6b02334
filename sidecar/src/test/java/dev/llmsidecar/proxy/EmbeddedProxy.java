package dev.llmsidecar.proxy;

import static java.nio.charset.StandardCharsets.ISO_8859_1;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.observe.RequestHead;
import dev.llmsidecar.observe.TrafficEvent;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.rewrite.Rewriter;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.LlmRoutes;
import dev.llmsidecar.wire.TokenEventSink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The proxy's handlers on Netty {@code EmbeddedChannel}s, without a socket: one client connection with the codec the
 * proxy installs, and an upstream connection per connect, each with the upstream codec. What goes upstream and what the
 * client gets are the bytes on the wire; every step runs in the caller's thread. For unit tests and fuzz targets.
 */
public final class EmbeddedProxy implements AutoCloseable {

    private static final URI UPSTREAM = URI.create("http://engine.local:8000");

    /** Upstream connections, in the order they were opened. */
    public final List<EmbeddedChannel> upstreams = new ArrayList<>();
    /** How each exchange ended ({@code OUTCOME status}), and the token chunks its decoder reported. */
    public final Recording traffic = new Recording();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final List<EmbeddedChannel> clients = new ArrayList<>();
    private final ExchangeContext context;
    private final LoopResources loop;
    private final LlmRoutes routes = new LlmRoutes(new JsonFactory()); // one for every connection, as the server has
    private EmbeddedChannel client;

    public EmbeddedProxy(Rewriter rewriter, boolean rawRelay) {
        this(null, rewriter, rawRelay);
    }

    /**
     * @param observer what the proxy reports to (null: {@link #traffic}, which records it); a real one (the
     *     sidecar's telemetry) measures the whole relay
     */
    public EmbeddedProxy(TrafficObserver observer, Rewriter rewriter, boolean rawRelay) {
        client = new EmbeddedChannel();
        clients.add(client);
        dev.llmsidecar.config.HttpTarget target = dev.llmsidecar.config.HttpTarget.of(UPSTREAM);
        TrafficObserver reported = observer != null ? observer : traffic;
        context = new ExchangeContext(reported, rewriter, target, false, 1 << 20, 1 << 20, 1 << 20,
                TimeUnit.SECONDS.toNanos(30), rawRelay, TimeUnit.SECONDS.toNanos(60), TimeUnit.MINUTES.toNanos(5),
                new InspectBudget(1L << 30), new ExchangeContext.Server() {
                    @Override
                    public boolean draining() {
                        return false;
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
                    }

                    @Override
                    public void logBug(String message, Throwable t) {
                        throw new AssertionError(message, t);
                    }
                });
        UpstreamPool pool = new UpstreamPool(client.eventLoop(), (loop, init) -> {
            EmbeddedChannel upstream = new EmbeddedChannel(init);
            upstreams.add(upstream);
            return upstream.newSucceededFuture();
        }, null, target.host(), target.port(), TimeUnit.SECONDS.toNanos(60), 8, () -> { }, () -> { },
                () -> reported.count(ProxyEvent.RELAY_FRAMING_ANOMALY));
        loop = new LoopResources(pool, new LoopTimeouts(client.eventLoop(), context.upstreamIdleNanos()));
        install(client);
    }

    private void install(EmbeddedChannel ch) {
        ch.pipeline().addLast(new ClientCodec(4096, 8192, 1 << 20), new ClientChannelHandler(context,
                routes, new ConnectionErrors(context.traffic()), loop, false));
    }

    /** The current client connection. */
    public EmbeddedChannel client() {
        return client;
    }

    /** A new client connection, the current one from now on (the upstream pool is the same). */
    public EmbeddedChannel newClient() {
        client = new EmbeddedChannel();
        clients.add(client);
        install(client);
        return client;
    }

    /** Exchanges in flight (their responses not yet ended). */
    public int inFlight() {
        return inFlight.get();
    }

    /** Bytes from the client. */
    public void fromClient(byte[] bytes) {
        client.writeInbound(Unpooled.wrappedBuffer(bytes));
    }

    /** Bytes from upstream connection {@code n}, as one read. */
    public void fromUpstream(int n, byte[] bytes, int from, int to) {
        upstreams.get(n).writeInbound(Unpooled.wrappedBuffer(bytes, from, to - from));
    }

    /** Everything a channel wrote since last asked. */
    public static byte[] written(EmbeddedChannel ch) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (Object m; (m = ch.readOutbound()) != null;) {
            ByteBuf b = (ByteBuf) m;
            byte[] bytes = new byte[b.readableBytes()];
            b.readBytes(bytes);
            out.writeBytes(bytes);
            b.release();
        }
        return out.toByteArray();
    }

    public static String text(byte[] bytes) {
        return new String(bytes, ISO_8859_1);
    }

    @Override
    public void close() {
        upstreams.forEach(EmbeddedChannel::finishAndReleaseAll);
        clients.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    /** Records what the proxy reports: how each exchange ended, its token chunks, and the proxy events. */
    public static final class Recording implements TrafficObserver {
        public final List<String> ended = new ArrayList<>();
        public final Map<TrafficEvent, Long> events = new HashMap<>();
        public int tokenChunks;

        @Override
        public ExchangeObserver exchangeStarted(RequestHead head, LlmOperation operation, long receivedNanos) {
            return new ExchangeObserver() {
                @Override
                public TokenEventSink responseStarted(int status, boolean streaming, long nanos) {
                    return new TokenEventSink() {
                        @Override
                        public void onDataChunk(long n) {
                        }

                        @Override
                        public void onTokenChunk(long n, boolean reasoning, long cumulative) {
                            tokenChunks++;
                        }

                        @Override
                        public void onUsage(dev.llmsidecar.wire.Usage usage) {
                        }

                        @Override
                        public void onFinishReason(String finishReason) {
                        }

                        @Override
                        public void onStreamError() {
                        }

                        @Override
                        public void onUndecodable() {
                        }
                    };
                }

                @Override
                public void ended(dev.llmsidecar.timeline.Outcome outcome, int status, long nanos) {
                    ended.add(outcome.name() + " " + status);
                }
            };
        }

        @Override
        public void refused(boolean llmRoute, int status) {
            ended.add("refused " + status);
        }

        @Override
        public void count(TrafficEvent event, long n) {
            events.merge(event, n, Long::sum);
        }

        public long counted(TrafficEvent event) {
            return events.getOrDefault(event, 0L);
        }
    }
}
