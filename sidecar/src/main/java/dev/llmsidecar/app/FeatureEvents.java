package dev.llmsidecar.app;

import static dev.llmsidecar.metrics.Label.REASON;

import dev.llmsidecar.includeusage.UsageEvent;
import dev.llmsidecar.measure.EventSeries;
import dev.llmsidecar.measure.ProxyCounters;
import dev.llmsidecar.metrics.Contract;

/**
 * The features' own events, each enum registered with the counters of the seam and bound to its series here, where
 * the app is wired: a feature names no series and knows nothing of the metrics side, and the metrics side names no
 * feature (ArchitectureTest). Each binding is a switch without a default branch, so a constant without its series
 * does not compile.
 */
public final class FeatureEvents {

    private FeatureEvents() {
    }

    /** Registers every feature's events (each exported at 0 from then on). */
    public static void register(ProxyCounters counters) {
        counters.register(UsageEvent.class, FeatureEvents::includeUsage);
    }

    /** include_usage's events (docs/metrics.md#include_usage-injection). */
    static EventSeries includeUsage(UsageEvent event) {
        return switch (event) {
            case USAGE_INJECTED -> EventSeries.of(Contract.USAGE_INJECTED);
            case USAGE_SKIPPED_CLIENT_DECLINED -> EventSeries.of(Contract.USAGE_SKIPPED, REASON, "client_declined");
            case USAGE_SKIPPED_STREAM_OPTIONS -> EventSeries.of(Contract.USAGE_SKIPPED, REASON, "stream_options");
            case USAGE_SKIPPED_HTTP10_CLIENT -> EventSeries.of(Contract.USAGE_SKIPPED, REASON, "http10_client");
            case USAGE_SKIPPED_LEARNING -> EventSeries.of(Contract.USAGE_SKIPPED, REASON, "learning");
            case USAGE_SKIPPED_ENGINE_REPORTS_USAGE ->
                    EventSeries.of(Contract.USAGE_SKIPPED, REASON, "engine_reports_usage");
            case USAGE_SKIPPED_LAYOUT -> EventSeries.of(Contract.USAGE_SKIPPED, REASON, "layout");
            case USAGE_SKIPPED_CONTENT_LENGTH -> EventSeries.of(Contract.USAGE_SKIPPED, REASON, "content_length");
            case USAGE_SKIPPED_COMPRESSION -> EventSeries.of(Contract.USAGE_SKIPPED, REASON, "compression");
            case USAGE_SKIPPED_ENGINE_REJECTS -> EventSeries.of(Contract.USAGE_SKIPPED, REASON, "engine_rejects");
            case USAGE_NOT_REMOVED_LAYOUT -> EventSeries.of(Contract.USAGE_NOT_REMOVED, REASON, "layout");
            case USAGE_NOT_REMOVED_MEMBER -> EventSeries.of(Contract.USAGE_NOT_REMOVED, REASON, "member");
            case USAGE_CHUNKS_REMOVED -> EventSeries.of(Contract.USAGE_CHUNKS_STRIPPED);
            case USAGE_MEMBERS_REMOVED -> EventSeries.of(Contract.USAGE_MEMBERS_REMOVED);
            case RETRY_COMPRESSED_AFTER_INJECTION ->
                    EventSeries.of(Contract.UPSTREAM_RETRIES, REASON, "compressed_after_injection");
            case RETRY_INJECTION_REJECTED -> EventSeries.of(Contract.UPSTREAM_RETRIES, REASON, "injection_rejected");
        };
    }
}
