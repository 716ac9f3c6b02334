package dev.llmsidecar.measure;

import dev.llmsidecar.support.ChatHead;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.app.SidecarTelemetry;
import dev.llmsidecar.includeusage.UsageEvent;
import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.TestConfigs;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.LlmRoutes;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.Usage;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Exchanges driven through the seam the proxy reports to, as the proxy drives them, without a socket: what each
 * call becomes in the exported series. The clock is the nanos the calls carry, so every figure is exact.
 */
class TrafficRecorderTest {

    static final long MS = 1_000_000;
    static final LlmOperation CHAT = new LlmRoutes(new JsonFactory()).match("POST", "/v1/chat/completions");

    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    TrafficObserver traffic(Map<String, String> config) {
        return new SidecarTelemetry(registry.getPrometheusRegistry(), TestConfigs.sidecar("http://127.0.0.1:1",
                ProxyFixture.pinned(config, "m1")), System::nanoTime)
                .traffic();
    }


    Scrape scrape() {
        return new Scrape(registry.scrape());
    }

    /** A stream: role chunk at 10 ms, tokens at 200, 220, 240 ms, usage, end at 250 ms; each write 1 ms after. */
    static void stream(ExchangeObserver x, long t0) {
        x.requestInspected("m1", true, null);
        x.requestSent();
        TokenEventSink sink = x.responseStarted(200, true, t0 + 5 * MS);
        sink.onDataChunk(t0 + 10 * MS);
        x.written(t0 + 10 * MS, t0 + 11 * MS);
        for (long at : new long[] {200, 220, 240}) {
            sink.onTokenChunk(t0 + at * MS, false, -1);
            x.written(t0 + at * MS, t0 + (at + 1) * MS);
        }
        sink.onUsage(new Usage(7, 3, -1));
        sink.onFinishReason("stop");
        x.ended(Outcome.OK, 200, t0 + 250 * MS);
    }

