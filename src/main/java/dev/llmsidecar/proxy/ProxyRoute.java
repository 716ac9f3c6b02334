package dev.llmsidecar.proxy;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.observe.TrafficObserver;
import io.quarkus.runtime.ShutdownEvent;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * Installs the proxy as the only route of the application HTTP port. Metrics and health live on the separate
 * management port (quarkus.management.*), so proxied clients can never reach them.
 *
 * <p>Graceful shutdown: on SIGTERM the proxy stops taking new requests (503, {@code Connection: close}) and open
 * streams run to their end for up to {@code quarkus.shutdown.timeout} (the grace; Quarkus's own graceful-shutdown
 * filter waits for the same requests). A JVM shutdown hook starts the drain, because it runs as soon as the signal
 * arrives, while CDI's ShutdownEvent comes only after Quarkus has waited.
 */
@ApplicationScoped
public class ProxyRoute {

    private static final Logger LOG = Logger.getLogger(ProxyRoute.class);

    private ProxyHandler handler;
    private Thread drainHook;

    void install(@Observes Router router, Vertx vertx, SidecarConfig config, TrafficObserver traffic) {
        handler = new ProxyHandler(vertx, config, traffic);
        router.route().order(Integer.MIN_VALUE).handler(rc -> handler.handle(rc.request()));
        Duration grace = ConfigProvider.getConfig().getOptionalValue("quarkus.shutdown.timeout", Duration.class)
                .orElse(Duration.ZERO);
        ProxyHandler h = handler;
        drainHook = new Thread(() -> drainOnShutdown(h, grace), "llm-sidecar-drain");
        Runtime.getRuntime().addShutdownHook(drainHook);
    }

    private static void drainOnShutdown(ProxyHandler h, Duration grace) {
        int open = h.inFlight();
        if (open > 0) {
            LOG.infof("draining %d open request(s) for up to %s", open, grace);
        }
        try {
            h.drain(grace).toCompletionStage().toCompletableFuture()
                    .get(grace.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // Vert.x already closed, or the grace ran out: nothing more to wait for
        }
    }

    /** True once SIGTERM has started the drain (readiness is DOWN from then on). */
    public boolean draining() {
        return handler != null && handler.draining();
    }

    void stop(@Observes ShutdownEvent event) {
        if (drainHook != null) {
            try {
                // an application stop without JVM exit (dev mode, tests) must not leave the hook behind
                Runtime.getRuntime().removeShutdownHook(drainHook);
            } catch (IllegalStateException e) {
                // the JVM is already shutting down: the hook is running
            }
        }
        if (handler != null) {
            handler.close();
        }
    }
}
