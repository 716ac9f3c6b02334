package dev.llmsidecar.sweep;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.SimulatedEngine;
import io.vertx.core.Vertx;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code --sim}: the simulated engine in this process and the packaged sidecar in front of it as a child process,
 * both on ephemeral loopback ports, stopped (the sidecar by its PID: SIGTERM, then SIGKILL after 10 s) on close.
 */
final class SimSidecar implements AutoCloseable {

    /** What the sidecar prints once its proxy port is bound. */
    static final Pattern PROXY_LISTENING = Pattern.compile("llm-sidecar proxy listening on http://127\\.0\\.0\\.1:(\\d+)");
    /** What Quarkus prints once the management port is bound (after the proxy's). */
    static final Pattern MANAGEMENT_LISTENING = Pattern.compile(
            "Management interface listening on http://127\\.0\\.0\\.1:(\\d+)");

    final EngineBehaviour behaviour;
    final int enginePort;
    final int proxyPort;
    final int managementPort;
    private final SimulatedEngine engine;
    private final Process sidecar;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread hook;
    private final Path logFile;

    /** The demo engine's timing ({@code DemoMode}), with the spec's changes ({@link EngineBehaviour#with}). */
    static EngineBehaviour behaviour(String spec) {
        EngineBehaviour demo = EngineBehaviour.defaults().withSlots(10)
                .withTiming(Duration.ofMillis(250), Duration.ofMillis(25)).withJitter(0.4);
        try {
            return demo.with(spec);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--sim: " + e.getMessage());
        }
    }

    SimSidecar(Vertx vertx, EngineBehaviour behaviour, Path jar, List<String> properties, Path logFile,
            PrintStream log) throws Exception {
        this.behaviour = behaviour;
        this.logFile = logFile;
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("no sidecar jar at " + jar + ": build it (mvn -o -q package -DskipTests) "
                    + "or pass --sidecar-jar");
        }
        engine = new SimulatedEngine(vertx, behaviour);
        enginePort = engine.start("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        Path jvmOptions = jar.toAbsolutePath().getParent().getParent().getParent().resolve("src/main/jvm/jvm.options");
        if (Files.isRegularFile(jvmOptions)) {
            command.add("@" + jvmOptions);
        }
        for (String p : properties) {
            command.add("-D" + p);
        }
        command.add("-jar");
        command.add(jar.toString());
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("SIDECAR_UPSTREAM_URL", "http://127.0.0.1:" + enginePort);
        pb.environment().put("QUARKUS_HTTP_HOST", "127.0.0.1");
        pb.environment().put("QUARKUS_HTTP_PORT", "0");
        pb.environment().put("QUARKUS_MANAGEMENT_HOST", "127.0.0.1");
        pb.environment().put("QUARKUS_MANAGEMENT_PORT", "0");
        sidecar = pb.start();
        hook = new Thread(() -> sidecar.destroyForcibly(), "sweep-sim-sidecar-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(sidecar.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null;) {
                    if (lines.size() < 100_000) {
                        lines.add(line);
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
        }, "sweep-sim-sidecar-output");
        reader.setDaemon(true);
        reader.start();
        int[] ports = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (ports == null && System.nanoTime() < deadline) {
            ports = ports(lines);
            if (ports == null) {
                if (!sidecar.isAlive()) {
                    break;
                }
                Thread.sleep(50);
            }
        }
        if (ports == null) {
            String output = String.join("\n", lines);
            close();
            throw new IllegalStateException("the sidecar did not start (" + jar + "):\n" + output);
        }
        proxyPort = ports[0];
        managementPort = ports[1];
        if (log != null) {
            log.printf(Locale.ROOT, "sweep: --sim: simulated engine on 127.0.0.1:%d (%d slots, TTFT %d ms, %d ms per "
                    + "token, jitter %s), sidecar pid %d on 127.0.0.1:%d, management :%d%n", enginePort,
                    behaviour.slots(), behaviour.ttft().toMillis(), behaviour.interChunk().toMillis(),
                    behaviour.jitter(), sidecar.pid(), proxyPort, managementPort);
        }
    }

    @Override
    public void close() throws Exception {
        try {
            sidecar.destroy();
            if (!sidecar.waitFor(10, TimeUnit.SECONDS)) {
                sidecar.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
            if (logFile != null) {
                Files.createDirectories(logFile.toAbsolutePath().getParent());
                Files.write(logFile, lines, StandardCharsets.UTF_8);
            }
        } finally {
            engine.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /** The proxy and management ports from the sidecar's output, once both are bound; else null. */
    static int[] ports(List<String> output) {
        int proxy = -1;
        int management = -1;
        for (String line : output) {
            Matcher p = PROXY_LISTENING.matcher(line);
            if (p.find()) {
                proxy = Integer.parseInt(p.group(1));
            }
            Matcher m = MANAGEMENT_LISTENING.matcher(line);
            if (m.find()) {
                management = Integer.parseInt(m.group(1));
            }
        }
        return proxy > 0 && management > 0 ? new int[] {proxy, management} : null;
    }
}
