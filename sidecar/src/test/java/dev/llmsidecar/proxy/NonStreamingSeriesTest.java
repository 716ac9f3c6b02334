package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.live.LiveStats;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A response that does not stream has no first token of its own (its TTFT is its E2E): it must not leak into what
 * means "time to first token". The engine keeps a known schedule (first token at 150 ms, then one every 30 ms: E2E
 * about 360 ms for 8 tokens); streaming and non-streaming requests of the same format and model run side by side.
 */
class NonStreamingSeriesTest {

    static final EngineBehaviour SCHEDULE = EngineBehaviour.defaults()
            .withTiming(Duration.ofMillis(150), Duration.ofMillis(30)).withOutputTokens(8);
    static final String MESSAGES = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
    static final int EACH = 3;

    @Test
    void nonStreamingRequestsStayOutOfTheFirstTokenSeriesAndWindows() {
        try (ProxyFixture f = new ProxyFixture(SCHEDULE, ProxyFixture.pinned(Map.of(
                "sidecar.slo.objectives.interactive.ttft", "PT0.25S"), "m-ollama", "warm"))) {
            // warm-up under other model names: class loading and JIT are not what is measured
            f.post(f.proxyPort, "/api/chat", "{\"model\":\"warm\",\"stream\":false," + MESSAGES + "}", Map.of());
            f.post(f.proxyPort, "/api/chat", "{\"model\":\"warm\"," + MESSAGES + "}", Map.of());
            for (int i = 0; i < EACH; i++) {
                assertThat(f.post(f.proxyPort, "/api/chat", "{\"model\":\"m-ollama\",\"stream\":false," + MESSAGES + "}",
                        Map.of()).status()).isEqualTo(200);
                assertThat(f.post(f.proxyPort, "/api/chat", "{\"model\":\"m-ollama\"," + MESSAGES + "}", Map.of())
                        .status()).isEqualTo(200);
                assertThat(f.post(f.proxyPort, "/generate", "{\"inputs\":\"hi\",\"parameters\":{\"max_new_tokens\":8}}",
                        Map.of()).status()).isEqualTo(200);
                assertThat(f.post(f.proxyPort, "/generate_stream", "{\"inputs\":\"hi\",\"parameters\":"
                        + "{\"max_new_tokens\":8}}", Map.of()).status()).isEqualTo(200);
            }
            Scrape s = f.scrape();
            String[] ollama = {"model", "m-ollama"};

            // TTFT outside the engine: streaming requests only, a few ms (the bug put ~200 ms of decode here)
            double outsideCount = s.sum("llm_sidecar_time_to_first_token_outside_engine_seconds_count", ollama);
            assertThat(outsideCount).isEqualTo(EACH);
            assertThat(s.sum("llm_sidecar_time_to_first_token_outside_engine_seconds_sum", ollama) / outsideCount)
                    .isBetween(0.0, 0.05);
            // the non-streaming ones under their own name: E2E minus the engine's whole time, also a few ms
            for (String[] m : new String[][] {ollama, {"model", "unknown"}}) {
                double count = s.sum("llm_sidecar_request_duration_outside_engine_seconds_count", m);
                assertThat(count).as(m[1]).isEqualTo(EACH);
                assertThat(s.sum("llm_sidecar_request_duration_outside_engine_seconds_sum", m) / count).as(m[1])
                        .isBetween(0.0, 0.05);
            }

            // live windows: TTFT of the streams only (~150 ms), not the non-streaming E2E (~360 ms). Never below the
            // engine's 150 ms (causal); the upper bound sits between the two, 150 ms above the streams' TTFT, so a
            // request delayed by the scheduler on a busy machine does not decide it
            JsonObject models = LiveStats.render(f.telemetry).getJsonObject("models");
            for (String model : new String[] {"m-ollama", "unknown"}) {
                JsonObject ttft = models.getJsonObject(model).getJsonObject("ttft").getJsonObject("1m");
                assertThat(ttft.getLong("count")).as(model).isEqualTo(EACH);
                assertThat(ttft.getDouble("p99")).as(model).isBetween(0.150, 0.300);
                assertThat(s.sum("llm_sidecar_latency_window_p99_seconds", "model", model, "metric", "ttft",
                        "window", "1m")).as(model).isBetween(0.150, 0.300);
                // E2E windows keep both kinds
                assertThat(models.getJsonObject(model).getJsonObject("e2e").getJsonObject("1m").getLong("count"))
                        .isEqualTo(2 * EACH);
            }

            // the TTFT histogram keeps both, told apart by the streaming label
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count", "model", "m-ollama", "streaming",
                    "false")).isEqualTo(EACH);
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_sum", "model", "m-ollama", "streaming",
                    "false") / EACH).isGreaterThan(0.3);

            // SLO: a 250 ms TTFT objective does not judge responses that do not stream (their "TTFT" is ~360 ms):
            // they are neither violations nor unjudged successes, but reported as judged by no objective
            assertThat(s.sum("llm_sidecar_slo_requests_total", ollama)).isEqualTo(EACH);
            assertThat(s.sum("llm_sidecar_slo_good_requests_total", ollama)).isEqualTo(EACH);
            assertThat(s.sum("llm_sidecar_slo_excluded_requests_total", "model", "m-ollama", "reason", "no_objective"))
                    .isEqualTo(EACH);
            assertThat(s.sum("llm_sidecar_slo_violations_total", "model", "m-ollama", "criterion", "ttft")).isZero();
        }
    }
}
