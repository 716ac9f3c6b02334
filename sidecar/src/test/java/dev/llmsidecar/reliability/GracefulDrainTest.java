package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Graceful shutdown (what SIGTERM triggers through ProxyLifecycle's shutdown hook): new requests are refused with 503
 * and {@code Connection: close}, open streams run to their end within the grace, and the drain gives up at the
 * grace.
 */
class GracefulDrainTest {

    static final EngineBehaviour ENGINE = EngineBehaviour.defaults()
            .withTiming(Duration.ofMillis(20), Duration.ofMillis(40)).withFixedCreated(1_700_000_000L);
    static final String STREAM = "{\"model\":\"sim-llama-8b\",\"stream\":true,\"max_tokens\":25,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    @Test
    void openStreamsFinishAndNewRequestsAreRefused() throws Exception {
        try (ProxyFixture f = new ProxyFixture(ENGINE, Map.of())) {
            Map<String, String> id = Map.of("x-request-id", "drain1");
            Received direct = f.post(f.enginePort, "/v1/chat/completions", STREAM, id);
            Future<Received> open = f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", Buffer.buffer(STREAM), id);
            waitUntil(() -> f.proxy().inFlight() == 1, 5);
            Thread.sleep(100); // the stream is under way
            long drainStart = System.nanoTime();
            CompletableFuture<Void> drained = f.proxy().drain(Duration.ofSeconds(20));
            assertThat(drained.isDone()).isFalse();

            Received refused = f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of());
            assertThat(refused.status()).isEqualTo(503);
            assertThat(refused.headers().get("connection")).isEqualToIgnoringCase("close");
            assertThat(refused.headers().get("x-llm-sidecar-error")).isEqualTo("shutting_down");

            Received stream = ProxyFixture.await(open);
            long streamEnd = System.nanoTime();
            assertThat(stream.failure()).isNull();
            assertThat(stream.text()).isEqualTo(direct.text()).endsWith("data: [DONE]\n\n");
            ProxyFixture.await(drained);
            long drainEnd = System.nanoTime();
            assertThat(drainEnd).as("the drain waited for the stream").isGreaterThanOrEqualTo(streamEnd - 50_000_000L);
            assertThat((drainEnd - drainStart) / 1e9).as("and no longer than needed").isLessThan(10);
            assertThat(f.proxy().inFlight()).isZero();
            assertThat(f.scrape().sum("llm_sidecar_requests_total", "outcome", "ok")).isEqualTo(1);
            assertThat(f.scrape().sum("llm_sidecar_http_requests_total", "status_class", "5xx")).isEqualTo(1);
        }
    }

    @Test
    void theDrainGivesUpAtTheGrace() throws Exception {
        try (ProxyFixture f = new ProxyFixture(ENGINE.withTiming(Duration.ofMillis(20), Duration.ofMillis(200)),
                Map.of())) {
            f.allowOpenRequestsAtClose(); // the stream outlives the grace; the server's close cuts it
            Future<Received> open = f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", Buffer.buffer(STREAM),
                    Map.of());
            waitUntil(() -> f.proxy().inFlight() == 1, 5);
            long start = System.nanoTime();
            CompletableFuture<Void> drained = f.proxy().drain(Duration.ofMillis(300));
            Thread.sleep(100);
            // the signal's hook and each of Quarkus's shutdown phases ask again: the grace runs once, from the first
            assertThat(f.proxy().drain(Duration.ofSeconds(20))).isSameAs(drained);
            ProxyFixture.await(drained);
            double seconds = (System.nanoTime() - start) / 1e9;
            // at the 0.3 s grace (the timer's 20 ms period below it), long before the 5 s stream ends; the upper bound
            // leaves seconds for a scheduler delay, as the stream still running is what shows the grace was kept
            assertThat(seconds).isBetween(0.25, 3.0);
            assertThat(open.isComplete()).as("a 5 s stream is still running when a 0.3 s grace ends").isFalse();
            assertThat(f.proxy().inFlight()).isEqualTo(1);
        }
    }

    @Test
    void aClientAbortDuringTheDrainReleasesIt() throws Exception {
        try (ProxyFixture f = new ProxyFixture(ENGINE.withTiming(Duration.ofMillis(20), Duration.ofMillis(200)),
                Map.of())) {
            Promise<io.vertx.core.http.HttpClientRequest> req = Promise.promise();
            RequestOptions o = new RequestOptions().setPort(f.proxyPort).setMethod(HttpMethod.POST)
                    .setURI("/v1/chat/completions").putHeader("content-type", "application/json");
            f.vertx.runOnContext(v -> f.client().request(o).onSuccess(r -> {
                r.response().onSuccess(res -> res.handler(b -> { }));
                r.end(STREAM);
                req.complete(r);
            }));
            io.vertx.core.http.HttpClientRequest r = ProxyFixture.await(req.future());
            waitUntil(() -> f.proxy().inFlight() == 1, 5);
            CompletableFuture<Void> drained = f.proxy().drain(Duration.ofSeconds(30));
            f.vertx.runOnContext(v -> r.connection().close());
            drained.get(10, TimeUnit.SECONDS);
            assertThat(f.proxy().inFlight()).isZero();
        }
    }

    static void waitUntil(java.util.function.BooleanSupplier condition, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within " + seconds + " s");
            }
            Thread.sleep(10);
        }
    }
}
