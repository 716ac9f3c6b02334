package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.ServedRequest;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every wire format through the proxy against the simulated engine speaking it, on a known schedule (first
 * token 80 ms after arrival, then one token every 10 ms, 6 tokens, the first 2 of them reasoning where the
 * format carries reasoning): the client gets exactly the bytes the engine wrote, and the exported series match.
 */
class WireFormatsEndToEndTest {

    static final EngineBehaviour SCHEDULE = EngineBehaviour.defaults()
            .withTiming(Duration.ofMillis(80), Duration.ofMillis(10)).withFixedCreated(1_700_000_000L)
            .withCachedTokenRatio(0.5);
    /** The first output token's text, as a JSON string, in every format. */
    static final String FIRST_TOKEN = "\"The\"";
    /** The third token's text: the first answer token when 2 are reasoning. */
    static final String FIRST_ANSWER = "\" brown\"";

    /**
     * @param reasoning the format carries reasoning, so 2 of the 6 tokens are sent as reasoning
     * @param engineTtft the format reports the engine's own first-token time (llama.cpp prompt_ms, Ollama durations)
     */
    /** The names these requests send, pinned: a name takes a label slot once the engine answered or listed it. */
    static final Map<String, String> NAMED = ProxyFixture.pinned("m-chat", "m-resp", "m-claude", "m-ollama", "m-embed",
            "m-bad");

