package dev.llmsidecar.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.llmsidecar.metrics.Buckets;
import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.otlp.OtelRecorder;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.support.CollectingMetricReader;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.wire.Usage;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The definitions docs/metrics.md states, one schedule each, on both backends (plain Java, no HTTP): what is in a
 * series and what is not.
 */
class MetricDefinitionsTest {

    static final long MS = 1_000_000;

    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    final CollectingMetricReader otlp = new CollectingMetricReader();
    final SdkMeterProvider provider = SdkMeterProvider.builder().registerMetricReader(otlp).build();
    final Buckets buckets = new Buckets(Buckets.Preset.DEFAULT, List.of(), List.of(), List.of());
    final RequestSeriesRig metrics = new RequestSeriesRig(Recorders.of(new PrometheusRecorder(
            registry.getPrometheusRegistry(), buckets), new OtelRecorder(provider.get("test"), buckets)), Upstream.NONE);

    @AfterEach
    void close() {
        provider.close();
    }

    /** Runs one request through the metrics as the proxy does: live events while it runs, then its end. */
    RequestResult run(boolean streaming, Outcome outcome, java.util.function.Consumer<RequestTimeline> feed, long end) {
        LiveRequest live = metrics.started(RequestSeriesRig.labels("m", "", ""), streaming);
        RequestTimeline t = new RequestTimeline(0, streaming, live);
        feed.accept(t);
        RequestResult r = t.finish(end, outcome, outcome == Outcome.OK ? 200 : 502);
        metrics.finished(live, r);
        return r;
    }

    Scrape scrape() {
        return new Scrape(registry.scrape());
    }

    HistogramPointData otlpPoint(String name, Map<String, Object> attributes) {
        Collection<MetricData> data = otlp.collect();
        return data.stream().filter(d -> d.getName().equals(name)).flatMap(d -> d.getHistogramData().getPoints()
                .stream()).filter(p -> attributes.entrySet().stream().allMatch(e -> p.getAttributes().asMap().entrySet()
                        .stream().anyMatch(a -> a.getKey().getKey().equals(e.getKey())
                                && a.getValue().equals(e.getValue())))).findFirst().orElse(null);
    }

