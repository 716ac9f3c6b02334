package dev.llmsidecar.proxy;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.export.LlmMetrics;
import dev.llmsidecar.export.RequestReporter;
import dev.llmsidecar.export.otel.RequestTracing;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.openai.OpenAiChunkParser;
import dev.llmsidecar.wire.openai.OpenAiRequestInspector;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;

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
    final OpenAiRequestInspector inspector;
    final OpenAiChunkParser chunkParser;
    final RequestTracing tracing;

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
        JsonFactory json = new JsonFactory();
        this.inspector = new OpenAiRequestInspector(json);
        this.chunkParser = new OpenAiChunkParser(json);
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
        request.pause();
        new Exchange(this, request, receivedNanos, LlmOperation.match(request.method(), request.path())).start();
    }

    public Future<Void> close() {
        return client.close();
    }
}
