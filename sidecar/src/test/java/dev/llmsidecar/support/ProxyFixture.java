package dev.llmsidecar.support;

import dev.llmsidecar.app.SidecarTelemetry;
import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.includeusage.IncludeUsage;
import dev.llmsidecar.otel.OtelPipeline;
import dev.llmsidecar.proxy.ProxyServer;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.SimulatedEngine;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A simulated engine and the sidecar's proxy in front of it, on loopback ephemeral ports, with the real
 * ProxyServer and a Prometheus registry; plus a client that records what it receives and when.
 */
public final class ProxyFixture implements AutoCloseable {

    /** Netty's epoll transport where it loads, as the application prefers it (quarkus.vertx.prefer-native-transport). */
    public final Vertx vertx = Vertx.vertx(new io.vertx.core.VertxOptions().setPreferNativeTransport(true));
    public final SimulatedEngine engine;
    public final int enginePort;
    public final int proxyPort;
    // exemplars come from the OpenTelemetry pipeline's spans, when one is given (SidecarTelemetry)
    public final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    public final SidecarTelemetry telemetry;
    private final ProxyServer proxy;
    private final HttpClient client;
    // every client call runs on this one context: a response handler set from another thread could miss data
    private final io.vertx.core.Context clientContext = vertx.getOrCreateContext();

    /** A received response: status, headers, body bytes, arrival time of each read, and how it ended. */
    /** @param endedNanos when the response ended (its last byte, e.g. the chunked terminator, was read) */
    public record Received(int status, MultiMap headers, Buffer body, List<Long> chunkNanos, List<Buffer> reads,
            long sentNanos, long endedNanos, Throwable failure) {
        public String text() {
            return body.toString();
        }

        /** Arrival time of the first read containing {@code marker}, or -1. */
        public long firstReadContaining(String marker) {
            return firstRead(read -> read.contains(marker));
        }

        /** Arrival time of the first read whose text {@code matches}, or -1. */
        public long firstRead(java.util.function.Predicate<String> matches) {
            for (int i = 0; i < reads.size(); i++) {
                if (matches.test(reads.get(i).toString())) {
                    return chunkNanos.get(i);
                }
            }
            return -1;
        }
    }

    public ProxyFixture(EngineBehaviour behaviour, Map<String, String> config) {
        this(behaviour, config, null);
    }

    /** @param upstreamOverride upstream URL to use instead of the engine (e.g. a closed port) */
    public ProxyFixture(EngineBehaviour behaviour, Map<String, String> config, String upstreamOverride) {
        this(behaviour, config, upstreamOverride, null);
    }

