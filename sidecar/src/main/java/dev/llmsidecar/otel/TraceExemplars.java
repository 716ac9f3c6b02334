package dev.llmsidecar.otel;

import dev.llmsidecar.metrics.ExemplarSource;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.prometheus.metrics.model.snapshots.Exemplar;
import io.prometheus.metrics.model.snapshots.Labels;

/**
 * Exemplars from the current OpenTelemetry span: histogram buckets then carry the trace id of a request that landed in
 * them (OpenMetrics and protobuf), because the proxy makes each request's span current while it records. Only
 * histograms take them: dashboards link to traces from latency buckets, and an exemplar on every counter increment
 * would cost time on the event loop for nothing. A span whose trace is not sampled gives none.
 */
public final class TraceExemplars implements ExemplarSource {

    /** The one source of a sidecar with tracing on (stateless: it reads the calling thread's context). */
    public static final TraceExemplars CURRENT_SPAN = new TraceExemplars();

    private TraceExemplars() {
    }

    /** Exemplars when tracing is on, none when it is off. */
    public static ExemplarSource of(OtelPipeline pipeline) {
        return pipeline.enabled() ? CURRENT_SPAN : ExemplarSource.NONE;
    }

    @Override
    public boolean sampled() {
        return Span.current().getSpanContext().isSampled();
    }

    @Override
    public Labels labels() {
        SpanContext c = Span.current().getSpanContext();
        return c.isSampled() ? Labels.of(Exemplar.TRACE_ID, c.getTraceId(), Exemplar.SPAN_ID, c.getSpanId())
                : Labels.EMPTY;
    }
}
