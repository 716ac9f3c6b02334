package dev.llmsidecar.demo;

import dev.llmsidecar.sim.SimulatedEngine;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import java.time.Duration;

/**
 * The demo's incident switch at run time, on the simulated engine's port (the demo's own server; 127.0.0.1 only):
 * <ul>
 * <li>{@code POST /demo/incident?seconds=N}: starts an incident of N seconds (default {@value #DEFAULT_SECONDS}, at
 * most {@value #MAX_SECONDS}), or sets the one running to end N seconds from now;</li>
 * <li>{@code DELETE /demo/incident}: ends it now;</li>
 * <li>{@code GET /demo/incident}: whether one runs, the seconds left and the request rate asked for now.</li>
 * </ul>
 * Each answers with that state as JSON. What an incident is: {@link DemoTraffic}.
 */
public final class DemoControl {

    public static final String PATH = "/demo/incident";
    static final int DEFAULT_SECONDS = 300;
    static final int MAX_SECONDS = 3600;

    private DemoControl() {
    }

    public static void mount(SimulatedEngine engine, DemoTraffic traffic) {
        engine.route(PATH, req -> handle(req, traffic));
    }

    private static void handle(HttpServerRequest req, DemoTraffic traffic) {
        switch (req.method().name()) {
            case "GET" -> state(req, traffic, 200);
            case "DELETE" -> {
                traffic.endIncident("ended by DELETE " + PATH);
                state(req, traffic, 200);
            }
            case "POST" -> {
                String seconds = req.getParam("seconds");
                int n;
                try {
                    n = seconds == null ? DEFAULT_SECONDS : Integer.parseInt(seconds.trim());
                } catch (NumberFormatException e) {
                    n = -1;
                }
                if (n < 1 || n > MAX_SECONDS) {
                    req.response().setStatusCode(400).putHeader("content-type", "application/json")
                            .end(new JsonObject().put("error", "seconds must be a whole number from 1 to "
                                    + MAX_SECONDS + ": " + seconds).encode());
                    return;
                }
                traffic.startIncident(Duration.ofSeconds(n));
                state(req, traffic, 200);
            }
            default -> req.response().setStatusCode(405).putHeader("allow", "GET, POST, DELETE").end();
        }
    }

    private static void state(HttpServerRequest req, DemoTraffic traffic, int status) {
        req.response().setStatusCode(status).putHeader("content-type", "application/json")
                .end(new JsonObject().put("incident", traffic.incident())
                        .put("seconds_left", traffic.incidentSecondsLeft())
                        .put("requests_per_second", Math.round(traffic.rateNow() * 100) / 100.0).encode() + "\n");
    }
}
