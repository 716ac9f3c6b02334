package dev.llmsidecar.engine;

import dev.llmsidecar.config.HttpTarget;
import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.Recorders;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.time.Duration;
import java.util.Objects;

/**
 * Asks the engine whether it can serve (its health endpoint: vLLM, SGLang, TGI and llama.cpp answer {@code /health}
 * with 200 once the model is loaded) every few seconds, and tells two states apart that an alert must not confuse:
 * the engine has not been up yet since the sidecar started (loading a model can take many minutes), and the engine
 * was up and went down. Exported as {@code llm_sidecar_engine_ready} and {@code llm_sidecar_engine_started}; the
 * readiness check can follow it, so a pod whose engine is loading or down takes no traffic.
 */
public final class EngineHealth {

    private final Vertx vertx;
    private final HttpTarget target;
    private final long intervalMillis;
    private final long timeoutMillis;
    private final Context context;
    private volatile boolean ready;
    private volatile boolean started;
    private HttpClient client;
    private long timer = -1;
    private boolean probing;

    public EngineHealth(Vertx vertx, Recorders recorders, HttpTarget target, Duration interval, Duration timeout) {
        this.vertx = Objects.requireNonNull(vertx);
        this.target = Objects.requireNonNull(target);
        this.intervalMillis = Math.max(1, interval.toMillis());
        this.timeoutMillis = Math.max(1, timeout.toMillis());
        this.context = vertx.getOrCreateContext();
        recorders.observe(Contract.ENGINE_READY, () -> ready ? 1 : 0);
        recorders.observe(Contract.ENGINE_STARTED, () -> started ? 1 : 0);
    }

    public void start() {
        context.runOnContext(v -> {
            // one connection kept between probes (a connect and close every 2 s were most of an idle sidecar's probe
            // cost), dropped after 3 s idle: before the 5 s after which uvicorn (vLLM, SGLang) and llama.cpp close
            // one, so a probe rarely meets a connection the engine is closing; when it does, it asks again at once
            client = vertx.createHttpClient(new HttpClientOptions()
                    .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMillis)).setKeepAlive(true)
                    .setKeepAliveTimeout(3).setMaxPoolSize(1));
            probe();
            timer = vertx.setPeriodic(intervalMillis, id -> probe());
        });
    }

    public void stop() {
        context.runOnContext(v -> {
            if (timer >= 0) {
                vertx.cancelTimer(timer);
            }
            if (client != null) {
                client.close();
            }
        });
    }

    /** The engine answered its health check at the last probe. */
    public boolean ready() {
        return ready;
    }

    /** The engine has been ready at least once since the sidecar started. */
    public boolean started() {
        return started;
    }

    private void probe() {
        if (probing) {
            return; // the previous probe is still waiting for its timeout
        }
        probing = true;
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.GET).setHost(target.host())
                .setPort(target.port()).setSsl(target.ssl()).setURI(target.ownRequestUri())
                .setTimeout(timeoutMillis);
        // a kept connection the engine closed under the probe: once more, afresh (not after a timeout: an engine that
        // does not answer is not asked twice as long)
        ask(options).recover(failed -> failed instanceof io.vertx.core.http.HttpClosedException
                || failed instanceof java.io.IOException ? ask(options) : io.vertx.core.Future.failedFuture(failed))
                .onComplete(ar -> {
                    probing = false;
                    ready = ar.succeeded() && ar.result() >= 200 && ar.result() < 300;
                    started |= ready;
                });
    }

    private io.vertx.core.Future<Integer> ask(RequestOptions options) {
        return client.request(options).compose(req -> req.send())
                .compose(res -> res.body().map(b -> res.statusCode()));
    }
}
