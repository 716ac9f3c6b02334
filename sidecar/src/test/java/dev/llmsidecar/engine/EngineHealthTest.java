package dev.llmsidecar.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.support.Scrape;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** Loading, up, down: the probe tells "not up yet since start" from "went down". */
class EngineHealthTest {

    @Test
    void aLoadingEngineIsNotStartedAndOneThatWentDownStaysStarted() throws Exception {
        Vertx vertx = Vertx.vertx();
        AtomicInteger status = new AtomicInteger(503); // llama.cpp answers 503 while it loads the model
        HttpServer server = vertx.createHttpServer().requestHandler(r -> r.response().setStatusCode(status.get()).end());
        int port = server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS)
                .actualPort();
        PrometheusRegistry registry = new PrometheusRegistry();
        EngineHealth health = new EngineHealth(vertx, PrometheusRecorder.only(registry), dev.llmsidecar.config.HttpTarget.of(URI.create("http://127.0.0.1:" + port + "/health")),
                Duration.ofMillis(50), Duration.ofMillis(500));
        try {
            health.start();
            Thread.sleep(300);
            assertThat(health.ready()).isFalse();
            assertThat(health.started()).as("loading").isFalse();
            assertThat(Scrape.of(registry).sum("llm_sidecar_engine_started")).isZero();

            status.set(200);
            waitUntil(health::ready);
            assertThat(health.started()).isTrue();
            assertThat(Scrape.of(registry).sum("llm_sidecar_engine_ready")).isEqualTo(1);

            // down: the port closes (connection refused)
            server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            waitUntil(() -> !health.ready());
            assertThat(health.started()).as("it was up: down, not loading").isTrue();
            assertThat(Scrape.of(registry).sum("llm_sidecar_engine_ready")).isZero();
            assertThat(Scrape.of(registry).sum("llm_sidecar_engine_started")).isEqualTo(1);
        } finally {
            health.stop();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    static void waitUntil(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("within 5 s").isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
