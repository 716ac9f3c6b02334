package dev.llmsidecar.app;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.gpu.DcgmScraper;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

/**
 * Starts the DCGM exporter scraper with the application when {@code sidecar.gpu.dcgm-url} is set (nothing about GPUs
 * is exported otherwise), stops it on shutdown.
 */
@ApplicationScoped
public class GpuScrapeLifecycle {

    private static final Logger LOG = Logger.getLogger(GpuScrapeLifecycle.class);

    private DcgmScraper scraper;

    void start(@Observes StartupEvent event, Vertx vertx, TelemetryProducer telemetry, SidecarConfig config) {
        // the GPU gauges go to every backend of the metrics contract, OTLP included
        scraper = DcgmScraper.configured(vertx, () -> telemetry.telemetry().recorders(), config.gpu(), System::getenv);
        if (scraper != null) {
            scraper.start();
        }
    }

    void stop(@Observes ShutdownEvent event) {
        if (scraper != null) {
            scraper.stop();
        }
    }

    /** The running scraper, or null when sidecar.gpu.dcgm-url is unset. */
    public DcgmScraper scraper() {
        return scraper;
    }
}
