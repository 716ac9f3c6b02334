package dev.llmsidecar.export.otel;

import io.prometheus.client.exemplars.DefaultExemplarSampler;
import io.prometheus.client.exemplars.Exemplar;
import io.prometheus.client.exemplars.ExemplarSampler;
import io.prometheus.client.exemplars.tracer.otel.OpenTelemetrySpanContextSupplier;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.util.Optional;

/**
 * Gives the Prometheus registry an exemplar sampler that reads the current OpenTelemetry span: histogram buckets
 * then carry the trace id of a request that landed in them (OpenMetrics format), because the proxy makes each
 * request's span current while it records. Replaces Quarkus's empty sampler (Quarkus wires one only with its own
 * OpenTelemetry extension, which the sidecar does not use).
 */
public class TraceExemplars {

    public static ExemplarSampler sampler() {
        return new BucketsOnly(new DefaultExemplarSampler(new OpenTelemetrySpanContextSupplier()));
    }

    /**
     * Exemplars on histogram buckets only: dashboards link to traces from latency buckets, and an exemplar on every
     * counter increment would cost time on the event loop for nothing. (Micrometer still copies the last bucket
     * exemplar onto each {@code _count} line; {@link dev.llmsidecar.export.MetricsScrape} removes those.)
     */
    private record BucketsOnly(ExemplarSampler delegate) implements ExemplarSampler {
        @Override
        public Exemplar sample(double increment, Exemplar previous) {
            return null;
        }

        @Override
        public Exemplar sample(double value, double bucketFrom, double bucketTo, Exemplar previous) {
            return delegate.sample(value, bucketFrom, bucketTo, previous);
        }
    }

    @Produces
    @Singleton
    @Alternative
    @Priority(1)
    Optional<ExemplarSampler> exemplarSampler() {
        return Optional.of(sampler());
    }
}
