package dev.llmsidecar.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.SimulatedEngine;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The demo's schedule (healthy waves, the incident's surge) and its switch on the engine port. */
class DemoControlTest {

    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void healthyWavesStayBetweenTheirBoundsAndTheSwitchStartsEndsAndAnnouncesAnIncident() throws Exception {
        Vertx vertx = Vertx.vertx();
        SimulatedEngine engine = new SimulatedEngine(vertx, DemoLauncher.behaviour());
        List<String> said = new CopyOnWriteArrayList<>();
        // no traffic is started: only the schedule and the switch are under test (the port is the engine's own)
        try {
            int port = engine.start("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            DemoTraffic traffic = new DemoTraffic(vertx, "127.0.0.1", port, 2, 16, said::add)
                    .endHint("End it early: DELETE");
            DemoControl.mount(engine, traffic);
            URI control = URI.create("http://127.0.0.1:" + port + DemoControl.PATH);

            assertThat(traffic.rateNow()).isBetween(2 * DemoTraffic.WAVE_LOW, 2 * DemoTraffic.WAVE_HIGH);
            JsonObject idle = call(control, "GET", 200);
            assertThat(idle.getBoolean("incident")).isFalse();
            assertThat(idle.getLong("seconds_left")).isZero();

            JsonObject started = call(URI.create(control + "?seconds=60"), "POST", 200);
            assertThat(started.getBoolean("incident")).isTrue();
            assertThat(started.getLong("seconds_left")).isBetween(55L, 60L);
            assertThat(started.getDouble("requests_per_second")).isEqualTo(2 * DemoTraffic.INCIDENT_FACTOR);
            assertThat(said).singleElement().asString().startsWith("INCIDENT started for 60 s")
                    .contains("8.0 requests/s", "End it early: DELETE");

            JsonObject ended = call(control, "DELETE", 200);
            assertThat(ended.getBoolean("incident")).isFalse();
            assertThat(ended.getDouble("requests_per_second")).isLessThanOrEqualTo(2 * DemoTraffic.WAVE_HIGH);
            assertThat(said).hasSize(2).last().asString().startsWith("INCIDENT over (ended by DELETE");
            call(control, "DELETE", 200);
            assertThat(said).as("ending no incident says nothing").hasSize(2);

            call(URI.create(control + "?seconds=0"), "POST", 400);
            call(URI.create(control + "?seconds=soon"), "POST", 400);
            call(URI.create(control + "?seconds=" + (DemoControl.MAX_SECONDS + 1)), "POST", 400);
            assertThat(HTTP.send(HttpRequest.newBuilder(control).PUT(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(405);
            assertThat(traffic.incident()).isFalse();

            // an incident ends by itself when its time is up
            call(URI.create(control + "?seconds=1"), "POST", 200);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (traffic.incident() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(traffic.incident()).isFalse();
            assertThat(said).last().asString().startsWith("INCIDENT over (its 1 s are over)");
            traffic.stop();
        } finally {
            engine.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private static JsonObject call(URI uri, String method, int status) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(uri).method(method, HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(method + " " + uri + ": " + r.body()).isEqualTo(status);
        return new JsonObject(r.body());
    }
}
