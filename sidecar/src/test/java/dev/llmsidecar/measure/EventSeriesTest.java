package dev.llmsidecar.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmsidecar.app.FeatureEvents;
import dev.llmsidecar.app.SidecarTelemetry;
import dev.llmsidecar.includeusage.UsageEvent;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.observe.TrafficEvent;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.support.TestConfigs;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every event counted through the seam, the proxy's ({@link ProxyEvent}) and include_usage's ({@link UsageEvent}),
 * lands in the series and label value docs/metrics.md gives it, written out here by hand: the bindings
 * (measure/EventSeries, app/FeatureEvents) are checked against the contract's text, not against themselves. Driven
 * through the sidecar's own wiring ({@link SidecarTelemetry}), so an enum the app forgot to register fails here too.
 */
class EventSeriesTest {

    /** Each event's Prometheus series and label pair (none for a series without a label), from docs/metrics.md. */
    static final Map<TrafficEvent, String[]> CONTRACT = new LinkedHashMap<>();

    static {
        contract(ProxyEvent.BODY_NOT_INSPECTED_NOT_JSON, "llm_sidecar_body_inspection_skipped_total", "reason",
                "not_json");
        contract(ProxyEvent.BODY_NOT_INSPECTED_TOO_LARGE, "llm_sidecar_body_inspection_skipped_total", "reason",
                "too_large");
        contract(ProxyEvent.BODY_NOT_INSPECTED_BUDGET, "llm_sidecar_body_inspection_skipped_total", "reason", "budget");
        contract(ProxyEvent.RESPONSE_REFRAMED, "llm_sidecar_usage_reframed_total");
        contract(ProxyEvent.RETRY_CLOSED_BEFORE_RESPONSE, "llm_sidecar_upstream_retries_total", "reason",
                "closed_before_response");
        contract(ProxyEvent.IDLE_CONNECTION_RETIRED, "llm_sidecar_upstream_idle_connections_retired_total");
        contract(ProxyEvent.BODY_TOO_LARGE_DECLARED, "llm_sidecar_request_body_too_large_total", "when", "declared");
        contract(ProxyEvent.BODY_TOO_LARGE_STREAMED, "llm_sidecar_request_body_too_large_total", "when", "streamed");
        contract(ProxyEvent.CONNECTION_ERROR_CLIENT, "llm_sidecar_connection_errors_total", "peer", "client");
        contract(ProxyEvent.CONNECTION_ERROR_UPSTREAM, "llm_sidecar_connection_errors_total", "peer", "upstream");
        contract(ProxyEvent.NOT_DECODED_CONTENT_ENCODING, "llm_sidecar_responses_not_decoded_total", "reason",
                "content_encoding");
        contract(ProxyEvent.RELAY_FALLBACK_DISABLED, "llm_sidecar_relay_fallbacks_total", "reason", "disabled");
        contract(ProxyEvent.RELAY_FALLBACK_HTTP2_CLIENT, "llm_sidecar_relay_fallbacks_total", "reason", "http2_client");
        contract(ProxyEvent.RELAY_FALLBACK_HTTP10_CLIENT, "llm_sidecar_relay_fallbacks_total", "reason",
                "http10_client");
        contract(ProxyEvent.RELAY_FALLBACK_NOT_CHUNKED, "llm_sidecar_relay_fallbacks_total", "reason", "not_chunked");
        contract(ProxyEvent.RELAY_FALLBACK_REFRAMED, "llm_sidecar_relay_fallbacks_total", "reason", "reframed");
        contract(ProxyEvent.RELAY_REFRAMED, "llm_sidecar_relay_reframes_total");
        contract(ProxyEvent.REQUEST_SHED, "llm_sidecar_requests_shed_total");
        contract(ProxyEvent.CLIENT_TIMEOUT_REQUEST_HEAD, "llm_sidecar_client_timeouts_total", "when", "request_head");
        contract(ProxyEvent.CLIENT_TIMEOUT_REQUEST_BODY, "llm_sidecar_client_timeouts_total", "when", "request_body");
        contract(ProxyEvent.CLIENT_TIMEOUT_SEND, "llm_sidecar_client_timeouts_total", "when", "response");
        contract(ProxyEvent.RELAY_FRAMING_ANOMALY, "llm_sidecar_upstream_framing_anomalies_total");

        contract(UsageEvent.USAGE_INJECTED, "llm_sidecar_usage_injected_total");
        String skipped = "llm_sidecar_usage_injection_skipped_total";
        contract(UsageEvent.USAGE_SKIPPED_CLIENT_DECLINED, skipped, "reason", "client_declined");
        contract(UsageEvent.USAGE_SKIPPED_STREAM_OPTIONS, skipped, "reason", "stream_options");
        contract(UsageEvent.USAGE_SKIPPED_HTTP10_CLIENT, skipped, "reason", "http10_client");
        contract(UsageEvent.USAGE_SKIPPED_LEARNING, skipped, "reason", "learning");
        contract(UsageEvent.USAGE_SKIPPED_ENGINE_REPORTS_USAGE, skipped, "reason", "engine_reports_usage");
        contract(UsageEvent.USAGE_SKIPPED_LAYOUT, skipped, "reason", "layout");
        contract(UsageEvent.USAGE_SKIPPED_CONTENT_LENGTH, skipped, "reason", "content_length");
        contract(UsageEvent.USAGE_SKIPPED_COMPRESSION, skipped, "reason", "compression");
        contract(UsageEvent.USAGE_SKIPPED_ENGINE_REJECTS, skipped, "reason", "engine_rejects");
        contract(UsageEvent.USAGE_NOT_REMOVED_LAYOUT, "llm_sidecar_usage_not_removed_total", "reason", "layout");
        contract(UsageEvent.USAGE_NOT_REMOVED_MEMBER, "llm_sidecar_usage_not_removed_total", "reason", "member");
        contract(UsageEvent.USAGE_CHUNKS_REMOVED, "llm_sidecar_usage_chunks_stripped_total");
        contract(UsageEvent.USAGE_MEMBERS_REMOVED, "llm_sidecar_usage_members_removed_total");
        contract(UsageEvent.RETRY_COMPRESSED_AFTER_INJECTION, "llm_sidecar_upstream_retries_total", "reason",
                "compressed_after_injection");
        contract(UsageEvent.RETRY_INJECTION_REJECTED, "llm_sidecar_upstream_retries_total", "reason",
                "injection_rejected");
    }

