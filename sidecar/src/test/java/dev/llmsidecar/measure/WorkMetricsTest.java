package dev.llmsidecar.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.slo.SloVerdict;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.support.TestConfigs;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.wire.Usage;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Which output tokens are useful and which wasted, and what they cost, on a known schedule (plain Java). */
class WorkMetricsTest {

    static final long MS = 1_000_000;
    static final RequestLabels M = RequestSeriesRig.labels("m", "", "");
    static final SloVerdict GOOD = new SloVerdict(true, List.of());
    static final SloVerdict MISSED = new SloVerdict(false, List.of());
    static final SloVerdict NO_OBJECTIVE = new SloVerdict(false, List.of(), SloVerdict.NO_OBJECTIVE);
    static final SloVerdict CANCELLED = new SloVerdict(false, List.of(), SloVerdict.CLIENT_CANCELLED);

    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    // at a slice boundary of the 5-minute window (slices of 50 s)
    final AtomicLong clock = new AtomicLong(1000 * 50_000 * MS);

    WorkMetrics work(Map<String, String> config) {
        return new WorkMetrics(PrometheusRecorder.only(registry.getPrometheusRegistry()),
                TestConfigs.sidecar("http://127.0.0.1:1", config).cost(), clock::get);
    }

    /** A stream with {@code input} prompt tokens and {@code output} output tokens, ending as {@code outcome}. */
    static RequestResult request(long input, long output, Outcome outcome) {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        t.onTokenChunk(10 * MS, false, -1);
        t.onUsage(new Usage(input, output, -1));
        return t.finish(100 * MS, outcome, outcome == Outcome.UPSTREAM_ERROR ? 500 : 200);
    }

    Scrape scrape() {
        return new Scrape(registry.scrape());
    }

    @Test
    void everyGeneratedTokenIsUsefulOrWastedForOneReason() {
        WorkMetrics w = work(Map.of());
        w.record(M, request(10, 100, Outcome.OK), GOOD);
        w.record(M, request(10, 40, Outcome.OK), NO_OBJECTIVE); // completed, nothing to miss
        w.record(M, request(10, 30, Outcome.OK), MISSED);
        w.record(M, request(10, 20, Outcome.CLIENT_CANCELLED), CANCELLED);
        w.record(M, request(10, 7, Outcome.UPSTREAM_BROKEN), MISSED);
        w.record(M, request(10, 0, Outcome.UPSTREAM_ERROR), MISSED); // nothing generated: nothing wasted
        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_useful_output_tokens_total")).isEqualTo(140);
        assertThat(s.sum("llm_sidecar_wasted_output_tokens_total", "reason", "slo_missed")).isEqualTo(30);
        assertThat(s.sum("llm_sidecar_wasted_output_tokens_total", "reason", "client_cancelled")).isEqualTo(20);
        assertThat(s.sum("llm_sidecar_wasted_output_tokens_total", "reason", "failed")).isEqualTo(7);
        // token goodput ratio = useful / all generated
        assertThat(140.0 / (140 + 30 + 20 + 7)).isCloseTo(0.7107, within(1e-4));
        assertThat(s.text()).as("no price: no cost series").doesNotContain("llm_sidecar_cost");
    }

    @Test
    void perTokenPricesChargeEveryFinishedRequest() {
        WorkMetrics w = work(Map.of("sidecar.cost.input-price-per-million", "0.5",
                "sidecar.cost.output-price-per-million", "2.0"));
        w.record(M, request(1000, 500, Outcome.OK), GOOD); // 0.0005 + 0.001
        w.record(M, request(2000, 250, Outcome.CLIENT_CANCELLED), CANCELLED); // 0.001 + 0.0005: paid, wasted
        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_cost_spend_total")).isCloseTo(0.003, within(1e-12));
        // 0.003 over 750 output tokens; over the 500 useful ones
        assertThat(s.sum("llm_sidecar_cost_per_million_output_tokens")).isCloseTo(4.0, within(1e-9));
        assertThat(s.sum("llm_sidecar_cost_per_million_useful_output_tokens")).isCloseTo(6.0, within(1e-9));
        assertThat(s.text()).doesNotContain("llm_sidecar_cost_gpu_spend");
        clock.addAndGet(Duration.ofMinutes(6).toNanos());
        assertThat(scrape().sum("llm_sidecar_cost_per_million_output_tokens")).as("window passed").isNaN();
    }

