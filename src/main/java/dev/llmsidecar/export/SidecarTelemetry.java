package dev.llmsidecar.export;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.slo.GoodputWindows;
import dev.llmsidecar.slo.SloPolicy;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.LongSupplier;

/** Builds the export side once (metrics, SLO policy, live windows) and hands it to the proxy and the endpoints. */
public final class SidecarTelemetry {

    private final LlmMetrics metrics;
    private final SloPolicy policy;
    private final GoodputWindows goodput;
    private final LiveWindows windows;
    private final RequestReporter reporter;

    public SidecarTelemetry(MeterRegistry registry, SidecarConfig config, LongSupplier nanoClock) {
        this.policy = new SloPolicy(config.slo());
        this.metrics = new LlmMetrics(registry, config.metrics(), policy.thresholdsSeconds());
        this.goodput = new GoodputWindows(nanoClock, config.windows().durations());
        this.windows = new LiveWindows(registry, config.windows(), nanoClock);
        this.reporter = new RequestReporter(metrics, policy, new SloMetrics(registry, policy.objectives()), goodput,
                windows);
    }

    public LlmMetrics metrics() {
        return metrics;
    }

    public RequestReporter reporter() {
        return reporter;
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
}
