package dev.llmsidecar.realengine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.OtlpReceiver;
import dev.llmsidecar.testkit.Processes;
import dev.llmsidecar.testkit.RawHttp;
import io.vertx.core.Vertx;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The packaged sidecar in front of a real llama-server (random weights on a real tokenizer, see
 * ../shared/reference/real-engine.md), with a real OTLP receiver: byte identity with a direct request, timings against
 * an independent client, the prefix cache, cancellation freeing the engine's slot, the engine scrape, bursts after
 * idle gaps, and SIGTERM. Runs in the integration-test phase, after the jar is packaged.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RealEngineIT {

    Vertx vertx;
    OtlpReceiver otlp;
    Processes.Running engine;
    int enginePort;
    Processes.Sidecar sidecar;

    @BeforeAll
    void start() throws Exception {
        vertx = Vertx.vertx();
        otlp = new OtlpReceiver(vertx);
        enginePort = Processes.freePort();
        engine = Processes.llamaServer(enginePort);
        sidecar = new Processes.Sidecar("http://127.0.0.1:" + enginePort, Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf",
                "OTEL_BSP_SCHEDULE_DELAY", "100", "OTEL_METRIC_EXPORT_INTERVAL", "1000"));
    }

    @AfterAll
    void stop() throws Exception {
        try {
            if (sidecar != null) {
                sidecar.close();
            }
        } finally {
            if (engine != null) {
                engine.close();
            }
            otlp.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    // ---- an independent client: raw HTTP/1.1 over a socket, its own clock ----

    /** What the client saw: raw entity, when it sent, when the first content token and the last byte arrived. */
    record Seen(int status, String head, String entity, long sentNanos, long firstTokenNanos, long endNanos) {
        double ttftMs() {
            return (firstTokenNanos - sentNanos) / 1e6;
        }

        double e2eMs() {
            return (endNanos - sentNanos) / 1e6;
        }
    }

    static String chat(String content, int maxTokens, String usage, boolean stream) {
        return "{\"model\":\"tiny\",\"temperature\":0,\"seed\":1,\"max_tokens\":" + maxTokens + ",\"stream\":" + stream
                + usage + ",\"messages\":[{\"role\":\"system\",\"content\":\"You are a terse assistant.\"},"
                + "{\"role\":\"user\",\"content\":\"" + content + "\"}]}";
    }

    static final java.util.regex.Pattern FIRST_CONTENT = java.util.regex.Pattern.compile("\"content\":\"[^\"]");

    /** The same reader as the reference's ({@link RawHttp}): what it read and when. */
    static Seen post(int port, String path, String body, Map<String, String> headers) throws Exception {
        RawHttp.Response r = RawHttp.post(port, path, body, headers);
        return new Seen(r.status(), r.head(), r.entity(), r.sentNanos(), r.firstArrival(FIRST_CONTENT),
                r.endNanos());
    }

    /** What differs per request by design: the id, the clock, the engine's own timings. */
    static String masked(String entity) {
        return entity.replaceAll("\"id\":\"[^\"]*\"", "\"id\":\"-\"").replaceAll("\"created\":\\d+", "\"created\":0")
                .replaceAll("\"timings\":\\{[^}]*\\}", "\"timings\":{}");
    }

    // ---- the suite ----

    @Test
    void bytesAreIdenticalToADirectRequestForEveryUsageChoice() throws Exception {
        Scrape before = new Scrape(sidecar.metrics());
        String[] usages = {"", ",\"stream_options\":{\"include_usage\":true}",
            ",\"stream_options\":{\"include_usage\":false}"};
        for (String path : new String[] {"/v1/chat/completions", "/v1/completions"}) {
            for (boolean stream : new boolean[] {true, false}) {
                for (String usage : usages) {
                    if (!stream && !usage.isEmpty()) {
                        continue;
                    }
                    String body = path.endsWith("chat/completions") ? chat("Name three colours.", 24, usage, stream)
                            : "{\"model\":\"tiny\",\"temperature\":0,\"seed\":1,\"max_tokens\":24,\"stream\":" + stream
                                    + usage + ",\"prompt\":\"Once upon a time\"}";
                    // the same prompt first, so that direct and proxied requests find the same prefix cache
                    post(enginePort, path, body, Map.of());
                    Seen direct = post(enginePort, path, body, Map.of());
                    Seen proxied = post(sidecar.proxyPort, path, body, Map.of());
                    assertThat(proxied.status()).isEqualTo(200).isEqualTo(direct.status());
                    assertThat(masked(proxied.entity())).as("%s stream=%s %s", path, stream, usage)
                            .isEqualTo(masked(direct.entity()));
                    if (stream) {
                        assertThat(proxied.entity()).endsWith("data: [DONE]\n\n");
                        if (path.endsWith("chat/completions")) {
                            // a usage-only chunk only for a client that asked for one (llama-server's completions
                            // put usage into the final chunk, asked or not)
                            assertThat(proxied.entity().contains("\"choices\":[]")).isEqualTo(usage.contains("true"));
                        }
                    }
                }
            }
        }
        // llama-server reports exact counts in its timings unprompted: the sidecar learned that from the first stream
        // and never injects
        double skippedBefore = new Scrape(sidecar.metrics()).sum("llm_sidecar_usage_injection_skipped_total",
                "reason", "engine_reports_usage");
        assertThat(post(sidecar.proxyPort, "/v1/chat/completions", chat("Again.", 8, "", true), Map.of()).status())
                .isEqualTo(200);
        Scrape s = new Scrape(sidecar.metrics());
        assertThat(s.sum("llm_sidecar_usage_injection_skipped_total", "reason", "engine_reports_usage"))
                .isEqualTo(skippedBefore + 1);
        assertThat(s.sum("llm_sidecar_usage_injected_total")).isZero();
        // every one of them counted exactly, from usage or the engine's timings, none from chunks
        assertThat(s.sum("llm_sidecar_output_token_source_total", "source", "chunks"))
                .isEqualTo(before.sum("llm_sidecar_output_token_source_total", "source", "chunks"));
    }

    /** The sidecar's timings against an independent client, per request ({@link RealEngineTiming}). */
    @Test
    void theSidecarsTimingsAgreeWithAnIndependentClientPerRequest() throws Exception {
        RealEngineTiming.runAndCheck(enginePort, sidecar.proxyPort, otlp, RealEngineTiming.BOUNDS);
    }

    /**
     * On an engine and a sidecar of its own: the prefix cache is the engine's state, and the hit ratio the sidecar
     * derives from the engine's counters covers whatever ran between two scrapes, so traffic of another test (or
     * prompts sharing little with each other in one scrape window) would decide the figure.
     */
    @Test
    void nativeCompletionRequestsCarryTheModelTheEngineServes() throws Exception {
        // a /completion request names no model; llama-server (-a tiny) names its own at /v1/models
        String[] series = {"model", "tiny", "operation", "text_completion", "streaming", "true"};
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (new Scrape(sidecar.metrics()).sum("llm_sidecar_engine_model_probes_total", "result", "ok") < 1
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        double before = new Scrape(sidecar.metrics()).sum("llm_sidecar_requests_total", series);
        Seen seen = post(sidecar.proxyPort, "/completion",
                "{\"prompt\":\"Once upon a time\",\"n_predict\":4,\"stream\":true}", Map.of());
        assertThat(seen.status()).isEqualTo(200);
        while (new Scrape(sidecar.metrics()).sum("llm_sidecar_requests_total", series) < before + 1
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(new Scrape(sidecar.metrics()).sum("llm_sidecar_requests_total", series)).isEqualTo(before + 1);
    }

    @Test
    void repeatedSystemPromptsReachThePrefixCacheSeriesAndTheEngineScrape() throws Exception {
        int port = Processes.freePort();
        try (Processes.Running ownEngine = Processes.llamaServer(port);
                Processes.Sidecar own = new Processes.Sidecar("http://127.0.0.1:" + port,
                        Map.of("SIDECAR_ENGINE_SCRAPE_INTERVAL", "PT0.25S"))) {
            String system = "You are a careful assistant. ".repeat(40);
            for (int i = 0; i < 6; i++) {
                String body = "{\"model\":\"tiny\",\"temperature\":0,\"max_tokens\":8,\"stream\":true,"
                        + "\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"system\",\"content\":\""
                        + system + "\"},{\"role\":\"user\",\"content\":\"question " + i + "\"}]}";
                Seen s = post(own.proxyPort, "/v1/chat/completions", body, Map.of());
                assertThat(s.entity()).contains("\"cached_tokens\":");
            }
            Scrape s = new Scrape(own.metrics());
            // the first request filled the cache; the five after it found the system prompt there
            assertThat(s.sum("llm_sidecar_tokens_total", "model", "tiny", "token_type", "cached_input"))
                    .isGreaterThan(5 * 200);
            assertThat(s.sum("llm_sidecar_time_to_first_token_by_cache_seconds_count", "model", "tiny", "cache",
                    "hit")).isEqualTo(5);
            // the engine's own view, normalised from this llama.cpp version's names
            awaitNumber(own, "llm_sidecar_engine_requests_waiting", () -> { });
            s = new Scrape(own.metrics());
            assertThat(s.sum("llm_sidecar_engine_up")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_engine_info", "engine", "llamacpp")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_engine_requests_running")).isNotNaN();
            // the hit ratio of a scrape window in which every prompt repeats a cached one: the prompt is cached
            // first, then a window without traffic passes (the ratio is NaN then), so nothing uncached is counted
            String repeated = chat(system, 4, "", true);
            post(own.proxyPort, "/v1/chat/completions", repeated, Map.of());
            awaitIdleWindowAfterNow(own, "llm_sidecar_engine_prefix_cache_hit_ratio");
            double hitRatio = awaitNumber(own, "llm_sidecar_engine_prefix_cache_hit_ratio",
                    () -> post(own.proxyPort, "/v1/chat/completions", repeated, Map.of()));
            assertThat(hitRatio).isBetween(0.9, 1.0);
        }
    }

    /**
     * Waits until the gauge is NaN in a scrape window that began after this call: a window without traffic, so the
     * traffic sent before the call has been counted in an earlier one (at most 15 s). A NaN already showing may be
     * from a window before that traffic reached the engine's counters (CI saw the next window then hold both the
     * uncached first request and the cached one after it: 269 of 540 tokens), hence three scrapes first: the second
     * one after the call began after the first had ended, so its window ends after the call.
     */
    static void awaitIdleWindowAfterNow(Processes.Sidecar sidecar, String gauge) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        String okScrapes = "llm_sidecar_engine_scrapes_total";
        double scrapes = new Scrape(sidecar.metrics()).sum(okScrapes, "result", "ok");
        while (true) {
            Scrape s = new Scrape(sidecar.metrics());
            if (s.sum(okScrapes, "result", "ok") >= scrapes + 3 && Double.isNaN(s.sum(gauge))) {
                return;
            }
            assertThat(System.nanoTime()).as(gauge + " never NaN after three scrapes").isLessThan(deadline);
            Thread.sleep(100);
        }
    }

    /** The gauge's value once it is a number (traffic between two scrapes makes it one). */
    static double awaitNumber(Processes.Sidecar sidecar, String gauge, ThrowingRunnable traffic) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() < deadline) {
            double v = new Scrape(sidecar.metrics()).sum(gauge);
            if (!Double.isNaN(v)) {
                return v;
            }
            traffic.run();
            Thread.sleep(300);
        }
        throw new AssertionError(gauge + " stayed NaN");
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void aClientThatGoesAwayFreesTheEnginesSlotAtOnce() throws Exception {
        String body = chat("Write a very long story.", 4000, "", true);
        try (Socket s = new Socket("127.0.0.1", sidecar.proxyPort)) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            s.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json"
                    + "\r\ncontent-length: " + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().write(bytes);
            byte[] buf = new byte[4096];
            int total = 0;
            while (total < 2000) {
                total += s.getInputStream().read(buf); // tokens are flowing
            }
            assertThat(engineGauge("llamacpp:requests_processing")).isEqualTo(1);
        }
        long closed = System.nanoTime();
        while (engineGauge("llamacpp:requests_processing") != 0) {
            assertThat((System.nanoTime() - closed) / 1e9).as("slot freed").isLessThan(2.0);
            Thread.sleep(20);
        }
        double predicted = engineGauge("llamacpp:tokens_predicted_total");
        Thread.sleep(300);
        assertThat(engineGauge("llamacpp:tokens_predicted_total")).as("generation stopped").isEqualTo(predicted);
        assertThat(new Scrape(sidecar.metrics()).sum("llm_sidecar_requests_total", "outcome", "client_cancelled"))
                .isGreaterThanOrEqualTo(1);
    }

    double engineGauge(String name) throws Exception {
        return new Scrape(Processes.get("http://127.0.0.1:" + enginePort + "/metrics").body()).sum(name);
    }

    @Test
    void burstsAfterIdleGapsLoseNoRequest() throws Exception {
        // llama-server closes every connection after a streamed response without saying so, and keep-alive ones
        // after 5 s idle: a reused connection may be closed as a request goes out; the sidecar sends it again
        double[] gapsSeconds = {0.5, 1.0, 2.0, 3.0, 4.0, 4.9, 5.5, 6.0, 0.7, 4.5};
        java.net.http.HttpClient client = java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        AtomicInteger ok = new AtomicInteger();
        Map<String, Integer> failures = new ConcurrentHashMap<>();
        double retriesBefore = new Scrape(sidecar.metrics()).sum("llm_sidecar_upstream_retries_total");
        try {
            for (double gap : gapsSeconds) {
                Thread.sleep((long) (gap * 1000));
                List<CompletableFuture<Void>> burst = new ArrayList<>();
                for (int i = 0; i < 12; i++) {
                    String body = chat("burst " + i, 8, "", i % 2 == 0);
                    burst.add(CompletableFuture.runAsync(() -> {
                        try {
                            HttpResponse<String> r = client.send(HttpRequest.newBuilder(
                                    URI.create("http://127.0.0.1:" + sidecar.proxyPort + "/v1/chat/completions"))
                                    .timeout(Duration.ofSeconds(30)).header("content-type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                                    HttpResponse.BodyHandlers.ofString());
                            if (r.statusCode() == 200) {
                                ok.incrementAndGet();
                            } else {
                                failures.merge(r.statusCode() + " " + r.headers().firstValue("x-llm-sidecar-error")
                                        .orElse(""), 1, Integer::sum);
                            }
                        } catch (Exception e) {
                            failures.merge(e.toString(), 1, Integer::sum);
                        }
                    }, pool));
                }
                CompletableFuture.allOf(burst.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        double retries = new Scrape(sidecar.metrics()).sum("llm_sidecar_upstream_retries_total") - retriesBefore;
        System.out.printf("bursts after idle gaps: %d ok, failures %s, %s upstream retries%n", ok.get(), failures,
                retries);
        assertThat(failures).isEmpty();
        assertThat(ok.get()).isEqualTo(12 * gapsSeconds.length);
    }

    @Test
    void readinessFollowsTheEngineThroughModelLoadAndACrash() throws Exception {
        int port = Processes.freePort();
        try (Processes.Sidecar follower = new Processes.Sidecar("http://127.0.0.1:" + port, Map.of(
                "SIDECAR_ENGINE_READINESS_FOLLOWS_ENGINE", "true", "SIDECAR_ENGINE_HEALTH_INTERVAL", "PT0.2S"))) {
            String ready = "http://127.0.0.1:" + follower.managementPort + "/q/health/ready";
            // no engine yet (a model still loading): no traffic, and not "down"
            assertThat(Processes.get(ready).statusCode()).isEqualTo(503);
            Scrape loading = new Scrape(follower.metrics());
            assertThat(loading.sum("llm_sidecar_engine_started")).isZero();
            Processes.Running late = Processes.llamaServer(port);
            try {
                awaitStatus(ready, 200);
                Scrape up = new Scrape(follower.metrics());
                assertThat(up.sum("llm_sidecar_engine_started")).isEqualTo(1);
                assertThat(up.sum("llm_sidecar_engine_ready")).isEqualTo(1);
            } finally {
                late.close();
            }
            // the engine went down: out of rotation, and "started" stays 1 (down, not loading)
            awaitStatus(ready, 503);
            Scrape down = new Scrape(follower.metrics());
            assertThat(down.sum("llm_sidecar_engine_ready")).isZero();
            assertThat(down.sum("llm_sidecar_engine_started")).isEqualTo(1);
        }
    }

    static void awaitStatus(String url, int status) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int last = -1;
        while (System.nanoTime() < deadline) {
            last = Processes.get(url).statusCode();
            if (last == status) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError(url + " answered " + last + ", not " + status);
    }

    @Test
    void sigtermTakesThePodOutOfRotationAndLetsOpenStreamsFinish() throws Exception {
        try (Processes.Sidecar draining = new Processes.Sidecar("http://127.0.0.1:" + enginePort, Map.of())) {
            String ready = "http://127.0.0.1:" + draining.managementPort + "/q/health/ready";
            assertThat(Processes.get(ready).statusCode()).isEqualTo(200);
            CompletableFuture<Seen> open = CompletableFuture.supplyAsync(() -> {
                try {
                    return post(draining.proxyPort, "/v1/chat/completions", chat("Tell a long story.", 600, "", true),
                            Map.of());
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (new Scrape(draining.metrics()).sum("llm_sidecar_requests_in_flight") < 1) {
                assertThat(System.nanoTime()).isLessThan(deadline);
                Thread.sleep(10);
            }
            long term = System.nanoTime();
            draining.running.process.destroy(); // SIGTERM
            // readiness goes DOWN at once, while the listener still answers
            int status = 0;
            while (status != 503 && System.nanoTime() - term < TimeUnit.SECONDS.toNanos(2)) {
                status = Processes.get(ready).statusCode();
            }
            assertThat(status).isEqualTo(503);
            // the management port stays up for the whole drain: readiness keeps answering DOWN and Prometheus keeps
            // scraping (before, Quarkus closed the port within 70 ms of the signal and the drain went unobserved)
            assertThat(open).as("the 600-token stream is still running").isNotDone();
            assertThat(Processes.get(ready).statusCode()).isEqualTo(503);
            assertThat(new Scrape(draining.metrics()).sum("llm_sidecar_requests_in_flight")).isEqualTo(1);
            Seen refused = post(draining.proxyPort, "/v1/chat/completions", chat("hi", 4, "", true), Map.of());
            assertThat(refused.status()).isEqualTo(503);
            assertThat(refused.head()).contains("x-llm-sidecar-error: shutting_down");
            Seen finished = open.get(60, TimeUnit.SECONDS);
            assertThat(finished.entity()).endsWith("data: [DONE]\n\n");
            assertThat(draining.running.process.waitFor(10, TimeUnit.SECONDS)).isTrue();
            System.out.printf("SIGTERM: open stream ended %.0f ms after the signal, process exited %.0f ms after it%n",
                    (finished.endNanos() - term) / 1e6, (System.nanoTime() - term) / 1e6);
        }
        // nothing open: the sidecar exits at once, not after the 25 s grace
        try (Processes.Sidecar idle = new Processes.Sidecar("http://127.0.0.1:" + enginePort, Map.of())) {
            assertThat(post(idle.proxyPort, "/v1/chat/completions", chat("hi", 4, "", true), Map.of()).status())
                    .isEqualTo(200);
            long term = System.nanoTime();
            idle.running.process.destroy();
            assertThat(idle.running.process.waitFor(10, TimeUnit.SECONDS)).isTrue();
            double seconds = (System.nanoTime() - term) / 1e9;
            System.out.printf("SIGTERM with nothing open: exited in %.2f s%n", seconds);
            assertThat(seconds).isLessThan(5);
            assertThat(idle.running.lines).noneMatch(l -> l.contains("draining"));
        }
    }
}
