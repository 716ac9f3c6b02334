package dev.llmsidecar.app;

import dev.llmsidecar.config.HttpTarget;
import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.engine.EngineHealth;
import dev.llmsidecar.engine.EngineMetricsScraper;
import dev.llmsidecar.engine.ServedModels;
import dev.llmsidecar.measure.ModelLabels;
import dev.llmsidecar.metrics.Recorders;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.net.URI;

/**
 * Starts the engine metrics scraper, the engine health probe and the served-model discovery with the application
 * (sidecar.engine.*), stops them on shutdown.
 */
@ApplicationScoped
public class EngineScrapeLifecycle {

    private EngineMetricsScraper scraper;
    private EngineHealth health;
    private ServedModels models;

    void start(@Observes StartupEvent event, Vertx vertx, TelemetryProducer telemetry, SidecarConfig config) {
        SidecarConfig.Engine engine = config.engine();
        HttpTarget upstream = config.upstream().url();
        // the engine's signals go to every backend of the metrics contract, OTLP included
        Recorders recorders = telemetry.telemetry().recorders();
        if (engine.healthEnabled()) {
            health = new EngineHealth(vertx, recorders, HttpTarget.of(upstream.under(engine.healthPath())),
                    engine.healthInterval(), engine.scrapeTimeout());
            health.start();
        }
        if (engine.modelDiscovery()) {
            ModelLabels labels = telemetry.telemetry().metrics().models();
            models = new ServedModels(vertx, recorders, engine.modelsUrl().orElseGet(() -> upstream.under("/v1/models")),
                    engine.modelsInterval(), engine.scrapeTimeout(), labels::listed);
            models.start();
        }
        if (engine.scrapeEnabled()) {
            URI url = engine.metricsUrl().orElseGet(() -> upstream.under("/metrics"));
            scraper = new EngineMetricsScraper(vertx, recorders, url, engine.scrapeInterval(), engine.scrapeTimeout(),
                    engine.tokenDriftLimit());
            scraper.start();
        }
        if (scraper != null || models != null) {
            telemetry.telemetry().engineView(this::view);
        }
    }

    /** The engine member of /q/llm (docs/slo.md): the last scrape with its age, and the models the engine serves. */
    private JsonObject view() {
        JsonObject view = scraper != null ? scraper.view() : new JsonObject();
        if (models != null) {
            view.put("served_models", new JsonArray(models.names()));
        }
        return view;
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
        if (models != null) {
            models.stop();
        }
    }

}
