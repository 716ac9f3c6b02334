package dev.llmsidecar.export;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.export.otel.OtelMetrics;
import dev.llmsidecar.export.otel.OtelPipeline;
import dev.llmsidecar.export.otel.RequestTracing;
import dev.llmsidecar.slo.GoodputWindows;
import dev.llmsidecar.slo.SloPolicy;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.LongSupplier;

/**
 * Builds the export side once (Prometheus metrics, OTLP metrics and spans, SLO policy, live windows) and hands it
 * to the proxy and the endpoints.
 */
public final class SidecarTelemetry implements AutoCloseable {

    private final LlmMetrics metrics;
    private final SloPolicy policy;
    private final GoodputWindows goodput;
    private final LiveWindows windows;
    private final RequestReporter reporter;
    private final OtelPipeline otel;
    private final RequestTracing tracing;

    public SidecarTelemetry(MeterRegistry registry, SidecarConfig config, LongSupplier nanoClock) {
        this(registry, config, nanoClock, OtelPipeline.disabled());
    }

    public SidecarTelemetry(MeterRegistry registry, SidecarConfig config, LongSupplier nanoClock, OtelPipeline otel) {
        this.otel = otel;
        this.policy = new SloPolicy(config.slo());
        this.metrics = new LlmMetrics(registry, config.metrics(), policy.thresholdsSeconds());
        this.goodput = new GoodputWindows(nanoClock, config.windows().durations());
        this.windows = new LiveWindows(registry, config.windows(), nanoClock);
        String provider = config.otel().providerName();
        OtelMetrics otelMetrics = otel.enabled()
                ? new OtelMetrics(otel.openTelemetry().getMeter("dev.llmsidecar"), provider,
                        metrics.latencyBoundsSeconds(), metrics.tokenBounds(), metrics::inFlight,
                        metrics::waitingFirstToken)
                : OtelMetrics.OFF;
        this.tracing = RequestTracing.of(otel, provider);
        this.reporter = new RequestReporter(metrics, policy, new SloMetrics(registry, policy.objectives()), goodput,
                windows, otelMetrics);
    }

    public LlmMetrics metrics() {
        return metrics;
    }

    public RequestReporter reporter() {
        return reporter;
    }

    public RequestTracing tracing() {
        return tracing;
    }

    public OtelPipeline otel() {
        return otel;
    }

    public GoodputWindows goodput() {
        return goodput;
    }

    public LiveWindows windows() {
        return windows;
    }

    public SloPolicy policy() {
        return policy;
    }

    /** Flushes and stops the OTLP export (bounded by its timeouts). */
    @Override
    public void close() {
        otel.close();
    }
}
