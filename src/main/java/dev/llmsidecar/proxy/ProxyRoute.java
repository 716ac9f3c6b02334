package dev.llmsidecar.proxy;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.export.SidecarTelemetry;
import dev.llmsidecar.export.TelemetryProducer;
import io.quarkus.runtime.ShutdownEvent;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Installs the proxy as the only route of the application HTTP port. Metrics and health live on the separate
 * management port (quarkus.management.*), so proxied clients can never reach them.
 */
@ApplicationScoped
public class ProxyRoute {

    private static final long QUEUE_SAMPLE_MILLIS = 250;

    private ProxyHandler handler;
    private Vertx vertx;
    private long sampler = -1;

    void install(@Observes Router router, Vertx vertx, SidecarConfig config, TelemetryProducer producer) {
        SidecarTelemetry telemetry = producer.telemetry();
        this.vertx = vertx;
        handler = new ProxyHandler(vertx, config, telemetry.reporter(), telemetry.tracing());
        router.route().order(Integer.MIN_VALUE).handler(rc -> handler.handle(rc.request()));
        sampler = vertx.setPeriodic(QUEUE_SAMPLE_MILLIS, id -> telemetry.metrics().sampleQueueDepth());
    }

    void stop(@Observes ShutdownEvent event) {
        if (sampler >= 0) {
            vertx.cancelTimer(sampler);
        }
        if (handler != null) {
            handler.close();
        }
    }
}
