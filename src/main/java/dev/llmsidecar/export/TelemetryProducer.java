package dev.llmsidecar.export;

import dev.llmsidecar.config.SidecarConfig;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/** The single {@link SidecarTelemetry} of the application, built on first use. */
@ApplicationScoped
public class TelemetryProducer {

    @Inject
    MeterRegistry registry;

    @Inject
    SidecarConfig config;

    private SidecarTelemetry telemetry;

    public synchronized SidecarTelemetry telemetry() {
        if (telemetry == null) {
            telemetry = new SidecarTelemetry(registry, config, System::nanoTime);
        }
        return telemetry;
    }
}
