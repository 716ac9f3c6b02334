package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.demo.DemoTraffic;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The demo's traffic mix goes through the proxy in every format and decodes cleanly. */
class DemoTrafficTest {

    @Test
    void demoTrafficCoversTheFormatsWithoutUndecodableChunks() throws InterruptedException {
        EngineBehaviour fast = EngineBehaviour.defaults().withTiming(Duration.ofMillis(5), Duration.ofMillis(1));
        try (ProxyFixture f = new ProxyFixture(fast, Map.of())) {
            DemoTraffic traffic = new DemoTraffic(f.vertx, "127.0.0.1", f.proxyPort, 100, 16);
            traffic.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            Scrape s = f.scrape();
            while (System.nanoTime() < deadline && s.sum("llm_sidecar_requests_total", "operation", "embeddings") < 3) {
                Thread.sleep(100);
                s = f.scrape();
            }
            ProxyFixture.await(f.vertx.executeBlocking(() -> {
                traffic.stop();
                return null;
            }));
            assertThat(s.sum("llm_sidecar_requests_total", "operation", "embeddings")).isGreaterThanOrEqualTo(3);
            assertThat(s.sum("llm_sidecar_requests_total", "operation", "chat")).isPositive();
            assertThat(s.sum("llm_sidecar_requests_total", "operation", "text_completion")).isPositive();
            assertThat(s.sum("llm_sidecar_time_to_first_reasoning_token_seconds_count")).isPositive();
            assertThat(s.has("llm_sidecar_undecodable_chunks_total")).isFalse();
        }
    }
}
