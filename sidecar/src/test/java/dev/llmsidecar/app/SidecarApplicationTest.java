package dev.llmsidecar.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.ChatModel;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import dev.llmsidecar.support.Scrape;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The packaged application as users run it: proxy on the HTTP port, metrics and health on the management port
 * only, the official OpenAI Java SDK working unchanged through it, and no blocked event loop.
 */
@QuarkusTest
@QuarkusTestResource(SimulatedEngineResource.class)
class SidecarApplicationTest {

    static final List<LogRecord> BLOCKED = new CopyOnWriteArrayList<>();
    static final Handler BLOCKED_THREAD_WATCH = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                BLOCKED.add(record);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @Inject
    Vertx vertx;

    /** The proxy port is served by the sidecar's own data path; its bound port comes from there. */
    @Inject
    dev.llmsidecar.app.ProxyLifecycle proxyLifecycle;

    URL proxy;

    @org.junit.jupiter.api.BeforeEach
    void proxyUrl() throws Exception {
        proxy = java.net.URI.create("http://127.0.0.1:" + proxyLifecycle.port() + "/").toURL();
    }

    @TestHTTPResource(value = "/metrics", management = true)
    URL metrics;

    @TestHTTPResource(value = "/health/ready", management = true)
    URL ready;

    @TestHTTPResource(value = "/llm", management = true)
    URL liveStats;

    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(java.time.Duration.ofSeconds(5)).build();

    @BeforeAll
    static void watchBlockedThreads() {
        Logger.getLogger("io.vertx.core.impl.BlockedThreadChecker").addHandler(BLOCKED_THREAD_WATCH);
    }

    @AfterAll
    static void noEventLoopWasBlocked() {
        Logger.getLogger("io.vertx.core.impl.BlockedThreadChecker").removeHandler(BLOCKED_THREAD_WATCH);
        assertThat(BLOCKED).extracting(LogRecord::getMessage).isEmpty();
    }

