package dev.llmsidecar.live;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.app.SidecarTelemetry;
import dev.llmsidecar.measure.RequestSeriesRig;
import dev.llmsidecar.support.TestConfigs;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.TokenCountSource;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.LlmRoutes;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * /q/llm, its text form and what the live page's history samples, from requests reported as the proxy reports them,
 * on a fake clock: every figure is exact.
 */
class LiveStatsTest {

    static final long MS = 1_000_000;
    static final LlmRoutes ROUTES = new LlmRoutes(new JsonFactory());
    static final LlmOperation CHAT = ROUTES.match("POST", "/v1/chat/completions");
    static final LlmOperation EMBEDDINGS = ROUTES.match("POST", "/v1/embeddings");

    final AtomicLong clock = new AtomicLong(5_000 * 1_000_000_000L);
    final SidecarTelemetry telemetry = new SidecarTelemetry(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT).getPrometheusRegistry(),
            TestConfigs.sidecar("http://127.0.0.1:1", Map.of(
                    "sidecar.slo.classes", "default,batch",
                    "sidecar.slo.objectives.interactive.slo-class", "default",
                    "sidecar.slo.objectives.interactive.ttft", "PT0.5S",
                    "sidecar.slo.objectives.interactive.tpot", "PT0.05S",
                    "sidecar.slo.objectives.batch.slo-class", "batch",
                    "sidecar.slo.objectives.batch.e2e", "PT2S")), clock::get);

    /** One minute of the traffic: 16 good chat streams, one upstream error, two embeddings; read at 59 s. */
    void aMinuteOfTraffic() {
        for (int i = 0; i < 16; i++) {
            clock.addAndGet(3_000 * MS);
            report("sim-llama-8b", CHAT, "default", RequestResult.builder(true, Outcome.OK, 200)
                    .ttft(200 * MS).tpot(20 * MS).e2e(340 * MS).outputTokens(8, TokenCountSource.USAGE).build());
        }
        report("sim-llama-8b", CHAT, "default", RequestResult.builder(true, Outcome.UPSTREAM_ERROR, 500)
                .e2e(5 * MS).build());
        for (int i = 0; i < 2; i++) {
            report("sim-embed", EMBEDDINGS, "batch", RequestResult.builder(false, Outcome.OK, 200).e2e(50 * MS)
                    .build());
        }
        clock.addAndGet(11_000 * MS);
    }

    void report(String model, LlmOperation op, String sloClass, RequestResult r) {
        var live = telemetry.reporter().started(RequestSeriesRig.labels(telemetry.reporter().labelSources(), model,
                op, "unknown", sloClass), r.streaming());
        live.onEnd(); // (the timeline's last call)
        telemetry.reporter().finished(live, model, null, r);
    }

    @Test
    void ratesDivideByWhatEachWindowObservedAndSaySo() {
        aMinuteOfTraffic();
        JsonObject doc = LiveStats.render(telemetry);
        assertThat(doc.getJsonObject("windows")).isEqualTo(new JsonObject()
                .put("1m", new JsonObject().put("observed_seconds", 59.0).put("covers", 0.983))
                .put("5m", new JsonObject().put("observed_seconds", 59.0).put("covers", 0.197))
                .put("1h", new JsonObject().put("observed_seconds", 59.0).put("covers", 0.016)));
        JsonObject chat = doc.getJsonObject("models").getJsonObject("sim-llama-8b");
        for (String w : List.of("1m", "5m", "1h")) {
            JsonObject g = chat.getJsonObject("goodput").getJsonObject("default").getJsonObject(w);
            assertThat(g.getLong("requests")).isEqualTo(17);
            assertThat(g.getLong("good_requests")).isEqualTo(16);
            assertThat(g.getDouble("attainment")).isEqualTo(16 / 17.0);
            assertThat(g.getDouble("goodput_requests_per_second")).isEqualTo(16 / 59.0);
            assertThat(g.getDouble("goodput_tokens_per_second")).isEqualTo(16 * 8 / 59.0);
            assertThat(chat.getJsonObject("requests").getJsonObject(w)).isEqualTo(new JsonObject().put("count", 17L)
                    .put("per_second", 17 / 59.0).put("errors", 1L).put("cancelled", 0L));
        }
    }

    @Test
    void whatIsNotKnownIsLeftOutNotNull() {
        aMinuteOfTraffic();
        clock.addAndGet(Duration.ofMinutes(3).toNanos()); // the 1m window is empty again, 5m and 1h are not
        JsonObject doc = LiveStats.render(telemetry);
        assertThat(emptyOrNull(doc, "")).isEmpty();
        JsonObject chat = doc.getJsonObject("models").getJsonObject("sim-llama-8b");
        assertThat(chat.fieldNames()).containsExactly("requests", "ttft", "tpot", "e2e", "goodput");
        assertThat(chat.getJsonObject("ttft").fieldNames()).containsExactly("5m", "1h");
        assertThat(chat.getJsonObject("ttft").getJsonObject("5m").getLong("count")).isEqualTo(16);
        // no stream: no TTFT, TPOT or ITL
        JsonObject embed = doc.getJsonObject("models").getJsonObject("sim-embed");
        assertThat(embed.fieldNames()).containsExactly("requests", "e2e", "goodput");
        // too few samples for a drift ratio, no knee yet
        assertThat(doc.getJsonObject("saturation").fieldNames()).containsExactly("in_flight", "bands");
    }

    @Test
    void theTextFormFitsAScreenAndSaysTheSameAsTheJson() {
        aMinuteOfTraffic();
        String text = LiveStatsText.render(LiveStats.render(telemetry));
        // (HdrHistogram reports the top of a bucket: 340 ms reads 342 ms, see WindowStats)
        assertThat(text).isEqualTo("""
                in flight 0, waiting for a first token 0, at most 1, stalled 0

                sim-embed             1m (first 59 s)     5m (first 59 s)     1h (first 59 s)
                  requests            2 (0.03/s)          2 (0.03/s)          2 (0.03/s)
                  errors              0 (0%)              0 (0%)              0 (0%)
                  E2E p50 / p99       50 / 50 ms          50 / 50 ms          50 / 50 ms
                  batch: attainment   100% of 2           100% of 2           100% of 2
                  batch: goodput      0.03/s, 0 tok/s     0.03/s, 0 tok/s     0.03/s, 0 tok/s

                sim-llama-8b          1m (first 59 s)     5m (first 59 s)     1h (first 59 s)
                  requests            17 (0.29/s)         17 (0.29/s)         17 (0.29/s)
                  errors              1 (5.9%)            1 (5.9%)            1 (5.9%)
                  TTFT p50 / p99      200 / 200 ms        200 / 200 ms        200 / 200 ms
                  TPOT p50 / p99      20 / 20 ms          20 / 20 ms          20 / 20 ms
                  E2E p50 / p99       342 / 342 ms        342 / 342 ms        342 / 342 ms
                  default: attainment 94.1% of 17         94.1% of 17         94.1% of 17
                  default: goodput    0.27/s, 2.17 tok/s  0.27/s, 2.17 tok/s  0.27/s, 2.17 tok/s

                more: /q/llm (JSON), /q/llm/ui (live page), /q/metrics (Prometheus); docs/slo.md, docs/metrics.md
                """);
    }

    @Test
    void theHistoryKeepsWhatThePagePlotsOfTheShortestWindow() {
        aMinuteOfTraffic();
        telemetry.sampleHistory(1_700_000_000_000L);
        clock.addAndGet(5_000 * MS);
        telemetry.sampleHistory(1_700_000_005_000L);
        JsonObject h = telemetry.history().render(1_700_000_006_000L);
        assertThat(h.getJsonArray("t")).containsExactly(1_700_000_000_000L, 1_700_000_005_000L);
        assertThat(h.getString("window")).isEqualTo("1m");
        List<String> paths = new ArrayList<>();
        for (Object s : h.getJsonArray("series")) {
            paths.add(String.join("/", ((JsonObject) s).getJsonArray("path").getList()));
        }
        assertThat(paths).containsExactlyInAnyOrder("in_flight", "waiting_first_token",
                "models/sim-llama-8b/ttft/1m/p50", "models/sim-llama-8b/ttft/1m/p90", "models/sim-llama-8b/ttft/1m/p99",
                "models/sim-llama-8b/tpot/1m/p50", "models/sim-llama-8b/tpot/1m/p90", "models/sim-llama-8b/tpot/1m/p99",
                "models/sim-llama-8b/goodput/default/1m/attainment",
                "models/sim-llama-8b/goodput/default/1m/goodput_requests_per_second",
                "models/sim-llama-8b/goodput/default/1m/goodput_tokens_per_second",
                "models/sim-embed/goodput/batch/1m/attainment",
                "models/sim-embed/goodput/batch/1m/goodput_requests_per_second",
                "models/sim-embed/goodput/batch/1m/goodput_tokens_per_second");
        JsonObject rate = h.getJsonArray("series").stream().map(JsonObject.class::cast)
                .filter(s -> s.getJsonArray("path").getList().equals(List.of("models", "sim-llama-8b", "goodput",
                        "default", "1m", "goodput_requests_per_second"))).findFirst().orElseThrow();
        // 59 s then 64 s after the start: the 1m window observed 59 s, then the slices from 10 s on (54 s)
        assertThat(rate.getJsonArray("values")).containsExactly(asFloat(16 / 59.0), asFloat(13 / 54.0));
    }

    /** What the history keeps of a value: a float, written as its shortest decimal. */
    static double asFloat(double v) {
        return Double.parseDouble(Float.toString((float) v));
    }

    /** Paths of null values and of empty objects or arrays in {@code v}. */
    static List<String> emptyOrNull(Object v, String at) {
        List<String> out = new ArrayList<>();
        if (v == null) {
            out.add(at);
        } else if (v instanceof JsonObject o) {
            if (o.isEmpty()) {
                out.add(at);
            }
            o.forEach(e -> out.addAll(emptyOrNull(e.getValue(), at + "/" + e.getKey())));
        } else if (v instanceof JsonArray a) {
            for (int i = 0; i < a.size(); i++) {
                out.addAll(emptyOrNull(a.getValue(i), at + "/" + i));
            }
        }
        return out;
    }
}
