package dev.llmsidecar.proxy;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.wire.LlmRoutes;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy;
import com.fasterxml.jackson.core.JsonFactory;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jboss.logging.Logger;

/**
 * Entry point of the data path: every request on the proxy port comes here, on its event loop, and becomes an
 * {@link Exchange} with the upstream. Built on the Vert.x core HTTP client rather than vertx-http-proxy because
 * the sidecar needs a hook on every response chunk (arrival and written-to-client timestamps), a request-body
 * rewrite (include_usage) and the removal of one SSE event, with backpressure and cancellation under its own
 * control.
 */
public final class ProxyHandler implements Handler<HttpServerRequest> {

    private static final Logger LOG = Logger.getLogger(ProxyHandler.class);

    final Vertx vertx;
    final SidecarConfig config;
    /** Where everything the data path sees and does is reported (the seam to the metrics). */
    final TrafficObserver traffic;
    private final HttpClientOptions clientOptions;
    private final PoolOptions poolOptions;
    private final HttpClientOptions freshOptions;
    private final Map<Thread, HttpClient> clients = new ConcurrentHashMap<>();
    private final Map<Thread, HttpClient> freshClients = new ConcurrentHashMap<>();
    final UpstreamTarget target;
    final LlmRoutes routes;
    final IncludeUsagePolicy usagePolicy;
    final long maxRequestBodyBytes;
    /** An idle pooled connection is not reused from this age on (sidecar.upstream.keep-alive-timeout). */
    final long keepAliveNanos;
    private final ConnectionErrors connectionErrors;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    /** Requests whose response has not ended (or whose connection has not closed) yet. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile boolean draining;

    public ProxyHandler(Vertx vertx, SidecarConfig config, TrafficObserver traffic) {
        this.vertx = vertx;
        this.config = config;
        this.traffic = traffic;
        this.target = UpstreamTarget.of(config.upstream().url());
        this.routes = new LlmRoutes(new JsonFactory());
        this.usagePolicy = new IncludeUsagePolicy(config.llm().injectIncludeUsage());
        this.maxRequestBodyBytes = config.proxy().maxRequestBodyBytes();
        this.connectionErrors = new ConnectionErrors(traffic);
        Duration keepAlive = config.upstream().keepAliveTimeout();
        this.keepAliveNanos = keepAlive.isNegative() ? 0 : keepAlive.toNanos();
        // Vert.x counts whole seconds and only sweeps the pool now and then; the exact age is checked when a
        // connection is taken (Exchange), so Vert.x's sweep rounds up and only clears what is surely expired
        int keepAliveSeconds = keepAlive.isZero() || keepAlive.isNegative() ? 0
                : (int) Math.min(Integer.MAX_VALUE, (keepAlive.toMillis() + 999) / 1000);
        this.clientOptions = new HttpClientOptions()
                .setDefaultHost(target.host())
                .setDefaultPort(target.port())
                .setSsl(target.ssl())
                .setProtocolVersion(HttpVersion.HTTP_1_1)
                .setKeepAlive(keepAliveSeconds > 0)
                .setKeepAliveTimeout(Math.max(1, keepAliveSeconds))
                .setTcpNoDelay(true)
                .setDecompressionSupported(false)
                .setConnectTimeout((int) config.upstream().connectTimeout().toMillis());
        // a request sent again after its reused connection closed goes on a connection of its own
        this.freshOptions = new HttpClientOptions(clientOptions).setKeepAlive(false);
        this.poolOptions = new PoolOptions().setHttp1MaxSize(config.upstream().maxConnections()).setCleanerPeriod(250);
    }

    /**
     * The upstream client of the calling event loop. Its pooled connections were opened from this loop and live on
     * it, so an upstream read is handled, timestamped and written to the client on one thread. With one shared
     * pool, a connection opened on another loop hands every chunk over to this one (a task queue and a thread
     * wake-up per chunk, which on a busy box costs more than the proxying itself).
     */
    HttpClient client() {
        return clients.computeIfAbsent(Thread.currentThread(), t -> vertx.createHttpClient(clientOptions, poolOptions));
    }

    /** A client of the calling event loop whose connections carry one request each (for a request sent again). */
    HttpClient freshClient() {
        return freshClients.computeIfAbsent(Thread.currentThread(),
                t -> vertx.createHttpClient(freshOptions, poolOptions));
    }

    /** Counts a failure of an upstream connection outside an exchange's handling. */
    Handler<Throwable> upstreamConnectionErrors() {
        return connectionErrors.upstream();
    }

    /** Logs {@code message} at WARN the first time {@code kind} happens; later ones are counted, not logged. */
    void warnOnce(String kind, String message) {
        if (warned.add(kind)) {
            LOG.warn(message);
        }
    }

    /** An exchange ended (response ended, or its connection closed): once per exchange. */
    void exchangeEnded() {
        inFlight.decrementAndGet();
    }

    @Override
    public void handle(HttpServerRequest request) {
        long receivedNanos = System.nanoTime();
        request.connection().exceptionHandler(connectionErrors.client());
        if (draining) {
            // shutting down: open streams finish, new requests go elsewhere (the client or balancer retries)
            request.response().putHeader("connection", "close").putHeader("retry-after", "1");
            SidecarError.SHUTTING_DOWN.send(request.response(), null);
            traffic.refused(routes.match(request.method(), request.path()) != null, SidecarError.SHUTTING_DOWN.status);
            return;
        }
        request.pause();
        Exchange exchange;
        try {
            exchange = new Exchange(this, request, receivedNanos, routes.match(request.method(), request.path()));
        } catch (RuntimeException e) {
            // a bug must cost this request, not the connection's in-flight count or the event loop
            LOG.error("llm-sidecar could not start an exchange", e);
            SidecarError.UPSTREAM_CLOSED.send(request.response(), null);
            return;
        }
        inFlight.incrementAndGet();
        exchange.start();
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
     * never fails). Streams still open then are cut when the server closes.
     */
    public Future<Void> drain(Duration grace) {
        draining = true;
        Promise<Void> done = Promise.promise();
        long deadline = System.nanoTime() + grace.toNanos();
        if (inFlight.get() == 0 || grace.isZero() || grace.isNegative()) {
            done.complete();
            return done.future();
        }
        vertx.setPeriodic(20, id -> {
            if (inFlight.get() == 0 || System.nanoTime() - deadline >= 0) {
                vertx.cancelTimer(id);
                done.tryComplete();
            }
        });
        return done.future();
    }

    public Future<Void> close() {
        return Future.join(java.util.stream.Stream.concat(clients.values().stream(), freshClients.values().stream())
                .map(HttpClient::close).toList()).mapEmpty();
    }
}
