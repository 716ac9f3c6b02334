package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.live.LiveStats;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Drives the simulated engine into and out of SLO violation and checks exact good / violated counts,
 * attainment and goodput, with errors, broken streams and cancellations in the denominator.
 */
class GoodputEndToEndTest {

    static final EngineBehaviour ENGINE = EngineBehaviour.defaults()
            .withTiming(Duration.ofMillis(60), Duration.ofMillis(5)).withOutputTokens(8).withCachedTokenRatio(0.5)
            .withPerRequestMetrics(true);
    static final Map<String, String> SLO = Map.of(
            "sidecar.slo.classes", "default,batch",
            "sidecar.slo.objectives.interactive.ttft", "PT0.35S",
            "sidecar.slo.objectives.interactive.tpot", "PT0.03S",
            "sidecar.slo.objectives.interactive.target", "0.9",
            "sidecar.slo.objectives.interactive.slo-class", "default",
            "sidecar.slo.objectives.batch.slo-class", "batch",
            "sidecar.slo.objectives.batch.e2e", "PT5S");
    /** Asks for usage itself: exact counts, cache hits and the engine's metrics from the first request. */
    static final String BODY = "{\"model\":\"sim-llama-8b\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}";

    Future<ProxyFixture.Received> send(ProxyFixture f, Map<String, String> headers) {
        return f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", Buffer.buffer(BODY), headers);
    }

    /** A cold JVM's first requests are slow: warm up under another model name, which the assertions filter out. */
    static void warmUp(ProxyFixture f) {
        List<Future<ProxyFixture.Received>> warm = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            warm.add(f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions",
                    Buffer.buffer(BODY.replace("sim-llama-8b", "warmup")), Map.of()));
        }
        warm.forEach(ProxyFixture::await);
    }

    @Test
    void exactGoodAndViolatedCountsWithErrorsInTheDenominator() {
        try (ProxyFixture f = new ProxyFixture(ENGINE, SLO)) {
            warmUp(f);
            List<Future<ProxyFixture.Received>> all = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                all.add(send(f, Map.of()));                                   // good
            }
            for (int i = 0; i < 3; i++) {
                all.add(send(f, Map.of("x-sim-ttft-ms", "500")));             // TTFT violation
            }
            for (int i = 0; i < 2; i++) {
                all.add(send(f, Map.of("x-sim-inter-chunk-ms", "60")));       // TPOT violation
            }
            all.add(send(f, Map.of("x-sim-status", "500")));                  // upstream error
            all.add(send(f, Map.of("x-sim-fail-after-chunks", "2")));         // broken mid-stream
            Map<String, String> batch = new HashMap<>(Map.of("x-slo-class", "batch"));
            all.add(send(f, batch));                                          // other class, good
            all.add(send(f, Map.of("x-slo-class", "not-allowed")));           // unknown class -> default, good
            all.forEach(ProxyFixture::await);

            Scrape s = f.scrape();
            String[] d = {"model", "sim-llama-8b", "slo_class", "default"};
            assertThat(s.sum("llm_sidecar_slo_requests_total", d)).isEqualTo(13);
            assertThat(s.sum("llm_sidecar_slo_good_requests_total", d)).isEqualTo(6);
            assertThat(s.sum("llm_sidecar_slo_violations_total", "model", "sim-llama-8b", "objective", "interactive", "criterion", "ttft")).isEqualTo(3);
            assertThat(s.sum("llm_sidecar_slo_violations_total", "model", "sim-llama-8b", "objective", "interactive", "criterion", "tpot")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_slo_violations_total", "model", "sim-llama-8b", "objective", "interactive", "criterion", "error")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_slo_objective_requests_total", "model", "sim-llama-8b", "objective", "interactive")).isEqualTo(13);
            assertThat(s.sum("llm_sidecar_slo_objective_good_requests_total", "model", "sim-llama-8b", "objective", "interactive")).isEqualTo(6);
            assertThat(s.sum("llm_sidecar_slo_good_output_tokens_total", d)).isEqualTo(6 * 8);
            assertThat(s.sum("llm_sidecar_slo_requests_total", "slo_class", "batch")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_slo_good_requests_total", "slo_class", "batch")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_slo_target_ratio", "objective", "interactive")).isEqualTo(0.9);
            // every generated token useful or wasted: the 7 good requests (both classes) x 8 tokens; the 5 that missed
            // an objective; the 2 tokens streamed before the break (the 500 generated none)
            assertThat(s.sum("llm_sidecar_useful_output_tokens_total", "model", "sim-llama-8b")).isEqualTo(7 * 8);
            assertThat(s.sum("llm_sidecar_wasted_output_tokens_total", "model", "sim-llama-8b", "reason",
                    "slo_missed")).isEqualTo(5 * 8);
            assertThat(s.sum("llm_sidecar_wasted_output_tokens_total", "model", "sim-llama-8b", "reason", "failed"))
                    .isEqualTo(2);
            // the 0.35 s threshold became a bucket boundary of every latency histogram
            assertThat(s.has("gen_ai_server_time_to_first_token_seconds_bucket", "le", "0.35")).isTrue();
            // cache split and engine decomposition (the engine reports vLLM per-request metrics)
            assertThat(s.sum("llm_sidecar_time_to_first_token_by_cache_seconds_count", "model", "sim-llama-8b", "cache", "hit")).isEqualTo(12);
            assertThat(s.sum("llm_sidecar_engine_reported_time_to_first_token_seconds_count", "model", "sim-llama-8b")).isEqualTo(12);
            String[] m = {"model", "sim-llama-8b"};
            double outside = s.sum("llm_sidecar_time_to_first_token_outside_engine_seconds_sum", m)
                    / s.sum("llm_sidecar_time_to_first_token_outside_engine_seconds_count", m);
            // loopback hop plus this box burst-handling 13 requests at once; far below the 60-500 ms engine TTFTs
            assertThat(outside).isBetween(0.0, 0.05);

            JsonObject live = LiveStats.render(f.telemetry);
            JsonObject minute = live.getJsonObject("models").getJsonObject("sim-llama-8b").getJsonObject("goodput")
                    .getJsonObject("default").getJsonObject("1m");
            assertThat(minute.getLong("requests")).isEqualTo(13);
            assertThat(minute.getLong("good_requests")).isEqualTo(6);
            assertThat(minute.getDouble("attainment")).isEqualTo(6.0 / 13);
            assertThat(live.getInteger("in_flight")).isZero();
        }
    }

    @Test
    void recoveringFromViolationRaisesAttainment() {
        try (ProxyFixture f = new ProxyFixture(ENGINE, SLO)) {
            warmUp(f);
            List<Future<ProxyFixture.Received>> slow = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                slow.add(send(f, Map.of("x-sim-ttft-ms", "450")));
            }
            slow.forEach(ProxyFixture::await);
            assertThat(f.scrape().sum("llm_sidecar_slo_good_requests_total", "model", "sim-llama-8b")).isZero();
            List<Future<ProxyFixture.Received>> fast = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                fast.add(send(f, Map.of()));
            }
            fast.forEach(ProxyFixture::await);
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_slo_good_requests_total", "model", "sim-llama-8b")
                    / s.sum("llm_sidecar_slo_requests_total", "model", "sim-llama-8b"))
                    .isEqualTo(12.0 / 16);
        }
    }
}
