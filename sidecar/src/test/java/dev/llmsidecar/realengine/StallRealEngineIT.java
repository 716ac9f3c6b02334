package dev.llmsidecar.realengine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.ops.PrometheusServer;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.LeavingClient;
import dev.llmsidecar.testkit.Processes;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.function.DoublePredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A real stall: llama-server frozen mid-stream with SIGSTOP, through the packaged sidecar. Resumed (SIGCONT), the
 * stalled-streams gauge clears and the stream completes; never resumed, the client gives up and the request is
 * counted as ended stalled. The gauge must show within the threshold plus one read of the metrics, and the shipped
 * alert LLMSidecarStreamsStalled must go pending in a real Prometheus scraping the sidecar every second.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StallRealEngineIT {

    static final double THRESHOLD_S = 1.0;
    static final Pattern TOKEN = Pattern.compile("\"content\":\"(?!\")");
    static final String LONG = "{\"model\":\"tiny\",\"temperature\":0,\"seed\":1,\"max_tokens\":4000,\"ignore_eos\":true,"
            + "\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a long story.\"}]}";

    Processes.Running engine;
    Processes.Sidecar sidecar;
    PrometheusServer prometheus;

    @BeforeAll
    void start() throws Exception {
        int port = Processes.freePort();
        engine = Processes.llamaServer(port);
        sidecar = new Processes.Sidecar("http://127.0.0.1:" + port, Map.of(),
                Map.of("sidecar.stall.threshold", "PT1S"));
        prometheus = PrometheusServer.withShippedRules(sidecar.managementPort, "it", "stall-it");
    }

    @AfterAll
    void stop() throws Exception {
        try {
            if (prometheus != null) {
                prometheus.close();
            }
            if (sidecar != null) {
                sidecar.close();
            }
        } finally {
            if (engine != null) {
                signal("CONT"); // never leave it stopped
                engine.close();
            }
        }
    }

    void signal(String name) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(engine.process.pid())).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -" + name).isZero();
    }

    static int tokens(String text) {
        Matcher m = TOKEN.matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    Scrape scrape() throws Exception {
        return new Scrape(sidecar.metrics());
    }

    /** Polls /q/metrics every 100 ms, at most {@code seconds}, until the summed series satisfies {@code until}. */
    Scrape await(double seconds, DoublePredicate until, String name, String... labels) throws Exception {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        while (true) {
            Scrape s = scrape();
            if (until.test(s.sum(name, labels))) {
                return s;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " " + String.join(",", labels) + " stayed at " + s.sum(name, labels));
            }
            Thread.sleep(100);
        }
    }

    /** Polls Prometheus's active alerts (every 200 ms, at most {@code seconds}) until {@code name} is among them. */
    JsonObject awaitAlert(String name, double seconds) throws Exception {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < deadline) {
            for (Object a : prometheus.api("/api/v1/alerts").getJsonObject("data").getJsonArray("alerts")) {
                JsonObject alert = (JsonObject) a;
                if (name.equals(alert.getJsonObject("labels").getString("alertname"))) {
                    return alert;
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError(name + " never active: " + prometheus.api("/api/v1/alerts") + "\n" + prometheus.log());
    }

    @Test
    void frozenThenResumedTheGaugeClearsAndTheStreamCompletes() throws Exception {
        double completedBefore = scrape().sum("llm_sidecar_requests_total", "end_reason", "completed");
        try (LeavingClient c = new LeavingClient(sidecar.proxyPort, LONG, Map.of())) {
            assertThat(c.readUntil(t -> tokens(t) >= 5, 30)).as("first tokens: " + c.text()).isTrue();
            signal("STOP");
            long stopped = System.nanoTime();
            await(THRESHOLD_S + 10, v -> v >= 1, "llm_sidecar_stalled_streams", "stream_phase", "generation");
            double shownAfter = (System.nanoTime() - stopped) / 1e9;
            Scrape s = scrape();
            System.out.printf("llama-server SIGSTOP: stalled gauge at 1 %.3f s after the stop (threshold %.1f s), "
                    + "longest silence %.3f s%n", shownAfter, THRESHOLD_S,
                    s.sum("llm_sidecar_stream_longest_silence_seconds", "stream_phase", "generation"));
            // the tokens already on their way arrive after the stop: the silence starts at most then
            assertThat(shownAfter).as("within the threshold plus one read").isLessThan(THRESHOLD_S + 1.5);
            JsonObject alert = awaitAlert("LLMSidecarStreamsStalled", 15);
            System.out.printf("LLMSidecarStreamsStalled %s %.3f s after the stop%n", alert.getString("state"),
                    (System.nanoTime() - stopped) / 1e9);
            assertThat(alert.getString("state")).isEqualTo("pending"); // for: 2m
            assertThat(alert.getJsonObject("labels").getString("stream_phase")).isEqualTo("generation");
            assertThat(alert.getJsonObject("labels").getString("model")).isEqualTo("tiny");
            signal("CONT");
            assertThat(c.readUntil(t -> t.contains("data: [DONE]"), 60)).as("the stream completes").isTrue();
        }
        await(10, v -> v == 0, "llm_sidecar_stalled_streams");
        Scrape s = await(10, v -> v >= completedBefore + 1, "llm_sidecar_requests_total", "end_reason", "completed");
        assertThat(s.sum("llm_sidecar_stream_longest_gap_seconds_sum")).isGreaterThan(THRESHOLD_S);
    }

    @Test
    void frozenAndNeverResumedTheClientGivesUpAndItEndsStalled() throws Exception {
        try {
            int received;
            try (LeavingClient c = new LeavingClient(sidecar.proxyPort, LONG, Map.of())) {
                assertThat(c.readUntil(t -> tokens(t) >= 5, 30)).as("first tokens: " + c.text()).isTrue();
                signal("STOP");
                await(THRESHOLD_S + 10, v -> v >= 1, "llm_sidecar_stalled_streams", "stream_phase", "generation");
                c.readUntil(t -> false, 0.3); // whatever was still on its way
                received = tokens(c.text());
            } // the client gives up
            Scrape s = await(10, v -> v >= 1, "llm_sidecar_requests_total", "end_reason", "stalled");
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "stalled", "outcome", "client_cancelled"))
                    .isEqualTo(1);
            assertThat(s.sum("llm_sidecar_abandoned_output_tokens_total", "end_reason", "stalled"))
                    .as("the tokens the client received").isEqualTo(received);
            await(10, v -> v == 0, "llm_sidecar_stalled_streams");
        } finally {
            signal("CONT");
        }
    }
}
