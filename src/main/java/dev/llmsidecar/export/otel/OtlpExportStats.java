package dev.llmsidecar.export.otel;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.IntSupplier;
import io.micrometer.core.instrument.Gauge;

/**
 * What happened to the telemetry the sidecar handed to OTLP, on the Prometheus side: a collector that is down or
 * slow shows up here (drops rising) while the traffic itself is untouched.
 */
public final class OtlpExportStats {

    private final Counter spansExported;
    private final Counter spansDroppedQueueFull;
    private final Counter spansDroppedExportFailed;
    private final Counter pointsExported;
    private final Counter pointsDropped;
    private final MeterRegistry registry;

    public OtlpExportStats(MeterRegistry registry) {
        this.registry = registry;
        spansExported = Counter.builder("llm_sidecar.otlp.spans_exported")
                .description("Spans the OTLP endpoint accepted").register(registry);
        spansDroppedQueueFull = dropped("queue_full");
        spansDroppedExportFailed = dropped("export_failed");
        pointsExported = Counter.builder("llm_sidecar.otlp.metric_points_exported")
                .description("Metric data points the OTLP endpoint accepted").register(registry);
        pointsDropped = Counter.builder("llm_sidecar.otlp.metric_points_dropped")
                .description("Metric data points lost because an OTLP export failed or timed out (the next export "
                        + "carries cumulative values again)")
                .register(registry);
    }

    private Counter dropped(String reason) {
        return Counter.builder("llm_sidecar.otlp.spans_dropped").tag("reason", reason)
                .description("Spans not exported: queue_full (the bounded export queue was full) or export_failed "
                        + "(the endpoint refused, failed or timed out)")
                .register(registry);
    }

    void queueGauges(IntSupplier size, int capacity) {
        Gauge.builder("llm_sidecar.otlp.span_queue_size", size::getAsInt)
                .description("Ended spans accepted for export and not yet exported or dropped (queued or in the batch being sent)").register(registry);
        Gauge.builder("llm_sidecar.otlp.span_queue_capacity", () -> capacity)
                .description("Bound of the span export queue (otel.bsp.max.queue.size)").register(registry);
    }

    void spansExported(int n) {
        spansExported.increment(n);
    }

    void spansDroppedQueueFull() {
        spansDroppedQueueFull.increment();
    }

    void spansDroppedExportFailed(int n) {
        spansDroppedExportFailed.increment(n);
    }

    void pointsExported(long n) {
        pointsExported.increment(n);
    }

    void pointsDropped(long n) {
        pointsDropped.increment(n);
    }
}
