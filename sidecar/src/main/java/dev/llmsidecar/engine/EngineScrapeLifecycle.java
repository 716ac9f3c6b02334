package dev.llmsidecar.engine;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.export.TelemetryProducer;
import dev.llmsidecar.export.contract.Recorders;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.net.URI;

/**
 * Starts the engine metrics scraper and the engine health probe with the application (sidecar.engine.*), stops them
 * on shutdown.
 */
@ApplicationScoped
public class EngineScrapeLifecycle {

    private EngineMetricsScraper scraper;
    private EngineHealth health;

    void start(@Observes StartupEvent event, Vertx vertx, TelemetryProducer telemetry, SidecarConfig config) {
        SidecarConfig.Engine engine = config.engine();
        URI upstream = config.upstream().url();
        // the engine's signals go to every backend of the metrics contract, OTLP included
        Recorders recorders = telemetry.telemetry().recorders();
        if (engine.healthEnabled()) {
            health = new EngineHealth(vertx, recorders, under(upstream, engine.healthPath()),
                    engine.healthInterval(), engine.scrapeTimeout());
            health.start();
        }
        if (engine.scrapeEnabled()) {
            URI url = engine.metricsUrl().orElseGet(() -> defaultUrl(upstream));
            scraper = new EngineMetricsScraper(vertx, recorders, url, engine.scrapeInterval(), engine.scrapeTimeout());
            scraper.start();
            telemetry.telemetry().engineView(scraper::view);
        }
    }

    /** The engine health probe, or null when it is off. */
    public EngineHealth health() {
        return health;
    }

    void stop(@Observes ShutdownEvent event) {
        if (scraper != null) {
            scraper.stop();
        }
        if (health != null) {
            health.stop();
        }
    }

    static URI defaultUrl(URI upstream) {
        return under(upstream, "/metrics");
    }

    /** {@code path} under the upstream URL (its own path prefix kept). */
    static URI under(URI upstream, String path) {
        String base = upstream.toString();
        return URI.create((base.endsWith("/") ? base.substring(0, base.length() - 1) : base)
                + (path.startsWith("/") ? path : "/" + path));
    }
}