    static void contract(TrafficEvent event, String... seriesAndLabel) {
        CONTRACT.put(event, seriesAndLabel);
    }

    final PrometheusRegistry registry = new PrometheusRegistry();

    TrafficObserver traffic() {
        return new SidecarTelemetry(registry, TestConfigs.sidecar("http://127.0.0.1:1", Map.of()), System::nanoTime)
                .traffic();
    }

    /** The one sample of the event's series with exactly its label, or null. */
    static Scrape.Sample sample(Scrape s, TrafficEvent event) {
        String[] expected = CONTRACT.get(event);
        Map<String, String> labels = expected.length == 1 ? Map.of() : Map.of(expected[1], expected[2]);
        return s.samples(expected[0]).stream().filter(x -> x.labels().equals(labels)).findFirst().orElse(null);
    }

    @Test
    void theContractHereNamesEveryEvent() {
        Set<TrafficEvent> all = new HashSet<>(List.of(ProxyEvent.values()));
        all.addAll(List.of(UsageEvent.values()));
        assertThat(CONTRACT.keySet()).containsExactlyInAnyOrderElementsOf(all);
    }

    @Test
    void everyEventIsExportedAtZeroFromTheStartAndCountedUnderItsSeriesAndLabel() {
        TrafficObserver traffic = traffic();
        Scrape before = Scrape.of(registry);
        for (TrafficEvent e : CONTRACT.keySet()) {
            Scrape.Sample s = sample(before, e);
            assertThat(s).as("%s exported at 0 before it happened, as %s", e, List.of(CONTRACT.get(e))).isNotNull();
            assertThat(s.value()).as(e.toString()).isZero();
        }
        // each event its own number of times: an event bound to another's series or label shows as a wrong count
        List<TrafficEvent> events = new ArrayList<>(CONTRACT.keySet());
        for (int i = 0; i < events.size(); i++) {
            if (i % 2 == 0) {
                traffic.count(events.get(i), i + 1);
            } else {
                for (int k = 0; k <= i; k++) {
                    traffic.count(events.get(i));
                }
            }
        }
        Scrape after = Scrape.of(registry);
        for (int i = 0; i < events.size(); i++) {
            TrafficEvent e = events.get(i);
            assertThat(sample(after, e).value()).as("%s counted %d times, as %s", e, i + 1, List.of(CONTRACT.get(e)))
                    .isEqualTo(i + 1);
        }
    }

    enum Unregistered implements TrafficEvent { SOMETHING }

    @Test
    void anEnumIsRegisteredOnceAndAnUnregisteredOneIsNotCountedSilently() {
        ProxyCounters counters = new ProxyCounters(PrometheusRecorder.only(registry));
        FeatureEvents.register(counters);
        assertThatThrownBy(() -> FeatureEvents.register(counters)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> counters.count(Unregistered.SOMETHING, 1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Unregistered");
    }

    /** Counting is an array read by ordinal and an add: nothing allocated, the proxy's event or a feature's. */
    @Test
    void countingAnEventAllocatesNothing() {
        TrafficObserver traffic = traffic();
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        List<Long> rounds = new ArrayList<>();
        int quiet = 0;
        for (int round = 0; round < 30 && quiet < 3; round++) { // the first rounds may be interpreted, or compiling
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 100_000; i++) {
                traffic.count(ProxyEvent.RELAY_REFRAMED);
                traffic.count(UsageEvent.USAGE_CHUNKS_REMOVED, 2);
            }
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            rounds.add(allocated);
            quiet = allocated == 0 ? quiet + 1 : 0;
        }
        assertThat(quiet).as("rounds in a row that allocated nothing, of bytes per round %s", rounds).isEqualTo(3);
    }
}
