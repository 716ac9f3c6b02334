package dev.llmsidecar.engine;

import dev.llmsidecar.config.SidecarConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.net.URI;

/** Starts the engine metrics scraper with the application (sidecar.engine.*), stops it on shutdown. */
@ApplicationScoped
public class EngineScrapeLifecycle {

    private EngineMetricsScraper scraper;

    void start(@Observes StartupEvent event, Vertx vertx, MeterRegistry registry, SidecarConfig config) {
        SidecarConfig.Engine engine = config.engine();
        if (!engine.scrapeEnabled()) {
            return;
        }
        URI url = engine.metricsUrl().orElseGet(() -> defaultUrl(config.upstream().url()));
        scraper = new EngineMetricsScraper(vertx, registry, url, engine.scrapeInterval(), engine.scrapeTimeout());
        scraper.start();
    }

    void stop(@Observes ShutdownEvent event) {
        if (scraper != null) {
            scraper.stop();
        }
    }

    static URI defaultUrl(URI upstream) {
        String base = upstream.toString();
        return URI.create((base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + "/metrics");
    }
}
