package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.proxy.MemoryMark;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.Scrape;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import java.lang.management.MemoryPoolMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Past its memory mark the sidecar sheds new work and keeps what is open (issue 41): a burst of new requests gets 503
 * with Retry-After and x-llm-sidecar-error: overloaded, counted with end_reason="shed" and judged by no objective,
 * while a stream that was open goes on to its last byte; once memory is back under the mark requests are served
 * again. The mark is set 64 MB above this JVM's live heap, and 160 MB of ballast pushes the live heap past it.
 */
class ShedTest {

    static final String STREAM = "{\"model\":\"sim-llama-8b\",\"stream\":true,\"max_tokens\":60,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    static final String PLAIN = "{\"model\":\"sim-llama-8b\",\"max_tokens\":2,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    static final int BURST = 20;

    static byte[][] ballast;

    static void awaitShedding(ProxyFixture f, boolean shedding) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (f.proxy().memory().over() != shedding) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("memory past the mark: " + f.proxy().memory().last());
            }
            System.gc(); // the mark is read after a collection
            Thread.sleep(250);
        }
    }

    @Test
    void pastTheMarkNewRequestsAreShedAndOpenStreamsGoOn() throws Exception {
        MemoryPoolMXBean tenured = MemoryMark.tenuredPool();
        System.gc();
        long live = tenured.getCollectionUsage().getUsed();
        long max = tenured.getUsage().getMax() > 0 ? tenured.getUsage().getMax() : Runtime.getRuntime().maxMemory();
        double fraction = (live + 64.0 * 1024 * 1024) / max;
        EngineBehaviour engine = EngineBehaviour.defaults().withTiming(Duration.ofMillis(20), Duration.ofMillis(50));
        try (ProxyFixture f = new ProxyFixture(engine, Map.of("sidecar.limits.shed-heap-fraction",
                Double.toString(fraction)))) {
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", PLAIN, Map.of()).status()).isEqualTo(200);
            Future<Received> open = f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", Buffer.buffer(STREAM),
                    Map.of());
            ballast = new byte[10][];
            for (int i = 0; i < ballast.length; i++) {
                ballast[i] = new byte[16 * 1024 * 1024];
            }
            awaitShedding(f, true);
            Scrape gauges = f.scrape();
            assertThat(gauges.sum("llm_sidecar_memory_used_bytes", "budget", "heap"))
                    .isGreaterThan(gauges.sum("llm_sidecar_memory_budget_bytes", "budget", "heap"));
            List<Future<Received>> burst = new ArrayList<>();
            for (int i = 0; i < BURST; i++) {
                burst.add(f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", Buffer.buffer(PLAIN), Map.of()));
            }
            for (Future<Received> r : burst) {
                Received shed = ProxyFixture.await(r);
                assertThat(shed.status()).isEqualTo(503);
                assertThat(shed.headers().get("x-llm-sidecar-error")).isEqualTo("overloaded");
                assertThat(shed.headers().get("retry-after")).isEqualTo("1");
            }
            Received stream = ProxyFixture.await(open);
            assertThat(stream.status()).as("the stream open before the mark").isEqualTo(200);
            assertThat(stream.text()).contains("\"finish_reason\":\"length\"").endsWith("data: [DONE]\n\n");
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "shed")).isEqualTo(BURST);
            assertThat(s.sum("llm_sidecar_requests_total", "outcome", "shed")).isEqualTo(BURST);
            assertThat(s.sum("llm_sidecar_requests_shed_total")).isEqualTo(BURST);
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "completed")).as("the stream and the first")
                    .isEqualTo(2);
            ballast = null;
            awaitShedding(f, false);
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", PLAIN, Map.of()).status()).isEqualTo(200);
        } finally {
            ballast = null;
        }
    }
}