    record Case(String name, String path, String body, String model, String operation, boolean stream,
            boolean reasoning, boolean engineTtft) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        String messages = "\"messages\":[{\"role\":\"user\",\"content\":\"Say hi ü\"}]";
        return Stream.of(
                new Case("openai_chat", "/v1/chat/completions", "{\"model\":\"m-chat\",\"stream\":true,\"max_tokens\":6,"
                        + "\"stream_options\":{\"include_usage\":true}," + messages + "}", "m-chat", "chat", true, true, false),
                new Case("openai_responses", "/v1/responses", "{\"model\":\"m-resp\",\"input\":\"Say hi\",\"stream\":true,"
                        + "\"max_output_tokens\":6}", "m-resp", "chat", true, true, false),
                new Case("openai_responses json", "/v1/responses", "{\"model\":\"m-resp\",\"input\":\"Say hi\","
                        + "\"max_output_tokens\":6}", "m-resp", "chat", false, true, false),
                new Case("anthropic_messages", "/v1/messages", "{\"model\":\"m-claude\",\"max_tokens\":6,\"stream\":true,"
                        + messages + "}", "m-claude", "chat", true, true, false),
                new Case("anthropic_messages json", "/v1/messages", "{\"model\":\"m-claude\",\"max_tokens\":6," + messages
                        + "}", "m-claude", "chat", false, true, false),
                new Case("ollama chat", "/api/chat", "{\"model\":\"m-ollama\",\"think\":true,\"options\":{\"num_predict\":6},"
                        + messages + "}", "m-ollama", "chat", true, true, true),
                new Case("ollama generate json", "/api/generate", "{\"model\":\"m-ollama\",\"prompt\":\"Why?\",\"stream\":false,"
                        + "\"options\":{\"num_predict\":6}}", "m-ollama", "text_completion", false, true, true),
                new Case("tgi stream", "/generate_stream", "{\"inputs\":\"What is Deep Learning?\",\"parameters\":"
                        + "{\"max_new_tokens\":6}}", "unknown", "text_completion", true, false, false),
                new Case("tgi generate", "/generate", "{\"inputs\":\"What is Deep Learning?\",\"parameters\":"
                        + "{\"max_new_tokens\":6}}", "unknown", "text_completion", false, false, false),
                new Case("llamacpp stream", "/completion", "{\"prompt\":\"Once upon\",\"n_predict\":6,\"stream\":true}",
                        "unknown", "text_completion", true, false, true),
                new Case("llamacpp json", "/completion", "{\"prompt\":\"Once upon\",\"n_predict\":6}", "unknown",
                        "text_completion", false, false, true));
    }

    /** Class loading and JIT of every format's path are not what the schedule checks measure. */
    @BeforeAll
    static void warmUp() {
        try (ProxyFixture f = new ProxyFixture(SCHEDULE, NAMED)) {
            for (int round = 0; round < 2; round++) {
                cases().forEach(c -> assertThat(f.post(f.proxyPort, c.path(), c.body(),
                        Map.of("x-sim-reasoning-tokens", "2")).status()).isEqualTo(200));
            }
        }
    }

    @ParameterizedTest
    @MethodSource("cases")
    void bytesAndMetricsMatchTheSchedule(Case c) {
        try (ProxyFixture f = new ProxyFixture(SCHEDULE, NAMED)) {
            f.engine.recordResponses(true);
            Received r = f.post(f.proxyPort, c.path(), c.body(), Map.of("x-request-id", "e2e",
                    "x-sim-reasoning-tokens", "2"));
            assertThat(r.failure()).isNull();
            assertThat(r.status()).isEqualTo(200);
            List<ServedRequest> served = f.engine.served();
            assertThat(served).hasSize(1);
            ServedRequest engine = served.get(0);
            assertThat(r.body().getBytes()).as("client bytes = engine bytes").isEqualTo(engine.responseBody().getBytes());

            Scrape s = f.scrape();
            String streaming = Boolean.toString(c.stream());
            String[] live = {"model", c.model(), "operation", c.operation(), "streaming", streaming};
            String[] end = {"model", c.model(), "operation", c.operation(), "streaming", streaming, "outcome", "ok"};
            assertThat(s.sum("llm_sidecar_requests_total", end)).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_tokens_total", "model", c.model(), "token_type", "output")).isEqualTo(6);
            assertThat(s.sum("llm_sidecar_tokens_total", "model", c.model(), "token_type", "input")).isPositive();
            assertThat(s.sum("llm_sidecar_output_token_source_total", "source", "usage")).isEqualTo(1);
            assertThat(s.has("llm_sidecar_undecodable_chunks_total")).isFalse();

            double ttft = s.sum("gen_ai_server_time_to_first_token_seconds_sum", live);
            double e2e = s.sum("gen_ai_server_request_duration_seconds_sum", end);
            double engineFirst = (engine.firstTokenSentNanos() - engine.arrivalNanos()) / 1e9;
            double engineLast = (engine.lastTokenSentNanos() - engine.arrivalNanos()) / 1e9;
            double clientEnd = (r.chunkNanos().get(r.chunkNanos().size() - 1) - r.sentNanos()) / 1e9;
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count", live)).isEqualTo(1);
            if (c.stream()) {
                assertThat(engine.tokenChunksSent()).isEqualTo(6);
                // the sidecar's clock starts after the client's and before the engine's, and stops after the engine
                // wrote the chunk and before the client read it: its TTFT and E2E are bracketed by theirs
                double clientFirst = (r.firstReadContaining(FIRST_TOKEN) - r.sentNanos()) / 1e9;
                assertThat(ttft).isBetween(engineFirst, clientFirst);
                assertThat(e2e).isBetween(engineLast, clientEnd);
                assertThat(s.sum("gen_ai_server_time_per_output_token_seconds_count", end)).isEqualTo(1);
                assertThat(s.sum("llm_sidecar_inter_token_latency_seconds_count", end)).isEqualTo(5);
                double reasoningCount = s.sum("llm_sidecar_time_to_first_reasoning_token_seconds_count", live);
                double answer = s.sum("llm_sidecar_time_to_first_answer_token_seconds_sum", live);
                assertThat(s.sum("llm_sidecar_time_to_first_answer_token_seconds_count", live)).isEqualTo(1);
                if (c.reasoning()) {
                    // TTFT is the first of reasoning or answer: here the reasoning token
                    assertThat(reasoningCount).isEqualTo(1);
                    assertThat(s.sum("llm_sidecar_time_to_first_reasoning_token_seconds_sum", live)).isEqualTo(ttft);
                    // the first answer token is the third chunk (two 10 ms intervals later, as far as the engine's
                    // timers keep time on a busy machine: only its order is certain), bracketed like TTFT
                    long[] sent = engine.tokenChunkSentNanos();
                    double engineAnswer = (sent[2] - engine.arrivalNanos()) / 1e9;
                    double clientAnswer = (r.firstReadContaining(FIRST_ANSWER) - r.sentNanos()) / 1e9;
                    assertThat(engineAnswer).isGreaterThan(engineFirst);
                    assertThat(answer).isBetween(engineAnswer, clientAnswer).isGreaterThanOrEqualTo(ttft);
                } else {
                    assertThat(reasoningCount).isZero();
                    assertThat(answer).isEqualTo(ttft);
                }
            } else {
                // non-streaming: TTFT is recorded equal to E2E, labelled streaming="false"
                assertThat(ttft).isEqualTo(e2e);
                assertThat(e2e).isBetween(engineLast, clientEnd);
                assertThat(s.has("llm_sidecar_time_to_first_reasoning_token_seconds_count", live)).isFalse();
            }
            double engineReported = s.sum("llm_sidecar_engine_reported_time_to_first_token_seconds_count");
            if (c.engineTtft()) {
                assertThat(engineReported).isEqualTo(1);
                assertThat(s.sum("llm_sidecar_engine_reported_decode_seconds_count")).isEqualTo(1);
                double engineSide = s.sum("llm_sidecar_engine_reported_time_to_first_token_seconds_sum");
                assertThat(engineSide).isPositive().isLessThanOrEqualTo(ttft + 0.002);
            } else {
                assertThat(engineReported).isZero();
            }
        }
    }

    @org.junit.jupiter.api.Test
    void embeddingsAreTimedAsNonStreamingWithInputTokensOnly() {
        try (ProxyFixture f = new ProxyFixture(SCHEDULE, NAMED)) {
            f.engine.recordResponses(true);
            Received r = f.post(f.proxyPort, "/v1/embeddings",
                    "{\"model\":\"m-embed\",\"input\":\"The food was delicious and the waiter...\"}", Map.of());
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body().getBytes()).isEqualTo(f.engine.served().get(0).responseBody().getBytes());
            Scrape s = f.scrape();
            String[] end = {"model", "m-embed", "operation", "embeddings", "streaming", "false", "outcome", "ok"};
            assertThat(s.sum("llm_sidecar_requests_total", end)).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_tokens_total", "model", "m-embed", "token_type", "input")).isEqualTo(17); // the sim counts body length / 4
            assertThat(s.sum("llm_sidecar_tokens_total", "model", "m-embed", "token_type", "output")).isZero();
            assertThat(s.sum("llm_sidecar_output_token_source_total", "source", "none")).isEqualTo(1);
            double e2e = s.sum("gen_ai_server_request_duration_seconds_sum", end);
            ServedRequest engine = f.engine.served().get(0);
            assertThat(e2e).isBetween((engine.lastTokenSentNanos() - engine.arrivalNanos()) / 1e9,
                    (r.chunkNanos().get(r.chunkNanos().size() - 1) - r.sentNanos()) / 1e9);
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_sum", "model", "m-embed")).isEqualTo(e2e);
        }
    }

    /** An upstream whose stream is partly malformed: the client still gets every byte, the bad events are counted. */
    @org.junit.jupiter.api.Test
    void malformedEventsPassUntouchedAndAreCountedByFormat() {
        String good = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                + "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n";
        String body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\n\n" + good
                + "data: \u00ff\u00fe not json\n\n" + good.replace("Hi", "!");
        io.vertx.core.Vertx stubVertx = io.vertx.core.Vertx.vertx();
        try {
            io.vertx.core.http.HttpServer stub = ProxyFixture.await(stubVertx.createHttpServer()
                    .requestHandler(req -> req.body().onSuccess(b -> {
                        req.response().setChunked(true).putHeader("content-type", "text/event-stream");
                        req.response().write(body.substring(0, 70));
                        stubVertx.setTimer(20, t -> req.response().end(body.substring(70)));
                    })).listen(0, "127.0.0.1"));
            try (ProxyFixture f = new ProxyFixture(SCHEDULE, NAMED, "http://127.0.0.1:" + stub.actualPort())) {
                Received r = f.post(f.proxyPort, "/v1/messages", "{\"model\":\"m-bad\",\"stream\":true}", Map.of());
                assertThat(r.status()).isEqualTo(200);
                assertThat(r.body().getBytes()).isEqualTo(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                Scrape s = f.scrape();
                assertThat(s.sum("llm_sidecar_undecodable_chunks_total", "format", "anthropic_messages",
                        "operation", "chat")).isEqualTo(2);
                assertThat(s.sum("llm_sidecar_requests_total", "model", "m-bad", "outcome", "ok")).isEqualTo(1);
                // no usage arrived: the two good deltas are counted as chunks
                assertThat(s.sum("llm_sidecar_tokens_total", "model", "m-bad", "token_type", "output")).isEqualTo(2);
                assertThat(s.sum("llm_sidecar_output_token_source_total", "source", "chunks")).isEqualTo(1);
            }
        } finally {
            ProxyFixture.await(stubVertx.close());
        }
    }
}
