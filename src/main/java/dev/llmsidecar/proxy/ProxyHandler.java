package dev.llmsidecar.proxy;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.export.LlmMetrics;
import dev.llmsidecar.export.RequestReporter;
import dev.llmsidecar.export.otel.RequestTracing;
import dev.llmsidecar.wire.LlmRoutes;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Entry point of the data path: every request on the proxy port comes here, on its event loop, and becomes an
 * {@link Exchange} with the upstream. Built on the Vert.x core HTTP client rather than vertx-http-proxy because
 * the sidecar needs a hook on every response chunk (arrival and written-to-client timestamps), a request-body
 * rewrite (include_usage) and the removal of one SSE event, with backpressure and cancellation under its own
 * control.
 */
public final class ProxyHandler implements Handler<HttpServerRequest> {

    final Vertx vertx;
    final SidecarConfig config;
    final LlmMetrics metrics;
    final RequestReporter reporter;
    final HttpClient client;
    final UpstreamTarget target;
    final LlmRoutes routes;
    final RequestTracing tracing;
    /** Requests whose response has not ended (or whose connection has not closed) yet. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile boolean draining;

    public ProxyHandler(Vertx vertx, SidecarConfig config, RequestReporter reporter) {
        this(vertx, config, reporter, RequestTracing.OFF);
    }

    public ProxyHandler(Vertx vertx, SidecarConfig config, RequestReporter reporter, RequestTracing tracing) {
        this.vertx = vertx;
        this.tracing = tracing;
        this.config = config;
        this.reporter = reporter;
        this.metrics = reporter.metrics();
        this.target = UpstreamTarget.of(config.upstream().url());
        this.routes = new LlmRoutes(new JsonFactory());
        HttpClientOptions options = new HttpClientOptions()
                .setDefaultHost(target.host())
                .setDefaultPort(target.port())
                .setSsl(target.ssl())
                .setProtocolVersion(HttpVersion.HTTP_1_1)
                .setKeepAlive(true)
                .setTcpNoDelay(true)
                .setDecompressionSupported(false)
                .setConnectTimeout((int) config.upstream().connectTimeout().toMillis());
        this.client = vertx.createHttpClient(options,
                new PoolOptions().setHttp1MaxSize(config.upstream().maxConnections()));
    }

    @Override
    public void handle(HttpServerRequest request) {
        long receivedNanos = System.nanoTime();
        if (draining) {
            // shutting down: open streams finish, new requests go elsewhere (the client or balancer retries)
            request.response().setStatusCode(503).putHeader("connection", "close").putHeader("retry-after", "1")
                    .putHeader("content-type", "application/json").putHeader("x-llm-sidecar-error", "shutting_down")
                    .end("{\"error\":{\"message\":\"llm-sidecar: shutting down\",\"type\":\"unavailable\",\"code\":503}}");
            metrics.httpRequest(routes.match(request.method(), request.path()) == null ? "other" : "llm", "5xx");
            return;
        }
        inFlight.incrementAndGet();
        // the end handler also runs when the connection closes before the response ended
        request.response().endHandler(v -> inFlight.decrementAndGet());
        request.pause();
        new Exchange(this, request, receivedNanos, routes.match(request.method(), request.path())).start();
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
        return client.close();
    }
}
