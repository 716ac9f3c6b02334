package dev.llmsidecar.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.metrics.Recorders;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        EngineHealth health = new EngineHealth(vertx, Recorders.prometheus(registry), URI.create("http://127.0.0.1:" + port + "/health"),
                Duration.ofMillis(50), Duration.ofMillis(500));
        try {
            health.start();
            Thread.sleep(300);
            assertThat(health.ready()).isFalse();
            assertThat(health.started()).as("loading").isFalse();
            assertThat(registry.get("llm_sidecar.engine.started").gauge().value()).isZero();

            status.set(200);
            waitUntil(health::ready);
            assertThat(health.started()).isTrue();
            assertThat(registry.get("llm_sidecar.engine.ready").gauge().value()).isEqualTo(1);

            // down: the port closes (connection refused)
            server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            waitUntil(() -> !health.ready());
            assertThat(health.started()).as("it was up: down, not loading").isTrue();
            assertThat(registry.get("llm_sidecar.engine.ready").gauge().value()).isZero();
            assertThat(registry.get("llm_sidecar.engine.started").gauge().value()).isEqualTo(1);
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
