package dev.llmsidecar.demo;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.SimulatedEngine;
import dev.llmsidecar.testkit.Processes;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/demo}: the simulated engine in this process, the packaged sidecar in front of it as a child process (the
 * jar users run, with the demo's objectives), and demo traffic through it. Ctrl-C stops all three, the sidecar by its
 * PID. Ports: {@code QUARKUS_HTTP_PORT} (8080), {@code QUARKUS_MANAGEMENT_PORT} (9000) and
 * {@code SIDECAR_DEMO_ENGINE_PORT} (18001); the traffic: {@code SIDECAR_DEMO_REQUESTS_PER_SECOND} (4) and
 * {@code SIDECAR_DEMO_MAX_CONCURRENCY} (16).
 */
public final class DemoLauncher {

    /** What the demo configures in the sidecar: objectives, tenants and a price, so every panel has something. */
    static final Map<String, String> SIDECAR_SETTINGS = Map.ofEntries(
            Map.entry("quarkus.http.host", "127.0.0.1"),
            Map.entry("quarkus.management.host", "127.0.0.1"),
            Map.entry("sidecar.slo.classes", "default,batch"),
            Map.entry("sidecar.slo.objectives.interactive.slo-class", "default"),
            Map.entry("sidecar.slo.objectives.interactive.ttft", "PT0.5S"),
            Map.entry("sidecar.slo.objectives.interactive.tpot", "PT0.035S"),
            Map.entry("sidecar.slo.objectives.interactive.target", "0.95"),
            Map.entry("sidecar.slo.objectives.batch.slo-class", "batch"),
            Map.entry("sidecar.slo.objectives.batch.e2e", "PT30S"),
            Map.entry("sidecar.windows.drift-min-samples", "20"),
            Map.entry("sidecar.tenants.source", "header"),
            // an illustrative price, not a real one
            Map.entry("sidecar.cost.gpu-hour-price", "2.0"));

    private DemoLauncher() {
    }

    /** The demo's engine: vLLM-like timing with jitter, half the prompt cached, 10 slots (queues past that). */
    public static EngineBehaviour behaviour() {
        return EngineBehaviour.defaults()
                .withTiming(Duration.ofMillis(250), Duration.ofMillis(25))
                .withJitter(0.4)
                .withCachedTokenRatio(0.5)
                .withSlots(10);
    }

    public static void main(String[] args) throws Exception {
        Path jar = Path.of(System.getProperty("sidecar.jar", "sidecar/target/quarkus-app/quarkus-run.jar"));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("no sidecar jar at " + jar + ": build it first (mvn -B -q package -DskipTests)");
        }
        int proxyPort = intEnv("QUARKUS_HTTP_PORT", 8080);
        int managementPort = intEnv("QUARKUS_MANAGEMENT_PORT", 9000);
        int enginePort = intEnv("SIDECAR_DEMO_ENGINE_PORT", 18001);
        double rate = Double.parseDouble(env("SIDECAR_DEMO_REQUESTS_PER_SECOND", "4"));
        int concurrency = intEnv("SIDECAR_DEMO_MAX_CONCURRENCY", 16);

        Vertx vertx = Vertx.vertx();
        SimulatedEngine engine = new SimulatedEngine(vertx, behaviour());
        engine.start("127.0.0.1", enginePort).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        // the JVM flags the image ships, the demo's settings, its output on ours; SIGTERM, then SIGKILL after 30 s
        // (its own grace is 25 s)
        Processes.Sidecar sidecar;
        try {
            sidecar = Processes.Sidecar.launch(jar).jvmOptions(Processes.shippedJvmOptions(jar))
                    .properties(SIDECAR_SETTINGS).upstream("http://127.0.0.1:" + enginePort)
                    .ports(proxyPort, managementPort).echo(System.out).grace(Duration.ofSeconds(30)).start();
        } catch (Exception e) {
            vertx.close(); // else its threads keep this process alive
            throw e;
        }
        DemoTraffic traffic = new DemoTraffic(vertx, "127.0.0.1", proxyPort, rate, concurrency);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            traffic.stop();
            try {
                sidecar.close();
            } catch (InterruptedException e) {
                sidecar.running.process.destroyForcibly();
            }
            engine.close();
            vertx.close();
        }, "demo-stop"));
        sidecar.awaitReady(Duration.ofSeconds(60));
        traffic.start();
        System.out.printf("%n  Demo running: simulated engine on http://127.0.0.1:%d, proxy on http://127.0.0.1:%d%n"
                + "  Live page:     http://127.0.0.1:%d/q/llm/ui   (open it in a browser)%n"
                + "  Live metrics:  curl -s http://127.0.0.1:%d/q/metrics | grep -E '^(gen_ai|llm_sidecar)'%n"
                + "  Live stats:    curl -s http://127.0.0.1:%d/q/llm%n"
                + "  Try it:        curl -N http://127.0.0.1:%d/v1/chat/completions -H 'content-type: application/json'"
                + " -d '{\"model\":\"sim-llama-8b\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}'%n"
                + "  Other formats: /v1/responses, /v1/messages, /api/chat, /generate_stream, /completion, /v1/embeddings"
                + " (docs/formats.md; header x-sim-reasoning-tokens: N makes the model think first)%n%n",
                enginePort, proxyPort, managementPort, managementPort, managementPort, proxyPort);
        int exit = sidecar.running.process.waitFor();
        System.err.println("the sidecar exited (" + exit + ")");
        System.exit(exit == 0 ? 0 : 1);
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v.trim();
    }

    private static int intEnv(String name, int fallback) {
        return Integer.parseInt(env(name, Integer.toString(fallback)));
    }
}
