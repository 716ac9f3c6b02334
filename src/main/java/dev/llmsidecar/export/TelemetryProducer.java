package dev.llmsidecar.export;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.export.otel.OtelPipeline;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.HashMap;
import java.util.Map;
import org.eclipse.microprofile.config.Config;

/** The single {@link SidecarTelemetry} of the application, built on first use. */
@ApplicationScoped
public class TelemetryProducer {

    /**
     * The Prometheus registry itself, not Quarkus's composite: a composite timer walks its children (allocating an
     * iterator) on every record, and the sidecar records on every forwarded chunk. Prometheus is the only
     * Micrometer registry the sidecar exports to (OTLP goes through the OpenTelemetry SDK).
     */
    @Inject
    PrometheusMeterRegistry registry;

    @Inject
    SidecarConfig config;

    @Inject
    Config mpConfig;

    private SidecarTelemetry telemetry;

    public synchronized SidecarTelemetry telemetry() {
        if (telemetry == null) {
            telemetry = new SidecarTelemetry(registry, config, System::nanoTime,
                    OtelPipeline.create(otelSettings(mpConfig), registry));
        }
        return telemetry;
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

    // after the proxy stopped taking requests, so the last spans are exported
    void onStop(@Observes @Priority(10) ShutdownEvent event) {
        SidecarTelemetry t;
        synchronized (this) {
            t = telemetry;
        }
        if (t != null) {
            t.close();
        }
    }
}