    String get(URL url) throws Exception {
        return http.send(HttpRequest.newBuilder(url.toURI()).timeout(java.time.Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    OpenAIClient openAi() {
        return OpenAIOkHttpClient.builder().baseUrl(proxy.toString() + "v1").apiKey("sk-test-not-a-secret").build();
    }

    @Test
    void officialOpenAiJavaClientStreamsAndCompletesThroughTheSidecar() throws Exception {
        long streamsBefore = streamsInTheTtftWindow(); // of other tests (a TGI stream is the served model's too)
        OpenAIClient client = openAi();
        ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
                .model(ChatModel.of("sim-llama-8b")).addUserMessage("hello").maxCompletionTokens(6).build();
        // twice: the first stream teaches the sidecar the engine's layout, the second has include_usage turned on
        for (int i = 0; i < 2; i++) {
            StringBuilder text = new StringBuilder();
            try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params)) {
                stream.stream().forEach(chunk -> {
                    assertThat(chunk.usage()).as("no usage the client did not ask for").isEmpty();
                    chunk.choices().forEach(c -> c.delta().content().ifPresent(text::append));
                });
            }
            assertThat(text.toString()).isEqualTo("The quick brown fox jumps over");
        }

        ChatCompletion whole = client.chat().completions().create(params);
        assertThat(whole.choices().get(0).message().content()).contains("The quick brown fox jumps over");
        assertThat(whole.usage().orElseThrow().completionTokens()).isEqualTo(6);

        Completion completion = client.completions().create(CompletionCreateParams.builder()
                .model("sim-llama-8b").prompt("Once").maxTokens(3L).build());
        assertThat(completion.choices().get(0).text()).isEqualTo("The quick brown");

        Scrape s = new Scrape(get(metrics));
        assertThat(s.sum("llm_sidecar_requests_total", "model", "sim-llama-8b", "outcome", "ok")).isGreaterThanOrEqualTo(3);
        assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count", "streaming", "true")).isGreaterThanOrEqualTo(1);
        assertThat(s.sum("llm_sidecar_usage_chunks_stripped_total")).isGreaterThanOrEqualTo(1);

        io.vertx.core.json.JsonObject live = new io.vertx.core.json.JsonObject(get(liveStats));
        assertThat(live.getInteger("in_flight")).isZero();
        io.vertx.core.json.JsonObject ttft = live.getJsonObject("models").getJsonObject("sim-llama-8b")
                .getJsonObject("ttft").getJsonObject("1m");
        // the two streams; the whole response that did not stream is not in the TTFT window (its TTFT is its E2E)
        assertThat(ttft.getLong("count")).isEqualTo(streamsBefore + 2);
        assertThat(ttft.getDouble("p50")).isPositive();
    }

    long streamsInTheTtftWindow() throws Exception {
        io.vertx.core.json.JsonObject model = new io.vertx.core.json.JsonObject(get(liveStats)).getJsonObject("models")
                .getJsonObject("sim-llama-8b");
        return model == null ? 0 : model.getJsonObject("ttft").getJsonObject("1m").getLong("count");
    }

    @Test
    void ttftBucketsCarryTheTraceIdOfTheRequestAsOpenMetricsExemplar() throws Exception {
        // the test profile turns OpenTelemetry on without exporting; the client's trace continues in the sidecar
        String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        String body = "{\"model\":\"sim-llama-8b\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        HttpResponse<String> streamed = http.send(HttpRequest.newBuilder(URI.create(proxy + "v1/chat/completions")).timeout(java.time.Duration.ofSeconds(30))
                .header("content-type", "application/json").header("traceparent", "00-" + trace + "-00f067aa0ba902b7-01")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(streamed.statusCode()).isEqualTo(200);
        String openMetrics = http.send(HttpRequest.newBuilder(metrics.toURI()).timeout(java.time.Duration.ofSeconds(30))
                // what Prometheus sends with exemplar storage on
                .header("accept", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                        + "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1").build(),
                HttpResponse.BodyHandlers.ofString()).body();
        // buckets only: Prometheus < 2.43 rejects a scrape with an exemplar on a _count line
        assertThat(openMetrics.lines().filter(l -> l.contains("_count{") && l.contains(" # {"))).isEmpty();
        assertThat(openMetrics.lines().filter(l -> l.startsWith("gen_ai_server_time_to_first_token_seconds_bucket{")
                && l.contains("model=\"sim-llama-8b\"") && l.contains("# {span_id=\"")
                && l.contains("trace_id=\"" + trace + "\"}"))).as(openMetrics).isNotEmpty();
    }

    @Test
    void theEnginesOwnMetricsAreScrapedAndNormalised() throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        Scrape s = new Scrape(get(metrics));
        while (s.sum("llm_sidecar_engine_up") < 1 && System.nanoTime() < deadline) {
            Thread.sleep(100);
            s = new Scrape(get(metrics));
        }
        assertThat(s.sum("llm_sidecar_engine_up")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_engine_info", "engine", "vllm")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_engine_requests_waiting")).isZero();
        // the engine's phase histograms, with vLLM's own bounds (le="0.3" is vLLM's first)
        assertThat(s.has("llm_sidecar_engine_phase_duration_seconds_bucket", "phase", "queue", "le", "0.3")).isTrue();
        // and /q/llm says the same
        io.vertx.core.json.JsonObject live = new io.vertx.core.json.JsonObject(get(liveStats));
        assertThat(live.getJsonObject("engine").getBoolean("up")).isTrue();
        assertThat(live.getJsonObject("engine").getString("kind")).isEqualTo("vllm");
        assertThat(live.getJsonObject("engine").getDouble("requests_waiting")).isZero();
        // the figures' age: scraped every 0.2 s here (the test profile), under 10 s on any machine
        assertThat(live.getJsonObject("engine").getDouble("scrape_age_seconds")).isBetween(0.0, 10.0);
        assertThat(s.sum("llm_sidecar_engine_scrape_age_seconds")).isBetween(0.0, 10.0);
        assertThat(live.getJsonObject("saturation").getJsonArray("bands")).isNotNull();
    }

    @Test
    void requestsThatNameNoModelCarryTheOneTheEngineServes() throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        io.vertx.core.json.JsonObject engine = new io.vertx.core.json.JsonObject(get(liveStats)).getJsonObject("engine");
        while (engine.getJsonArray("served_models").isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(100);
            engine = new io.vertx.core.json.JsonObject(get(liveStats)).getJsonObject("engine");
        }
        assertThat(engine.getJsonArray("served_models").getList()).containsExactly("sim-llama-8b");
        String[] tgiSeries = {"model", "sim-llama-8b", "operation", "text_completion", "streaming", "true"};
        double before = new Scrape(get(metrics)).sum("llm_sidecar_requests_total", tgiSeries);
        HttpResponse<String> tgi = http.send(HttpRequest.newBuilder(URI.create(proxy + "generate_stream")).timeout(java.time.Duration.ofSeconds(30))
                .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                        "{\"inputs\":\"What is Deep Learning?\",\"parameters\":{\"max_new_tokens\":4}}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(tgi.statusCode()).isEqualTo(200);
        Scrape s = new Scrape(get(metrics));
        while (s.sum("llm_sidecar_requests_total", tgiSeries) < before + 1 && System.nanoTime() < deadline) {
            Thread.sleep(20);
            s = new Scrape(get(metrics));
        }
        assertThat(s.sum("llm_sidecar_requests_total", tgiSeries)).isEqualTo(before + 1);
        assertThat(s.sum("llm_sidecar_engine_model_probes_total", "result", "ok")).isGreaterThanOrEqualTo(1);
    }

    @Test
    void metricsAndHealthAreOnlyOnTheManagementPort() throws Exception {
        assertThat(metrics.getPort()).isNotEqualTo(proxy.getPort());
        assertThat(get(metrics)).contains("llm_sidecar_requests_in_flight");
        assertThat(get(ready)).contains("\"status\": \"UP\"");
        // on the proxy port, /q/metrics is just another path: it goes to the engine, which has none
        HttpResponse<String> viaProxy = http.send(HttpRequest.newBuilder(URI.create(proxy + "q/metrics")).timeout(java.time.Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(viaProxy.statusCode()).isEqualTo(404);
        assertThat(viaProxy.body()).contains("not found: /q/metrics");
    }

    @Test
    void theProxyRunsOnTheEpollTransportOnLinux() {
        // the streams above went through it; NIO is only the fallback where epoll cannot load
        assertThat(System.getProperty("os.name")).startsWith("Linux");
        assertThat(vertx.isNativeTransportEnabled()).as("native transport (cause: %s)", vertx.unavailableNativeTransportCause())
                .isTrue();
    }
}
