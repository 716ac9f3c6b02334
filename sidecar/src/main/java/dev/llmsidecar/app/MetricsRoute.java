package dev.llmsidecar.app;

import dev.llmsidecar.metrics.prometheus.MetricsScrape;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.quarkus.vertx.http.ManagementInterface;
import io.vertx.core.buffer.Buffer;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Serves /q/metrics on the management interface: the whole Prometheus registry (the contract, and the JVM and
 * process series of Quarkus's Micrometer binders), in the format the scraper negotiates ({@link MetricsScrape}):
 * protobuf with native histograms, OpenMetrics with trace-id exemplars, or the 0.0.4 text format.
 */
@ApplicationScoped
public class MetricsRoute {

    private final MetricsScrape scrape = new MetricsScrape();

    /**
     * The application's registry: Micrometer's on a Prometheus client 1.x registry (Quarkus 3.37's own Prometheus
     * registry is client 0.x, which has no native histograms). Quarkus adds every MeterRegistry bean to its global
     * registry, so its JVM and process binders land here.
     */
    @Produces
    @Singleton
    PrometheusMeterRegistry prometheusRegistry() {
        return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    }

    void install(@Observes ManagementInterface management, PrometheusMeterRegistry registry,
            TelemetryProducer telemetry) {
        management.router().get("/q/metrics").order(-100).handler(rc -> {
            String accept = rc.request().getHeader("accept");
            telemetry.telemetry().inFlight().sampleQueueDepth(); // the time-weighted samples up to now
            // a scrape of a few hundred KB: render it off the event loop that carries the management traffic
            rc.vertx().executeBlocking(() -> scrape.render(registry.getPrometheusRegistry(), accept), false)
                    .onComplete(ar -> {
                        if (ar.succeeded()) {
                            rc.response().putHeader("content-type", ar.result().contentType())
                                    .end(Buffer.buffer(ar.result().body()));
                        } else {
                            rc.fail(ar.cause());
                        }
                    });
        });
    }
}
