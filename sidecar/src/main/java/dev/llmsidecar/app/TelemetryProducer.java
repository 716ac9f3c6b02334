package dev.llmsidecar.app;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.live.LiveHistory;
import dev.llmsidecar.measure.InFlight;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.otel.OtelPipeline;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.HashMap;
import java.util.Map;
import org.eclipse.microprofile.config.Config;

/** The single {@link SidecarTelemetry} of the application, built on first use. */
@ApplicationScoped
public class TelemetryProducer {

    /**
     * Micrometer's Prometheus registry, for the client_java registry under it: the contract's series are collectors
     * there, beside the JVM and process series of Quarkus's Micrometer binders (OTLP goes through the OpenTelemetry
     * SDK).
     */
    @Inject
    PrometheusMeterRegistry registry;

    @Inject
    SidecarConfig config;

    @Inject
    Config mpConfig;

    private SidecarTelemetry telemetry;
    private Vertx vertx;
    private long historySampler = -1;

    public synchronized SidecarTelemetry telemetry() {
        if (telemetry == null) {
            telemetry = new SidecarTelemetry(registry.getPrometheusRegistry(), config, System::nanoTime,
                    OtelPipeline.create(otelSettings(mpConfig), registry.getPrometheusRegistry(), OtelPipeline.Histograms.of(
                            config.metrics().otlpHistograms(), config.metrics().nativeMaxBuckets())));
        }
        return telemetry;
    }

    /** What the proxy reports to (the seam between the data path and the telemetry). */
    @Produces
    @Singleton
    TrafficObserver traffic() {
        return telemetry().traffic();
    }

    /**
     * The live page's history from the start, off the event loops (a read merges every model's windows); the same
     * tick brings the waiting-depth histogram up to date for an exporter that reads on its own (OTLP), so an idle
     * sidecar has one timer at this period and none faster.
     */
    void startSampling(@Observes StartupEvent event, Vertx vertx) {
        this.vertx = vertx;
        SidecarTelemetry t = telemetry();
        InFlight inFlight = t.inFlight();
        historySampler = vertx.setPeriodic(1, LiveHistory.STEP.toMillis(), id -> vertx.executeBlocking(() -> {
            inFlight.sampleQueueDepth();
            t.sampleHistory(System.currentTimeMillis());
            return null;
        }));
    }

    /**
     * The otel.* and quarkus.otel.* properties of the application's configuration, as otel.* keys (the SDK
     * normalises dashes to dots, so quarkus.otel.metric.export.interval and otel.metric.export.interval agree).
     * OTEL_* environment variables are read by the SDK itself and win.
     */
    static Map<String, String> otelSettings(Config config) {
        Map<String, String> settings = new HashMap<>();
        for (String name : config.getPropertyNames()) {
            String key = name.startsWith("quarkus.otel.") ? name.substring("quarkus.".length())
                    : name.startsWith("otel.") ? name : null;
            if (key != null) {
                // an otel.* key wins over its quarkus.otel.* twin
                boolean preferred = name.startsWith("otel.");
                config.getOptionalValue(name, String.class).ifPresent(v -> {
                    if (preferred) {
                        settings.put(key, v);
                    } else {
                        settings.putIfAbsent(key, v);
                    }
                });
            }
        }
        return settings;
    }

    // after the proxy closed (ProxyLifecycle.stop, priority 5) and the streams it cut have ended: their records, spans
    // and series are in, and this exports and closes them
    void onStop(@Observes @Priority(10) ShutdownEvent event) {
        if (historySampler >= 0) {
            vertx.cancelTimer(historySampler);
        }
        SidecarTelemetry t;
        synchronized (this) {
            t = telemetry;
        }
        if (t != null) {
            t.close();
        }
    }
}
