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
 * {@code SIDECAR_DEMO_ENGINE_PORT} (18001); the traffic: {@code SIDECAR_DEMO_REQUESTS_PER_SECOND} (mean, 2) and
 * {@code SIDECAR_DEMO_MAX_CONCURRENCY} (16).
 *
 * <p>The traffic is healthy (under the engine's knee, every objective met) until an incident is asked for: with
 * {@code --incident} (or {@code SIDECAR_DEMO_INCIDENT=true}) one starts {@code --incident-after} seconds after the
 * traffic (default 120) and lasts {@code --incident-for} seconds (default 300); at any time with
 * {@code curl -X POST 'http://127.0.0.1:18001/demo/incident?seconds=300'} ({@link DemoControl}). Each start and end
 * is announced on standard output.
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
            Map.entry("sidecar.slo.objectives.batch.target", "0.99"),
            Map.entry("sidecar.windows.drift-min-samples", "20"),
            Map.entry("sidecar.tenants.source", "header"),
            // an illustrative price, not a real one
            Map.entry("sidecar.cost.gpu-hour-price", "2.0"));

    /** Mean requests per second of the demo's traffic, and its most at once outside an incident. */
    static final double DEFAULT_RATE = 2;
    static final int DEFAULT_CONCURRENCY = 16;

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
        double rate = Double.parseDouble(env("SIDECAR_DEMO_REQUESTS_PER_SECOND", Double.toString(DEFAULT_RATE)));
        int concurrency = intEnv("SIDECAR_DEMO_MAX_CONCURRENCY", DEFAULT_CONCURRENCY);
        boolean incident = Boolean.parseBoolean(env("SIDECAR_DEMO_INCIDENT", "false"));
        long incidentAfter = 120, incidentFor = DemoControl.DEFAULT_SECONDS;
        for (String arg : args) {
            if (arg.equals("--incident")) {
                incident = true;
            } else if (arg.startsWith("--incident-after=")) {
                incident = true;
                incidentAfter = Long.parseLong(arg.substring("--incident-after=".length()));
            } else if (arg.startsWith("--incident-for=")) {
                incident = true;
                incidentFor = Long.parseLong(arg.substring("--incident-for=".length()));
            } else {
                throw new IllegalArgumentException("unknown argument " + arg
                        + " (known: --incident, --incident-after=SECONDS, --incident-for=SECONDS)");
            }
        }
        if (incidentAfter < 0 || incidentFor < 1 || incidentFor > DemoControl.MAX_SECONDS) {
            throw new IllegalArgumentException("--incident-after >= 0, 1 <= --incident-for <= " + DemoControl.MAX_SECONDS);
        }

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
        DemoTraffic traffic = new DemoTraffic(vertx, "127.0.0.1", proxyPort, rate, concurrency,
                DemoLauncher::announce);
        traffic.endHint("End it early: curl -X DELETE http://127.0.0.1:" + enginePort + DemoControl.PATH);
        DemoControl.mount(engine, traffic);
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
                + " (docs/formats.md; header x-sim-reasoning-tokens: N makes the model think first)%n"
                + "  Traffic:       %.1f requests/s on average, in 3-minute waves, under the engine's 10 slots:"
                + " a healthy service%n"
                + "  Incident:      curl -X POST 'http://127.0.0.1:%d%s?seconds=300' (a surge past the knee; DELETE"
                + " ends it, GET tells)%n%n",
                enginePort, proxyPort, managementPort, managementPort, managementPort, proxyPort, rate, enginePort,
                DemoControl.PATH);
        if (incident) {
            long afterSeconds = incidentAfter, forSeconds = incidentFor;
            announce("an incident is scheduled in " + afterSeconds + " s, for " + forSeconds + " s (--incident)");
            vertx.setTimer(Math.max(1, afterSeconds * 1000), id -> traffic.startIncident(Duration.ofSeconds(forSeconds)));
        }
        int exit = sidecar.running.process.waitFor();
        System.err.println("the sidecar exited (" + exit + ")");
        System.exit(exit == 0 ? 0 : 1);
    }

    /** A line on standard output, with the time: the incident's start and end. */
    static void announce(String line) {
        System.out.printf("%n  [demo %s] %s%n%n", java.time.LocalTime.now().withNano(0), line);
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v.trim();
    }

    private static int intEnv(String name, int fallback) {
        return Integer.parseInt(env(name, Integer.toString(fallback)));
    }
}
