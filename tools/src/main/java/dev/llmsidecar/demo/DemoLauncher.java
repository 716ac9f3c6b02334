package dev.llmsidecar.demo;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.SimulatedEngine;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
        Process sidecar = startSidecar(jar, proxyPort, managementPort, enginePort);
        DemoTraffic[] traffic = new DemoTraffic[1];
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (traffic[0] != null) {
                traffic[0].stop();
            }
            stop(sidecar);
            engine.close();
            vertx.close();
        }, "demo-stop"));
        awaitReady(sidecar, managementPort);
        traffic[0] = new DemoTraffic(vertx, "127.0.0.1", proxyPort, rate, concurrency);
        traffic[0].start();
        System.out.printf("%n  Demo running: simulated engine on http://127.0.0.1:%d, proxy on http://127.0.0.1:%d%n"
                + "  Live page:     http://127.0.0.1:%d/q/llm/ui   (open it in a browser)%n"
                + "  Live metrics:  curl -s http://127.0.0.1:%d/q/metrics | grep -E '^(gen_ai|llm_sidecar)'%n"
                + "  Live stats:    curl -s http://127.0.0.1:%d/q/llm%n"
                + "  Try it:        curl -N http://127.0.0.1:%d/v1/chat/completions -H 'content-type: application/json'"
                + " -d '{\"model\":\"sim-llama-8b\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}'%n"
                + "  Other formats: /v1/responses, /v1/messages, /api/chat, /generate_stream, /completion, /v1/embeddings"
                + " (docs/formats.md; header x-sim-reasoning-tokens: N makes the model think first)%n%n",
                enginePort, proxyPort, managementPort, managementPort, managementPort, proxyPort);
        int exit = sidecar.waitFor();
        System.err.println("the sidecar exited (" + exit + ")");
        System.exit(exit == 0 ? 0 : 1);
    }

    /** The packaged sidecar with the JVM flags the image ships and the demo's settings, its output on ours. */
    static Process startSidecar(Path jar, int proxyPort, int managementPort, int enginePort) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        Path options = Path.of("sidecar/src/main/jvm/jvm.options");
        if (Files.isRegularFile(options)) {
            command.add("@" + options);
        }
        SIDECAR_SETTINGS.forEach((k, v) -> command.add("-D" + k + "=" + v));
        command.add("-Dquarkus.http.port=" + proxyPort);
        command.add("-Dquarkus.management.port=" + managementPort);
        command.add("-Dsidecar.upstream.url=http://127.0.0.1:" + enginePort);
        command.add("-jar");
        command.add(jar.toString());
        return new ProcessBuilder(command).inheritIO().start();
    }

    private static void awaitReady(Process sidecar, int managementPort) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        URI ready = URI.create("http://127.0.0.1:" + managementPort + "/q/health/ready");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline && sidecar.isAlive()) {
            try {
                if (http.send(HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(1)).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("the sidecar did not become ready on port " + managementPort);
    }

    /** SIGTERM, then SIGKILL after 30 s (its own grace is 25 s). */
    private static void stop(Process sidecar) {
        sidecar.destroy();
        try {
            if (!sidecar.waitFor(30, TimeUnit.SECONDS)) {
                sidecar.destroyForcibly();
            }
        } catch (InterruptedException e) {
            sidecar.destroyForcibly();
        }
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v.trim();
    }

    private static int intEnv(String name, int fallback) {
        return Integer.parseInt(env(name, Integer.toString(fallback)));
    }
}
