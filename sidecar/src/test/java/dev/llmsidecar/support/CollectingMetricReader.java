package dev.llmsidecar.support;

import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import java.util.Collection;

/** A metric reader that collects on demand, cumulative, as the OTLP exporter's periodic reader does. */
public final class CollectingMetricReader implements MetricReader {

    private CollectionRegistration registration;

    @Override
    public void register(CollectionRegistration registration) {
        this.registration = registration;
    }

    public Collection<MetricData> collect() {
        return registration.collectAllMetrics();
    }

    @Override
    public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
        return AggregationTemporality.CUMULATIVE;
    }

    @Override
    public CompletableResultCode forceFlush() {
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
        return CompletableResultCode.ofSuccess();
    }
}
