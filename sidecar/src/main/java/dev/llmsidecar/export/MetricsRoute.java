package dev.llmsidecar.export;

import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.quarkus.vertx.http.ManagementInterface;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Serves /q/metrics on the management interface in front of Quarkus's own handler, with Prometheus's content
 * negotiation: Prometheus asks for {@code application/openmetrics-text;version=1.0.0,...;q=0.75,...}, which the
 * Quarkus handler answers with the 0.0.4 text format (no exemplars); here it gets OpenMetrics, with the trace-id
 * exemplars, and any other client gets what it asked for.
 */
@ApplicationScoped
public class MetricsRoute {

    void install(@Observes ManagementInterface management, PrometheusMeterRegistry registry) {
        // order before the Quarkus route for the same path
        management.router().get("/q/metrics").order(-100).handler(rc -> {
            String accept = rc.request().getHeader("accept");
            // a scrape of a few hundred KB: render it off the event loop that carries the management traffic
            rc.vertx().executeBlocking(() -> MetricsScrape.render(registry, accept), false).onComplete(ar -> {
                if (ar.succeeded()) {
                    rc.response().putHeader("content-type", ar.result().contentType()).end(ar.result().body());
                } else {
                    rc.fail(ar.cause());
                }
            });
        });
    }
}
