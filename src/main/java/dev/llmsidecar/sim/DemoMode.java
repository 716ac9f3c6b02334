package dev.llmsidecar.sim;

import dev.llmsidecar.config.SidecarConfig;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * The README's first command: with sidecar.demo.enabled (profile "demo") the simulated engine runs in this
 * process on sidecar.demo.engine-port and demo traffic flows through the proxy.
 */
@ApplicationScoped
public class DemoMode {

    private static final Logger LOG = Logger.getLogger(DemoMode.class);

    private SimulatedEngine engine;
    private DemoTraffic traffic;

    /** The demo's engine: vLLM-like timing with jitter, half the prompt cached, 10 slots (queues past that). */
    public static EngineBehaviour behaviour() {
        return EngineBehaviour.defaults()
                .withTiming(Duration.ofMillis(250), Duration.ofMillis(25))
                .withJitter(0.4)
                .withCachedTokenRatio(0.5)
                .withSlots(10);
    }

    void start(@Observes StartupEvent event, Vertx vertx, SidecarConfig config) {
        if (!config.demo().enabled()) {
            return;
        }
        engine = new SimulatedEngine(vertx, behaviour());
        int proxyPort = ConfigProvider.getConfig().getOptionalValue("quarkus.http.port", Integer.class).orElse(8080);
        int managementPort = ConfigProvider.getConfig().getOptionalValue("quarkus.management.port", Integer.class)
                .orElse(9000);
        engine.start("127.0.0.1", config.demo().enginePort()).onSuccess(port -> {
            traffic = new DemoTraffic(vertx, "127.0.0.1", proxyPort, config.demo().requestsPerSecond(),
                    config.demo().maxConcurrency());
            traffic.start();
            LOG.infof("%n  Demo running: simulated engine on http://127.0.0.1:%d, proxy on http://127.0.0.1:%d%n"
                    + "  Live page:     http://127.0.0.1:%d/q/llm/ui   (open it in a browser)%n"
                    + "  Live metrics:  curl -s http://127.0.0.1:%d/q/metrics | grep -E '^(gen_ai|llm_sidecar)'%n"
                    + "  Live stats:    curl -s http://127.0.0.1:%d/q/llm%n"
                    + "  Try it:        curl -N http://127.0.0.1:%d/v1/chat/completions -H 'content-type: application/json'"
                    + " -d '{\"model\":\"sim-llama-8b\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}'%n"
                    + "  Other formats: /v1/responses, /v1/messages, /api/chat, /generate_stream, /completion, /v1/embeddings"
                    + " (docs/formats.md; header x-sim-reasoning-tokens: N makes the model think first)%n",
                    port, proxyPort, managementPort, managementPort, managementPort, proxyPort);
        }).onFailure(t -> LOG.errorf("demo engine could not start on port %d: %s", config.demo().enginePort(), t));
    }

    void stop(@Observes ShutdownEvent event) {
        if (traffic != null) {
            traffic.stop();
        }
        if (engine != null) {
            engine.close();
        }
    }
}