    /**
     * Cached input and reasoning output tokens at their own prices: where prefix caching is heavy the input is mostly
     * cheap, and a reasoning model's thinking may cost what its answer does or not.
     */
    @Test
    void cachedInputAndReasoningOutputTokensHaveTheirOwnPrices() {
        WorkMetrics w = work(Map.of("sidecar.cost.input-price-per-million", "1.0",
                "sidecar.cost.cached-input-price-per-million", "0.1",
                "sidecar.cost.output-price-per-million", "4.0",
                "sidecar.cost.reasoning-output-price-per-million", "2.0"));
        // 10,000 prompt tokens of which 9,000 cached; 1,000 output tokens of which 600 reasoning
        w.record(M, request(10_000, 9_000, 1_000, 600, Outcome.OK), GOOD);
        double expected = (1_000 * 1.0 + 9_000 * 0.1 + 400 * 4.0 + 600 * 2.0) / 1e6; // 0.0047
        assertThat(scrape().sum("llm_sidecar_cost_spend_total")).isCloseTo(expected, within(1e-12));
        // what the engine does not report is priced as the plain kind
        w.record(M, request(1_000, 500, Outcome.OK), GOOD);
        assertThat(scrape().sum("llm_sidecar_cost_spend_total")).isCloseTo(expected + (1_000 * 1.0 + 500 * 4.0) / 1e6,
                within(1e-12));
        // cost per million good tokens: 0.0077 over 1,500 useful output tokens
        assertThat(scrape().sum("llm_sidecar_cost_per_million_useful_output_tokens")).isCloseTo(
                (expected + 0.003) / 1_500 * 1e6, within(1e-9));
    }

    @Test
    void withoutTheirOwnPricesCachedAndReasoningTokensCostThePlainPrices() {
        WorkMetrics w = work(Map.of("sidecar.cost.input-price-per-million", "1.0",
                "sidecar.cost.output-price-per-million", "4.0"));
        w.record(M, request(10_000, 9_000, 1_000, 600, Outcome.OK), GOOD);
        assertThat(scrape().sum("llm_sidecar_cost_spend_total")).isCloseTo((10_000 * 1.0 + 1_000 * 4.0) / 1e6,
                within(1e-12));
    }

    /** The same, with cached prompt tokens and reasoning output tokens reported. */
    static RequestResult request(long input, long cached, long output, long reasoning, Outcome outcome) {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        t.onTokenChunk(10 * MS, false, -1);
        t.onUsage(new Usage(input, output, cached, reasoning));
        return t.finish(100 * MS, outcome, 200);
    }

    @Test
    void aGpuHourPriceAccruesWithTimeAndIsSharedByTheTokensOfTheWindow() {
        WorkMetrics w = work(Map.of("sidecar.cost.gpu-hour-price", "2.5", "sidecar.cost.gpus", "4"));
        assertThat(scrape().sum("llm_sidecar_cost_per_million_output_tokens")).as("no tokens yet").isNaN();
        clock.addAndGet(Duration.ofMinutes(30).toNanos());
        w.record(M, request(100, 400_000, Outcome.OK), GOOD);
        w.record(M, request(100, 100_000, Outcome.OK), MISSED);
        Scrape s = scrape();
        // 2.5 x 4 GPUs x 0.5 h
        assertThat(s.sum("llm_sidecar_cost_gpu_spend_total")).isCloseTo(5.0, within(1e-9));
        // the window (at a slice boundary: 5 of its 6 slices, 250 s) cost 2.5 x 4 x 250 / 3600
        double windowCost = 2.5 * 4 * 250 / 3600;
        assertThat(s.sum("llm_sidecar_cost_per_million_output_tokens")).isCloseTo(windowCost / 0.5, within(1e-9));
        assertThat(s.sum("llm_sidecar_cost_per_million_useful_output_tokens")).isCloseTo(windowCost / 0.4,
                within(1e-9));
        assertThat(s.text()).doesNotContain("llm_sidecar_cost_spend_total");
    }

    @Test
    void bothKindsOfPriceAtOnceIsAClearError() {
        assertThatThrownBy(() -> work(Map.of("sidecar.cost.gpu-hour-price", "2", "sidecar.cost.output-price-per-million",
                "1"))).hasMessageContaining("not both");
        assertThatThrownBy(() -> work(Map.of("sidecar.cost.gpu-hour-price", "-1"))).hasMessageContaining("negative");
    }
}
