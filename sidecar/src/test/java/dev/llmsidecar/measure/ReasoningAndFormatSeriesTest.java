package dev.llmsidecar.measure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestTimeline;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

/** Reasoning-aware first-token series and the per-format undecodable counter. */
class ReasoningAndFormatSeriesTest {

    static final long MS = 1_000_000;

    @Test
    void firstReasoningAndFirstAnswerAreRecordedLiveAndUndecodableIsCountedByFormat() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        RequestSeriesRig metrics = new RequestSeriesRig(PrometheusRecorder.only(registry.getPrometheusRegistry()),
                Upstream.NONE);

        LiveRequest live = metrics.started(RequestSeriesRig.labels("m", "", "", "chat", "anthropic_messages"), true);
        RequestTimeline t = new RequestTimeline(0, true, live);
        t.onTokenChunk(100 * MS, true, -1);
        t.onTokenChunk(150 * MS, true, -1);
        Scrape during = new Scrape(registry.scrape());
        // live: the reasoning series has its sample before the request ends; the answer series not yet
        assertThat(during.sum("llm_sidecar_time_to_first_reasoning_token_seconds_sum")).isEqualTo(0.1);
        assertThat(during.sum("llm_sidecar_time_to_first_answer_token_seconds_count")).isZero();
        t.onTokenChunk(400 * MS, false, -1);
        t.onTokenChunk(420 * MS, false, -1);
        t.onUndecodable();
        t.onUndecodable();
        metrics.finished(live, t.finish(500 * MS, Outcome.OK, 200));

        LiveRequest other = metrics.started(RequestSeriesRig.labels("m", "", "", "text_completion", "tgi"), true);
        RequestTimeline u = new RequestTimeline(0, true, other);
        u.onTokenChunk(30 * MS, false, 1);
        u.onUndecodable();
        metrics.finished(other, u.finish(40 * MS, Outcome.OK, 200));

        Scrape s = new Scrape(registry.scrape());
        String[] chat = {"model", "m", "operation", "chat", "streaming", "true"};
        assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_sum", chat)).isEqualTo(0.1);
        assertThat(s.sum("llm_sidecar_time_to_first_reasoning_token_seconds_sum", chat)).isEqualTo(0.1);
        assertThat(s.sum("llm_sidecar_time_to_first_answer_token_seconds_sum", chat)).isEqualTo(0.4);
        assertThat(s.sum("llm_sidecar_time_to_first_answer_token_seconds_count", chat)).isEqualTo(1);
        // answer-only stream: TTFT = first answer, no reasoning sample
        String[] tgi = {"model", "m", "operation", "text_completion", "streaming", "true"};
        assertThat(s.sum("llm_sidecar_time_to_first_reasoning_token_seconds_count", tgi)).isZero();
        assertThat(s.sum("llm_sidecar_time_to_first_answer_token_seconds_sum", tgi)).isEqualTo(0.03);
        assertThat(s.sum("llm_sidecar_undecodable_chunks_total", "format", "anthropic_messages", "operation", "chat"))
                .isEqualTo(2);
        assertThat(s.sum("llm_sidecar_undecodable_chunks_total", "format", "tgi")).isEqualTo(1);
    }
}