    /** @param otelSettings otel.* settings for the OpenTelemetry pipeline, or null for none */
    public ProxyFixture(EngineBehaviour behaviour, Map<String, String> config, String upstreamOverride,
            Map<String, String> otelSettings) {
        engine = new SimulatedEngine(vertx, behaviour);
        enginePort = await(engine.start("127.0.0.1", 0));
        SidecarConfig sidecar = TestConfigs.sidecar(
                upstreamOverride != null ? upstreamOverride : "http://127.0.0.1:" + enginePort, pinningTheEngine(behaviour, config));
        telemetry = new SidecarTelemetry(registry.getPrometheusRegistry(), sidecar, System::nanoTime,
                otelSettings == null ? OtelPipeline.disabled() : OtelPipeline.create(otelSettings, registry.getPrometheusRegistry(),
                        OtelPipeline.Histograms.of(sidecar.metrics().otlpHistograms(),
                                sidecar.metrics().nativeMaxBuckets())));
        // the proxy on the event loops of the fixture's Vert.x, as the application runs it on the application's
        proxy = new ProxyServer(vertx.nettyEventLoopGroup(), sidecar, telemetry.traffic(),
                new IncludeUsage(sidecar.llm().injectIncludeUsage(), telemetry.traffic()), ProxyServer.Settings.DEFAULTS);
        proxyPort = proxy.start("127.0.0.1", 0);
        dev.llmsidecar.app.ProxyGauges.register(telemetry.recorders(), proxy);
        client = vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1"),
                new PoolOptions().setHttp1MaxSize(1000));
    }

    public Scrape scrape() {
        return new Scrape(registry.scrape());
    }

    /**
     * A scrape once no LLM request is in flight and every event loop has finished what it was doing (within 10 s).
     * A client that read a response's last byte may look before the sidecar, on its event loop, has recorded the
     * request that ended with that byte: on a busy machine that gap can be milliseconds. A request is recorded within
     * one event-loop task, so a task queued behind it on every loop runs only once it is recorded.
     */
    public Scrape settledScrape() {
        Waits.eventually(registry, "llm_sidecar_requests_in_flight", java.time.Duration.ofSeconds(10),
                "no LLM request in flight", () -> telemetry.inFlight().count() == 0);
        for (io.netty.util.concurrent.EventExecutor loop : vertx.nettyEventLoopGroup()) {
            try {
                loop.submit(() -> { }).get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("event loop " + loop + " did not come round", e);
            }
        }
        return scrape();
    }

    public Received post(int port, String path, String body, Map<String, String> headers) {
        return await(send(port, HttpMethod.POST, path, Buffer.buffer(body), headers));
    }

    /** Sends a request and collects the response without failing on a broken connection. */
    public Future<Received> send(int port, HttpMethod method, String path, Buffer body, Map<String, String> headers) {
        RequestOptions options = new RequestOptions().setPort(port).setMethod(method).setURI(path)
                .putHeader("content-type", "application/json");
        headers.forEach(options::putHeader);
        io.vertx.core.Promise<Received> result = io.vertx.core.Promise.promise();
        clientContext.runOnContext(v -> doSend(options, body).onComplete(ar -> settle(ar, result)));
        return result.future();
    }

    /**
     * Completes {@code result} once every event loop has come round after the response ended: the sidecar records a
     * request in the event-loop task that wrote its last byte, so a task queued behind it on every loop runs only
     * once it is recorded. A test that reads the metrics after a response then sees that response's request.
     */
    private void settle(io.vertx.core.AsyncResult<Received> done, io.vertx.core.Promise<Received> result) {
        java.util.List<io.netty.util.concurrent.EventExecutor> loops = new ArrayList<>();
        vertx.nettyEventLoopGroup().forEach(loops::add);
        java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(loops.size());
        for (io.netty.util.concurrent.EventExecutor loop : loops) {
            loop.execute(() -> {
                if (left.decrementAndGet() == 0) {
                    result.handle(done);
                }
            });
        }
    }

    private Future<Received> doSend(RequestOptions options, Buffer body) {
        long sent = System.nanoTime();
        return client.request(options).compose(req -> req.send(body)).compose(res -> {
            Buffer received = Buffer.buffer();
            List<Long> times = new ArrayList<>();
            List<Buffer> reads = new ArrayList<>();
            io.vertx.core.Promise<Received> done = io.vertx.core.Promise.promise();
            res.handler(b -> {
                times.add(System.nanoTime());
                reads.add(b.copy());
                received.appendBuffer(b);
            });
            res.endHandler(v -> done.tryComplete(new Received(res.statusCode(), res.headers(), received, times, reads, sent, System.nanoTime(), null)));
            res.exceptionHandler(t -> done.tryComplete(new Received(res.statusCode(), res.headers(), received, times, reads, sent, System.nanoTime(), t)));
            return done.future();
        });
    }

    public HttpClient client() {
        return client;
    }

    /** The proxy under test (graceful-shutdown drain, in-flight count). */
    public ProxyServer proxy() {
        return proxy;
    }

    /** The pinned-models setting that keeps every name a test sends as its own label (comma-separated). */
    public static Map<String, String> pinned(String... models) {
        return Map.of(PINNED_MODELS, String.join(",", models));
    }

    /** {@code config} with {@link #pinned} names added to it. */
    public static Map<String, String> pinned(Map<String, String> config, String... models) {
        var all = new java.util.HashMap<>(config);
        all.putAll(pinned(models));
        return all;
    }

    private static final String PINNED_MODELS = "sidecar.metrics.pinned-models";

    /**
     * A model name takes a label slot only once the engine answered it with 2xx or listed it (issue 42); the
     * application's discovery lists the engine's model, which this fixture does not run. The operator's equivalent
     * is pinning it: the simulated engine's model is pinned unless the test pins names itself.
     */
    private static Map<String, String> pinningTheEngine(EngineBehaviour behaviour, Map<String, String> config) {
        return config.containsKey(PINNED_MODELS) ? config : pinned(config, behaviour.model());
    }

    public static <T> T await(Future<T> future) {
        return await(future.toCompletionStage().toCompletableFuture());
    }

    public static <T> T await(java.util.concurrent.CompletableFuture<T> future) {
        try {
            return future.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private boolean openRequestsAllowed;

    /** This test leaves requests open on purpose: do not assert that none is in flight at close. */
    public void allowOpenRequestsAtClose() {
        openRequestsAllowed = true;
    }

    /**
     * Waits (up to 5 s) until nothing is in flight, in the proxy's count and in the exported gauge; fails otherwise.
     * Every test ends with this unless it allowed open requests: a fault that leaks an in-flight count would hold a
     * graceful shutdown for its whole grace.
     */
    public void assertNothingInFlight() {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (proxy.inFlight() != 0 || telemetry.inFlight().count() != 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("in flight after the test: proxy " + proxy.inFlight() + ", LLM gauge "
                        + telemetry.inFlight().count());
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Override
    public void close() {
        AssertionError leaked = null;
        if (!openRequestsAllowed) {
            try {
                assertNothingInFlight();
            } catch (AssertionError e) {
                leaked = e;
            }
        }
        try {
            await(client.close());
            proxy.close();
            await(engine.close());
            telemetry.close();
        } finally {
            await(vertx.close());
        }
        if (leaked != null) {
            throw leaked;
        }
    }
}
