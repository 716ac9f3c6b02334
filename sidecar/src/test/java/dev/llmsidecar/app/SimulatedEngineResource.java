package dev.llmsidecar.app;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.SimulatedEngine;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Starts a simulated engine on a free loopback port and points the sidecar at it. */
public class SimulatedEngineResource implements QuarkusTestResourceLifecycleManager {

    private Vertx vertx;
    private SimulatedEngine engine;

    @Override
    public Map<String, String> start() {
        vertx = Vertx.vertx();
        engine = new SimulatedEngine(vertx, behaviour());
        try {
            int port = engine.start("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            return Map.of("sidecar.upstream.url", "http://127.0.0.1:" + port, "test.engine.port", Integer.toString(port));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** How the engine behaves: quick and byte-stable by default. */
    protected EngineBehaviour behaviour() {
        return EngineBehaviour.defaults().withTiming(Duration.ofMillis(50), Duration.ofMillis(5))
                .withFixedCreated(1_700_000_000L);
    }

    @Override
    public void stop() {
        if (vertx != null) {
            vertx.close().toCompletionStage().toCompletableFuture().join();
        }
    }
}
