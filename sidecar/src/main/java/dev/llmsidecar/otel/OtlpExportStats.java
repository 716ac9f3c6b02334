package dev.llmsidecar.otel;

import static dev.llmsidecar.metrics.Label.REASON;

import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.IntSupplier;

/**
 * What happened to the telemetry the sidecar handed to OTLP, on the Prometheus side: a collector that is down or
 * slow shows up here (drops rising) while the traffic itself is untouched.
 */
public final class OtlpExportStats {

    private final Bound spansExported;
    private final Bound spansDroppedQueueFull;
    private final Bound spansDroppedExportFailed;
    private final Bound pointsExported;
    private final Bound pointsDropped;
    private final Recorders recorders;

    /** Prometheus only, by declaration: telemetry about losing telemetry is read where it is not lost. */
    public OtlpExportStats(PrometheusRegistry registry) {
        this.recorders = PrometheusRecorder.only(registry);
        spansExported = recorders.bound(Contract.OTLP_SPANS_EXPORTED);
        spansDroppedQueueFull = recorders.bound(Contract.OTLP_SPANS_DROPPED, LabelValues.of(REASON, "queue_full"));
        spansDroppedExportFailed = recorders.bound(Contract.OTLP_SPANS_DROPPED,
                LabelValues.of(REASON, "export_failed"));
        pointsExported = recorders.bound(Contract.OTLP_POINTS_EXPORTED);
        pointsDropped = recorders.bound(Contract.OTLP_POINTS_DROPPED);
        for (Bound counter : new Bound[] {spansExported, spansDroppedQueueFull, spansDroppedExportFailed,
            pointsExported, pointsDropped}) {
            counter.record(0);
        }
    }

    void queueGauges(IntSupplier size, int capacity) {
        recorders.observe(Contract.OTLP_SPAN_QUEUE, size::getAsInt);
        recorders.observe(Contract.OTLP_SPAN_QUEUE_CAPACITY, () -> capacity);
    }

    void spansExported(int n) {
        spansExported.record(n);
    }

    void spansDroppedQueueFull() {
        spansDroppedQueueFull.record(1);
    }

    void spansDroppedExportFailed(int n) {
        spansDroppedExportFailed.record(n);
    }

    void pointsExported(long n) {
        pointsExported.record(n);
    }

    void pointsDropped(long n) {
        pointsDropped.record(n);
    }
}
