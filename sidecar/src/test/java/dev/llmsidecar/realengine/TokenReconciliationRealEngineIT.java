package dev.llmsidecar.realengine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.ops.PrometheusServer;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.Processes;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The two billing sources side by side on a real engine: llama-server behind the packaged sidecar, with the shipped
 * reconciliation rules in a real Prometheus. Requests through the sidecar (streamed, with the usage the sidecar asks
 * for, and whole) are counted the same by the sidecar ({@code llm_sidecar_tokens_total}) and by the engine's own
 * counters that the engine scrape passes through, token for token, so the drift rule reads 0; requests sent to the
 * engine around the sidecar then show as positive drift in both token types.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TokenReconciliationRealEngineIT {

    Processes.Running engine;
    Processes.Sidecar sidecar;
    PrometheusServer prometheus;
    int enginePort;
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    void start() throws Exception {
        enginePort = Processes.freePort();
        engine = Processes.llamaServer(enginePort);
        sidecar = new Processes.Sidecar("http://127.0.0.1:" + enginePort, Map.of(),
                Map.of("sidecar.engine.scrape-interval", "PT0.5S"));
    }

    /** Prometheus with the shipped rules, scraping the sidecar every second from now on. */
    void startPrometheus() throws Exception {
        prometheus = PrometheusServer.withShippedRules(sidecar.managementPort, "it", "reconcile-it");
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
                engine.close();
            }
        }
    }

    String post(int port, String body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/v1/chat/completions")).timeout(Duration.ofSeconds(60)).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }

    static String request(int i, boolean stream) {
        return "{\"model\":\"tiny\",\"temperature\":0,\"seed\":" + i + ",\"max_tokens\":" + (8 + 5 * i)
                + ",\"ignore_eos\":true,\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":"
                + "\"Count the stones on the path number " + i + ", one by one.\"}]}";
    }

    Scrape scrape() throws Exception {
        return new Scrape(sidecar.metrics());
    }

    /** The engine's counters as the sidecar last read them: settled once two reads 1.5 s apart agree. */
    double[] settledEngineCounts() throws Exception {
        double[] last = {Double.NaN, Double.NaN};
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            Scrape s = scrape();
            double[] now = {s.sum("llm_sidecar_engine_generation_tokens_total"),
                    s.sum("llm_sidecar_engine_prompt_tokens_total")};
            if (now[0] == last[0] && now[1] == last[1] && !Double.isNaN(now[0])) {
                return now;
            }
            last = now;
            Thread.sleep(1500);
        }
        throw new AssertionError("the engine's counters did not settle: " + last[0] + ", " + last[1]);
    }

    /** Waits (at most 60 s) until {@code promql} has a result: Prometheus has scraped what it needs. */
    void awaitInPrometheus(String promql) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            JsonArray r = PrometheusServer.result(prometheus.query(promql));
            if (r != null && !r.isEmpty()) {
                return;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("Prometheus never had " + promql + "\n" + prometheus.log());
    }

    /** The drift rule's value for {@code tokenType}, once Prometheus has evaluated it on the latest scrape. */
    double drift(String tokenType, double atLeastEngineRate) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        JsonObject answer = null;
        while (System.nanoTime() < deadline) {
            JsonObject engineRate = prometheus.query("llm_sidecar:engine_generation_tokens:rate1h");
            JsonArray er = PrometheusServer.result(engineRate);
            answer = prometheus.query("llm_sidecar:token_drift:ratio_rate1h{token_type=\"" + tokenType + "\"}");
            JsonArray r = PrometheusServer.result(answer);
            if (er != null && !er.isEmpty() && r != null && !r.isEmpty()
                    && Double.parseDouble(er.getJsonObject(0).getJsonArray("value").getString(1)) >= atLeastEngineRate) {
                return Double.parseDouble(r.getJsonObject(0).getJsonArray("value").getString(1));
            }
            Thread.sleep(500);
        }
        throw new AssertionError("no drift for " + tokenType + ": " + answer + "\nsidecar "
                + prometheus.query("llm_sidecar:output_tokens:rate1h") + "\nengine "
                + prometheus.query("llm_sidecar:engine_generation_tokens:rate1h") + "\nraw "
                + prometheus.query("llm_sidecar_engine_generation_tokens_total") + "\n"
                + prometheus.query("llm_sidecar_tokens_total") + "\n" + prometheus.log());
    }

    @Test
    void throughTheSidecarBothSourcesAgreeAndASideDoorShowsAsDrift() throws Exception {
        // one request first, so that the sidecar's token series exist (from 0) before the measured ones: a counter
        // that first appears with a value already in it would hide that value from rate()
        post(sidecar.proxyPort, request(0, false));
        double[] before = settledEngineCounts();
        Scrape first = scrape();
        double outputBefore = first.sum("llm_sidecar_tokens_total", "token_type", "output");
        double inputBefore = first.sum("llm_sidecar_tokens_total", "token_type", "input");
        // Prometheus from here: the rules' hour starts with both sources' series already there
        startPrometheus();
        awaitInPrometheus("count_over_time(llm_sidecar_engine_generation_tokens_total[1m]) >= 3");
        awaitInPrometheus("count_over_time(llm_sidecar_tokens_total{token_type=\"output\"}[1m]) >= 3");
        for (int i = 0; i < 6; i++) {
            post(sidecar.proxyPort, request(i, i % 2 == 0));
        }
        double[] after = settledEngineCounts();
        Scrape s = scrape();
        double sidecarOutput = s.sum("llm_sidecar_tokens_total", "token_type", "output") - outputBefore;
        double sidecarInput = s.sum("llm_sidecar_tokens_total", "token_type", "input") - inputBefore;
        System.out.printf("through the sidecar: output %s (engine %s), input %s (engine %s)%n", sidecarOutput,
                after[0] - before[0], sidecarInput, after[1] - before[1]);
        assertThat(sidecarOutput).as("output: the sidecar's count").isPositive().isEqualTo(after[0] - before[0]);
        assertThat(sidecarInput).as("input: the sidecar's count").isPositive().isEqualTo(after[1] - before[1]);
        Thread.sleep(3000); // Prometheus scrapes the settled counters and evaluates the rules
        double output = drift("output", 0);
        double input = drift("input", 0);
        System.out.printf("drift through the sidecar: output %.4f, input %.4f%n", output, input);
        assertThat(output).isCloseTo(0, org.assertj.core.data.Offset.offset(0.02));
        assertThat(input).isCloseTo(0, org.assertj.core.data.Offset.offset(0.02));

        // the same again, straight to the engine: the engine counts them, the sidecar never sees them
        for (int i = 0; i < 6; i++) {
            post(enginePort, request(i, i % 2 == 0));
        }
        double[] aside = settledEngineCounts();
        assertThat(scrape().sum("llm_sidecar_tokens_total", "token_type", "output"))
                .isEqualTo(outputBefore + sidecarOutput);
        double expectedOutput = (aside[0] - after[0]) / (aside[0] - before[0]);
        Thread.sleep(3000);
        double outputAside = drift("output", 0);
        double inputAside = drift("input", 0);
        System.out.printf("drift with a side door: output %.4f (the engine's own share %.4f), input %.4f%n",
                outputAside, expectedOutput, inputAside);
        assertThat(outputAside).as("output drift, half the tokens around the sidecar")
                .isCloseTo(expectedOutput, org.assertj.core.data.Offset.offset(0.1));
        assertThat(inputAside).as("input drift").isGreaterThan(0.2);
    }
}
