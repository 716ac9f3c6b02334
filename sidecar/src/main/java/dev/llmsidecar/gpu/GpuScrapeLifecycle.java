package dev.llmsidecar.gpu;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.export.TelemetryProducer;
import dev.llmsidecar.export.contract.Recorders;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
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
        scraper = scraper(vertx, () -> telemetry.telemetry().recorders(), config.gpu(), System::getenv);
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

    /**
     * The scraper the configuration asks for, not started; null (and the recorders not even asked for) without
     * {@code dcgm-url}. The pod is {@code sidecar.gpu.pod}, else the environment's HOSTNAME (the pod name on
     * Kubernetes).
     */
    static DcgmScraper scraper(Vertx vertx, Supplier<Recorders> recorders, SidecarConfig.Gpu gpu,
            UnaryOperator<String> env) {
        if (gpu.dcgmUrl().isEmpty()) {
            return null;
        }
        String pod = gpu.pod().filter(p -> !p.isBlank()).orElseGet(() -> env.apply("HOSTNAME"));
        if (pod == null || pod.isBlank()) {
            LOG.warn("sidecar.gpu.dcgm-url is set but neither sidecar.gpu.pod nor HOSTNAME is: no GPU can be "
                    + "selected (set sidecar.gpu.pod to this pod's name, or * for every GPU of the exporter)");
        } else {
            LOG.infof("Scraping the DCGM exporter at %s for the GPUs of pod %s", gpu.dcgmUrl().get(), pod);
        }
        return new DcgmScraper(vertx, recorders.get(), gpu.dcgmUrl().get(), new DcgmNormaliser(pod),
                gpu.scrapeInterval(), gpu.scrapeTimeout());
    }
}