    @Test
    void aStreamDrivenThroughTheSeamBecomesItsSeries() {
        TrafficObserver traffic = traffic(Map.of("sidecar.slo.objectives.fast.ttft", "PT0.5S",
                "sidecar.tenants.source", "header"));
        long t0 = 1_000 * MS;
        // a tenant gets a value of its own from its request after its first 2xx
        stream(traffic.exchangeStarted(new ChatHead(Map.of("x-tenant", "acme")), CHAT, t0), t0);
        stream(traffic.exchangeStarted(new ChatHead(Map.of("x-tenant", "acme")), CHAT, t0), t0);

        Scrape s = scrape();
        String[] live = {"model", "m1", "operation", "chat", "streaming", "true"};
        assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count", live)).isEqualTo(2);
        assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_sum", live)).isCloseTo(0.4, within(1e-9));
        assertThat(s.sum("llm_sidecar_time_to_first_response_chunk_seconds_sum", live)).isCloseTo(0.02, within(1e-9));
        String[] end = {"model", "m1", "operation", "chat", "outcome", "ok"};
        // a successful stream ends at its last token chunk (240 ms); TPOT = (240 - 200) / (3 - 1) ms
        assertThat(s.sum("gen_ai_server_request_duration_seconds_sum", end)).isCloseTo(0.48, within(1e-9));
        assertThat(s.sum("gen_ai_server_time_per_output_token_seconds_sum", end)).isCloseTo(0.04, within(1e-9));
        assertThat(s.sum("llm_sidecar_requests_total", "tenant", "other")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_requests_total", "tenant", "acme")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_slo_good_requests_total", "model", "m1")).isEqualTo(2);
        assertThat(s.sum("llm_sidecar_http_requests_total", "route", "llm", "status_class", "2xx")).isEqualTo(2);
        assertThat(s.sum("llm_sidecar_chunk_write_delay_seconds_count")).isEqualTo(8);
        assertThat(s.sum("llm_sidecar_chunk_write_delay_seconds_sum")).isCloseTo(0.008, within(1e-9));
        assertThat(s.sum("llm_sidecar_requests_in_flight")).isZero();
        assertThat(s.sum("llm_sidecar_requests_waiting_first_token")).isZero();
    }

    /**
     * Issue 42: a model name takes a label slot only once the engine answered a request naming it with 2xx (as a tenant
     * does), so names the engine rejects cannot take the slots of real models.
     */
    @Test
    void aModelNameTakesALabelOnlyOnceTheEngineAnsweredIt() {
        TrafficObserver traffic = traffic(Map.of("sidecar.metrics.max-models", "1"));
        for (int i = 0; i < 5; i++) {
            answered(traffic, "typo-" + i, 404);
        }
        answered(traffic, "real", 200); // its first answer ends as other: the slot is taken when it ends
        answered(traffic, "real", 200);
        answered(traffic, "later", 200); // the one slot is taken
        answered(traffic, "later", 200);
        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_requests_total", "model", "other")).isEqualTo(8);
        assertThat(s.sum("llm_sidecar_requests_total", "model", "real")).isEqualTo(1);
        assertThat(s.has("llm_sidecar_requests_total", "model", "later")).isFalse();
        assertThat(s.has("llm_sidecar_requests_total", "model", "typo-0")).isFalse();
    }

    static void answered(TrafficObserver traffic, String model, int status) {
        ExchangeObserver x = traffic.exchangeStarted(new ChatHead(Map.of()), CHAT, 0);
        x.requestInspected(model, false, null);
        x.requestSent();
        x.responseStarted(status, false, 5 * MS);
        x.ended(status == 200 ? Outcome.OK : Outcome.UPSTREAM_ERROR, status, 30 * MS);
    }

    @Test
    void inFlightAndWaitingFollowTheCallsOfAnOpenExchange() {
        TrafficObserver traffic = traffic(Map.of());
        ExchangeObserver x = traffic.exchangeStarted(new ChatHead(Map.of()), CHAT, 0);
        x.requestInspected("m1", true, null);
        assertThat(scrape().sum("llm_sidecar_requests_in_flight")).as("not sent yet").isZero();
        x.requestSent();
        assertThat(scrape().sum("llm_sidecar_requests_in_flight")).isEqualTo(1);
        assertThat(scrape().sum("llm_sidecar_requests_waiting_first_token")).isEqualTo(1);
        TokenEventSink sink = x.responseStarted(200, true, 5 * MS);
        sink.onTokenChunk(90 * MS, false, -1);
        assertThat(scrape().sum("llm_sidecar_requests_waiting_first_token")).isZero();
        // the client went away mid-stream
        x.ended(Outcome.CLIENT_CANCELLED, 200, 120 * MS);
        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_requests_in_flight")).isZero();
        assertThat(s.sum("llm_sidecar_requests_total", "outcome", "client_cancelled")).isEqualTo(1);
    }

    @Test
    void aRequestThatFailedBeforeItsResponseIsStillOneRequest() {
        TrafficObserver traffic = traffic(Map.of());
        ExchangeObserver x = traffic.exchangeStarted(new ChatHead(Map.of()), CHAT, 0);
        x.requestInspected("m1", false, null);
        x.requestSent();
        x.ended(Outcome.UPSTREAM_ERROR, 502, 30 * MS);
        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_requests_total", "model", "m1", "outcome", "upstream_error")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_http_requests_total", "route", "llm", "status_class", "5xx")).isEqualTo(1);
        assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count", "model", "m1")).isZero();
    }

    @Test
    void otherPathsAndProxyEventsAreOnlyCounted() {
        TrafficObserver traffic = traffic(Map.of());
        ExchangeObserver other = traffic.exchangeStarted(new ChatHead(Map.of()), null, 0);
        other.written(0, 2 * MS);
        other.ended(Outcome.OK, 404, 3 * MS);
        traffic.refused(true, 503);
        traffic.count(ProxyEvent.CONNECTION_ERROR_CLIENT);
        traffic.count(UsageEvent.RETRY_COMPRESSED_AFTER_INJECTION);
        traffic.count(UsageEvent.RETRY_INJECTION_REJECTED);
        traffic.count(UsageEvent.USAGE_CHUNKS_REMOVED, 1);
        traffic.count(UsageEvent.USAGE_MEMBERS_REMOVED, 2);
        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_http_requests_total", "route", "other", "status_class", "4xx")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_http_requests_total", "route", "llm", "status_class", "5xx")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_requests_total")).as("no LLM request was measured").isZero();
        assertThat(s.sum("llm_sidecar_connection_errors_total", "peer", "client")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_upstream_retries_total", "reason", "compressed_after_injection")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_upstream_retries_total", "reason", "injection_rejected")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_usage_chunks_stripped_total")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_usage_members_removed_total")).isEqualTo(2);
        assertThat(s.sum("llm_sidecar_chunk_write_delay_seconds_count")).isEqualTo(1);
        assertThat(List.of(s.sum("llm_sidecar_requests_in_flight"))).containsExactly(0.0);
    }
}
