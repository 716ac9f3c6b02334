package dev.llmsidecar.sweep;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.SimulatedEngine;
import dev.llmsidecar.testkit.Processes;
import io.vertx.core.Vertx;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code --sim}: the simulated engine in this process and the packaged sidecar in front of it as a child process
 * ({@link Processes.Sidecar}, with the shipped JVM flags), both on ephemeral loopback ports, stopped (the sidecar by
 * its PID: SIGTERM, then SIGKILL after 10 s) on close. The sidecar's output goes to {@code logFile}.
 */
final class SimSidecar implements AutoCloseable {

    final EngineBehaviour behaviour;
    final int enginePort;
    final int proxyPort;
    final int managementPort;
    private final SimulatedEngine engine;
    private final Processes.Sidecar sidecar;
    private final Thread hook;

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

    /** @param properties {@code K=V} system properties for the sidecar */
    SimSidecar(Vertx vertx, EngineBehaviour behaviour, Path jar, List<String> properties, Path logFile,
            PrintStream log) throws Exception {
        this.behaviour = behaviour;
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("no sidecar jar at " + jar + ": build it (mvn -o -q package -DskipTests) "
                    + "or pass --sidecar-jar");
        }
        engine = new SimulatedEngine(vertx, behaviour);
        enginePort = engine.start("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        Map<String, String> props = new LinkedHashMap<>();
        for (String p : properties) {
            String[] kv = p.split("=", 2);
            props.put(kv[0], kv.length > 1 ? kv[1] : "");
        }
        try {
            Files.createDirectories(logFile.toAbsolutePath().getParent());
            sidecar = Processes.Sidecar.launch(jar).jvmOptions(Processes.shippedJvmOptions(jar)).properties(props)
                    .upstream("http://127.0.0.1:" + enginePort).log(logFile).start();
        } catch (Exception e) {
            engine.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            throw new IllegalStateException("the sidecar did not start (" + jar + "): " + e.getMessage());
        }
        hook = new Thread(() -> sidecar.running.process.destroyForcibly(), "sweep-sim-sidecar-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        proxyPort = sidecar.proxyPort;
        managementPort = sidecar.managementPort;
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
            sidecar.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
        } finally {
            engine.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
