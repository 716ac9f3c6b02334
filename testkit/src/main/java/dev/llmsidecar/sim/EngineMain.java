package dev.llmsidecar.sim;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * The simulated engine as a process of its own (the benchmark runs it so that its CPU is measured apart from the
 * load client's): {@code EngineMain <port|0> [eventLoops] [SPEC]} listens on 127.0.0.1, prints {@code PORT n} once
 * every event loop listens, and runs until killed. SPEC changes the default behaviour ({@link EngineBehaviour#with}).
 * Each event loop runs its own engine on the shared port (the kernel spreads the connections), so slots and
 * {@code /metrics} are per event loop.
 */
public final class EngineMain {

    private EngineMain() {
    }

    public static void main(String[] args) throws Exception {
        int requested = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        int loops = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        EngineBehaviour behaviour = EngineBehaviour.defaults().with(args.length > 2 ? args[2] : null);
        // one port for every engine: Vert.x shares a host:port among servers, not port 0
        int port = requested != 0 ? requested : freePort();
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops));
        vertx.deployVerticle(() -> new AbstractVerticle() {
            @Override
            public void start(Promise<Void> started) {
                // a process of its own: nobody reads what it served, so it keeps none of it
                new SimulatedEngine(vertx, behaviour).keepServed(0).start("127.0.0.1", port).<Void>mapEmpty()
                        .onComplete(started);
            }
        }, new DeploymentOptions().setInstances(loops)).onComplete(ar -> {
            if (ar.failed()) {
                ar.cause().printStackTrace();
                System.exit(1);
            }
            System.out.println("PORT " + port);
            System.out.flush();
        });
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