    /**
     * One engine answer with prompt_tokens 2^31 and completion_tokens 2^31 - 1 (issue 41: it used to exhaust the
     * heap): the counts are capped at 2^24 before any use, each cap counted, and the ITL histogram gets the chunks' few
     * samples on both backends, not 2^31 of them.
     */
    @Test
    void absurdEngineCountsAreCappedCountedAndDoNotDriveWork() {
        run(true, Outcome.OK, t -> {
            t.onTokenChunk(10 * MS, false, -1);
            t.onTokenChunk(30 * MS, false, -1);
            t.onTokenChunk(50 * MS, false, -1);
            t.onUsage(new Usage(1L << 31, (1L << 31) - 1, -1));
        }, 60 * MS);
        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "input")).isEqualTo(1 << 24);
        assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "output")).isEqualTo(1 << 24);
        assertThat(s.sum("llm_sidecar_engine_values_clamped_total", "field", "prompt_tokens")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_engine_values_clamped_total", "field", "completion_tokens")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_engine_values_clamped_total", "field", "tokens_per_chunk")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_engine_values_clamped_total", "field", "cached_tokens")).isZero();
        // 2 gaps of 20 ms, each credited with the 4096 tokens a chunk may carry: 8192 samples of 20 ms / 4096
        assertThat(s.sum("llm_sidecar_inter_token_latency_seconds_count")).isEqualTo(8192);
        HistogramPointData otlpItl = otlpPoint("llm_sidecar.inter_token_latency", Map.of());
        assertThat(otlpItl.getCount()).isEqualTo(8192);
    }

    @Test
    void prefixCacheHitRatioDividesByTheInputOfRequestsThatReportedCachedTokens() {
        // one request says 60 of its 100 input tokens were cached; another (an engine without prompt_tokens_details)
        // says nothing about caching: its 300 input tokens must not dilute the ratio toward 0
        run(true, Outcome.OK, t -> {
            t.onTokenChunk(10 * MS, false, -1);
            t.onUsage(new Usage(100, 1, 60));
        }, 20 * MS);
        run(true, Outcome.OK, t -> {
            t.onTokenChunk(10 * MS, false, -1);
            t.onUsage(new Usage(300, 1, -1));
        }, 20 * MS);
        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "input")).isEqualTo(400);
        assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "cached_input")).isEqualTo(60);
        assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "cache_reporting_input")).isEqualTo(100);
        double ratio = s.sum("llm_sidecar_tokens_total", "token_type", "cached_input")
                / s.sum("llm_sidecar_tokens_total", "token_type", "cache_reporting_input");
        assertThat(ratio).isEqualTo(0.6);
    }

    @Test
    void timeToFirstChunkIsGeneratedContentAndThePreludeHasItsOwnSeries() {
        // role-only prelude at 5 ms (vLLM, response.created, message_start), first content at 120 ms
        run(true, Outcome.OK, t -> {
            t.onDataChunk(5 * MS);
            t.onTokenChunk(120 * MS, false, -1);
            t.onTokenChunk(140 * MS, false, -1);
        }, 150 * MS);
        Scrape s = scrape();
        assertThat(s.sum("gen_ai_client_operation_time_to_first_chunk_seconds_sum")).isCloseTo(0.120, within(1e-9));
        assertThat(s.sum("llm_sidecar_time_to_first_response_chunk_seconds_sum")).isCloseTo(0.005, within(1e-9));
        assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_sum")).isCloseTo(0.120, within(1e-9));
        assertThat(otlpPoint("gen_ai.client.operation.time_to_first_chunk", Map.of()).getSum())
                .isCloseTo(0.120, within(1e-9));
    }

    @Test
    void otlpTtftAndTpotHoldSuccessfulRequestsOnlyWhilePrometheusKeepsEveryOutcome() {
        java.util.function.Consumer<RequestTimeline> threeTokens = t -> {
            t.onTokenChunk(100 * MS, false, -1);
            t.onTokenChunk(130 * MS, false, -1);
            t.onTokenChunk(160 * MS, false, -1);
        };
        run(true, Outcome.OK, threeTokens, 170 * MS);
        run(true, Outcome.UPSTREAM_BROKEN, threeTokens, 900 * MS); // broke after three tokens
        Scrape s = scrape();
        // Prometheus: TTFT recorded as it happened, before anyone knew the outcome (no outcome label) ...
        assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count")).isEqualTo(2);
        // ... TPOT at the end, under the outcome label
        assertThat(s.sum("gen_ai_server_time_per_output_token_seconds_count", "outcome", "ok")).isEqualTo(1);
        assertThat(s.sum("gen_ai_server_time_per_output_token_seconds_count", "outcome", "upstream_broken"))
                .isEqualTo(1);
        // OTLP: successful requests only, as the GenAI semantic conventions define both
        assertThat(otlpPoint("gen_ai.server.time_to_first_token", Map.of()).getCount()).isEqualTo(1);
        assertThat(otlpPoint("gen_ai.server.time_per_output_token", Map.of()).getCount()).isEqualTo(1);
        // the request duration keeps both, with error.type on the failed one
        assertThat(otlpPoint("gen_ai.server.request.duration", Map.of("error.type", "upstream_broken")).getCount())
                .isEqualTo(1);
    }

    @Test
    void itlMeanDiffersFromTpotWhenTheFirstChunkCarriesSeveralTokens() {
        // 4 tokens in the first chunk at 100 ms, then 2 chunks of one token: N = 6, usage exact
        RequestResult r = run(true, Outcome.OK, t -> {
            t.onTokenChunk(100 * MS, false, 4);
            t.onTokenChunk(150 * MS, false, 5);
            t.onTokenChunk(200 * MS, false, 6);
            t.onUsage(new Usage(10, 6, -1));
        }, 210 * MS);
        assertThat(r.tpotNanos()).isEqualTo(100 * MS / 5); // (200 - 100) / (6 - 1) = 20 ms
        Scrape s = scrape();
        double itlMean = s.sum("llm_sidecar_inter_token_latency_seconds_sum")
                / s.sum("llm_sidecar_inter_token_latency_seconds_count");
        assertThat(itlMean).isCloseTo(0.050, within(1e-9)); // two gaps of 50 ms, one token each
        assertThat(s.sum("gen_ai_server_time_per_output_token_seconds_sum")).isCloseTo(0.020, within(1e-9));
    }

    @Test
    void bucketPresetsLineUpWithVllmAndOtelAndTheDefaultReachesTwoHours() {
        Buckets vllm = new Buckets(Buckets.Preset.VLLM, List.of(), List.of(), List.of(0.35));
        assertThat(vllm.bounds(Contract.TTFT.buckets())).startsWith(0.001, 0.005).contains(0.35).endsWith(640.0, 2560.0);
        assertThat(vllm.bounds(Contract.TPOT.buckets())).startsWith(0.01, 0.025).endsWith(40.0, 80.0);
        assertThat(vllm.bounds(Contract.REQUEST_DURATION.buckets())).startsWith(0.3, 0.35, 0.5).endsWith(7680.0);
        assertThat(vllm.bounds(Contract.TOKEN_USAGE.buckets())).startsWith(1.0, 2.0, 5.0).endsWith(1.0e7);
        assertThat(vllm.bounds(Contract.TOKEN_USAGE.buckets())).doesNotContain(0.35);
        Buckets otel = new Buckets(Buckets.Preset.OTEL, List.of(), List.of(), List.of());
        assertThat(otel.bounds(Contract.TTFT.buckets())).endsWith(7.5, 10.0);
        assertThat(otel.bounds(Contract.REQUEST_DURATION.buckets())).startsWith(0.01, 0.02).endsWith(81.92);
        Buckets standard = new Buckets(Buckets.Preset.DEFAULT, List.of(), List.of(), List.of());
        assertThat(standard.bounds(Contract.REQUEST_DURATION.buckets())).startsWith(0.001).endsWith(7200.0);
        // an explicit list replaces every latency family's preset
        Buckets custom = new Buckets(Buckets.Preset.VLLM, List.of(0.5, 1.0), List.of(), List.of(0.2));
        assertThat(custom.bounds(Contract.TTFT.buckets())).containsExactly(0.2, 0.5, 1.0);

        // and the registry exports them: a 3000 s reasoning run lands in a finite bucket of the default preset
        run(true, Outcome.OK, t -> t.onTokenChunk(3000L * 1000 * MS, false, -1), 3000L * 1000 * MS);
        Scrape s = scrape();
        assertThat(s.sum("gen_ai_server_request_duration_seconds_bucket", "le", "3600.0")).isEqualTo(1);
        assertThat(s.sum("gen_ai_server_request_duration_seconds_bucket", "le", "2700.0")).isZero();
    }

    @Test
    void tokenHistogramsAndFinishReasonsCarryTheModel() {
        run(true, Outcome.OK, t -> {
            t.onTokenChunk(10 * MS, false, -1);
            t.onUsage(new Usage(7, 1, -1));
            t.onFinishReason("stop");
        }, 20 * MS);
        Scrape s = scrape();
        assertThat(s.sum("gen_ai_client_token_usage_sum", "model", "m", "token_type", "input")).isEqualTo(7);
        assertThat(s.sum("llm_sidecar_finish_reasons_total", "model", "m", "finish_reason", "stop")).isEqualTo(1);
    }
}
