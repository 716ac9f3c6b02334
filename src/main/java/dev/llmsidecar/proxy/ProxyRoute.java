package dev.llmsidecar.proxy;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.export.LlmMetrics;
import io.micrometer.core.instrument.MeterRegistry;
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

    private ProxyHandler handler;

    void install(@Observes Router router, Vertx vertx, SidecarConfig config, MeterRegistry registry) {
        handler = new ProxyHandler(vertx, config, new LlmMetrics(registry, config.metrics()));
        router.route().order(Integer.MIN_VALUE).handler(rc -> handler.handle(rc.request()));
    }

    void stop(@Observes ShutdownEvent event) {
        if (handler != null) {
            handler.close();
        }
    }
}
