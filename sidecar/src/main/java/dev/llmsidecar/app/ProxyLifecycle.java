package dev.llmsidecar.app;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.includeusage.IncludeUsage;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.proxy.ProxyServer;
import dev.llmsidecar.rewrite.Rewriter;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.Config;
import org.jboss.logging.Logger;

/**
 * Starts the proxy port ({@link ProxyServer}) on Vert.x's event loops when the application starts, with the keys the
 * proxy port has always had ({@code quarkus.http.host}, {@code quarkus.http.port}, {@code quarkus.http.test-port} in
 * tests, {@code quarkus.http.limits.*}, {@code quarkus.http.idle-timeout}); Quarkus's own HTTP server serves only the
 * management port ({@code quarkus.http.host-enabled=false}).
 *
 * <p>Graceful shutdown: on SIGTERM the proxy stops taking new requests (503, {@code Connection: close}) and open
 * streams run to their end for up to {@code quarkus.shutdown.timeout} (the grace). A JVM shutdown hook starts the
 * drain, because it runs as soon as the signal arrives (readiness goes DOWN at once). Quarkus's own shutdown waits for
 * the same drain in its pre-shutdown phase ({@link ShutdownDelayInitiatedEvent}, on with
 * {@code quarkus.shutdown.delay-enabled=true}): until that phase ends the management port is still fully up, so
 * readiness keeps answering DOWN and Prometheus keeps scraping while the streams end. Waiting any later (in
 * ShutdownEvent) left the management port closed for the whole drain (measured: refused 70 ms after the signal).
 * ShutdownEvent waits too, for stops that skip the pre-shutdown phase, then closes the proxy before Quarkus closes
 * the event loops.
 */
@ApplicationScoped
public class ProxyLifecycle {

    private static final Logger LOG = Logger.getLogger(ProxyLifecycle.class);

    private ProxyServer server;
    private Thread drainHook;
    private Duration grace = Duration.ZERO;
    private int port;

    // before the telemetry's own start (priority 10 and up): requests may arrive as soon as the port is bound
    void start(@Observes @Priority(5) StartupEvent event, Vertx vertx, SidecarConfig config, TrafficObserver traffic,
            Config settings, TelemetryProducer telemetry) {
        String host = settings.getOptionalValue("quarkus.http.host", String.class).orElse("0.0.0.0");
        boolean test = LaunchMode.current() == LaunchMode.TEST;
        int wanted = test ? settings.getOptionalValue("quarkus.http.test-port", Integer.class).orElse(8081)
                : settings.getOptionalValue("quarkus.http.port", Integer.class).orElse(8080);
        ProxyServer.Settings limits = new ProxyServer.Settings(
                bytes(settings, "quarkus.http.limits.max-initial-line-length", 4096),
                bytes(settings, "quarkus.http.limits.max-header-size", 20 * 1024),
                settings.getOptionalValue("quarkus.http.idle-timeout", Duration.class).orElse(Duration.ofMinutes(30)));
        // the rewriting features behind the proxy's one hook: include_usage
        Rewriter rewriter = new IncludeUsage(config.llm().injectIncludeUsage(), traffic);
        server = new ProxyServer(vertx.nettyEventLoopGroup(), config, traffic, rewriter, limits);
        port = server.start(host, wanted);
        ProxyGauges.register(telemetry.telemetry().recorders(), server);
        LOG.infof("llm-sidecar proxy listening on http://%s:%d (upstream %s)", host, port, config.upstream().url().uri());
        grace = settings.getOptionalValue("quarkus.shutdown.timeout", Duration.class).orElse(Duration.ZERO);
        ProxyServer s = server;
        Duration g = grace;
        // the signal's hook only starts the drain (readiness DOWN at once); Quarkus's shutdown, beside it, waits for it
        drainHook = new Thread(() -> s.drain(g), "llm-sidecar-drain");
        Runtime.getRuntime().addShutdownHook(drainHook);
    }

    /** A size setting in Quarkus's memory-size syntax (20K, 4096, 1M). */
    private static int bytes(Config config, String key, int fallback) {
        return config.getOptionalValue(key, String.class).map(ProxyLifecycle::parseSize).orElse(fallback);
    }

    static int parseSize(String value) {
        String v = value.trim().toUpperCase(java.util.Locale.ROOT);
        long unit = 1;
        char last = v.charAt(v.length() - 1);
        if (last == 'K' || last == 'M' || last == 'G') {
            unit = last == 'K' ? 1024 : last == 'M' ? 1024 * 1024 : 1024L * 1024 * 1024;
            v = v.substring(0, v.length() - 1);
        }
        return (int) Math.min(Integer.MAX_VALUE, Long.parseLong(v) * unit);
    }

    /** Waits until every open request has ended, or the grace has run out (then what is still open is cut). */
    private static void awaitDrain(ProxyServer s, Duration grace) {
        try {
            s.drain(grace).get(grace.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // the grace ran out: nothing more to wait for
        }
    }

    /** The proxy port as bound (tests bind port 0). */
    public int port() {
        return port;
    }

    /** True once SIGTERM has started the drain (readiness is DOWN from then on). */
    public boolean draining() {
        return server != null && server.draining();
    }

    public ProxyServer server() {
        return server;
    }

    /** Quarkus's pre-shutdown phase: the management port still serves while open streams end. */
    void drainBeforeShutdown(@Observes ShutdownDelayInitiatedEvent event) {
        if (server != null) {
            awaitDrain(server, grace); // the drain the signal's hook started, or starts it (a stop without signal)
        }
    }

    /**
     * Before the telemetry closes ({@code TelemetryProducer.onStop}, priority 10): the streams still open past the grace
     * are cut here, and their records, spans and series must reach a recorder, an exporter and a registry that are
     * still open.
     */
    void stop(@Observes @Priority(5) ShutdownEvent event) {
        if (drainHook != null) {
            try {
                // an application stop without JVM exit (dev mode, tests) must not leave the hook behind
                Runtime.getRuntime().removeShutdownHook(drainHook);
            } catch (IllegalStateException e) {
                // the JVM is already shutting down: the hook is running
            }
        }
        if (server != null) {
            // open streams end first (at once when none is open), then the server closes
            awaitDrain(server, grace);
            server.close();
        }
    }
}
