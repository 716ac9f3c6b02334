package dev.llmsidecar.otel;

import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.MemoryMode;
import io.opentelemetry.sdk.metrics.Aggregation;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import java.util.Collection;

/** Passes metric exports through and counts the data points each export delivered or lost. */
final class CountingMetricExporter implements MetricExporter {

    private final MetricExporter delegate;
    private final OtlpExportStats stats;

    CountingMetricExporter(MetricExporter delegate, OtlpExportStats stats) {
        this.delegate = delegate;
        this.stats = stats;
    }

    @Override
    public CompletableResultCode export(Collection<MetricData> metrics) {
        long points = 0;
        for (MetricData m : metrics) {
            points += m.getData().getPoints().size();
        }
        long n = points;
        CompletableResultCode result;
        try {
            result = delegate.export(metrics);
        } catch (RuntimeException e) {
            stats.pointsDropped(n);
            return CompletableResultCode.ofFailure();
        }
        // the periodic reader gives up on a stalled export after its timeout; count that as lost as well
        result.whenComplete(() -> {
            if (result.isSuccess()) {
                stats.pointsExported(n);
            } else {
                stats.pointsDropped(n);
            }
        });
        return result;
    }

    @Override
    public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
        return delegate.getAggregationTemporality(instrumentType);
    }

    @Override
    public Aggregation getDefaultAggregation(InstrumentType instrumentType) {
        return delegate.getDefaultAggregation(instrumentType);
    }

    @Override
    public MemoryMode getMemoryMode() {
        return delegate.getMemoryMode();
    }

    @Override
    public CompletableResultCode flush() {
        return delegate.flush();
    }

    @Override
    public CompletableResultCode shutdown() {
        return delegate.shutdown();
    }
}
