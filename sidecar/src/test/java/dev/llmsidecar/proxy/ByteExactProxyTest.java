package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.ServedRequest;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a client receives through the sidecar is, byte for byte, what the engine sends it directly. */
class ByteExactProxyTest {

    static final EngineBehaviour FAST = EngineBehaviour.defaults()
            .withTiming(java.time.Duration.ofMillis(5), java.time.Duration.ofMillis(1))
            .withFixedCreated(1_700_000_000L).withCachedTokenRatio(0.5);

    static String chatBody(boolean stream, boolean askUsage) {
        return "{\"model\":\"sim-llama-8b\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello ünïcode\"}],"
                + "\"max_tokens\":12" + (stream ? ",\"stream\":true" : "")
                + (askUsage ? ",\"stream_options\":{\"include_usage\":true}" : "") + "}";
    }

    static String completionBody(boolean stream, boolean askUsage) {
        return "{\"model\":\"sim-llama-8b\",\"prompt\":\"Once upon\",\"max_tokens\":9" + (stream ? ",\"stream\":true" : "")
                + (askUsage ? ",\"stream_options\":{\"include_usage\":true}" : "") + "}";
    }

    static void assertSameBytes(ProxyFixture f, String path, String body, String id) {
        Map<String, String> headers = Map.of("x-request-id", id);
        Received direct = f.post(f.enginePort, path, body, headers);
        Received proxied = f.post(f.proxyPort, path, body, headers);
        assertThat(proxied.failure()).isNull();
        assertThat(proxied.status()).isEqualTo(direct.status());
        assertThat(proxied.headers().get("content-type")).isEqualTo(direct.headers().get("content-type"));
        // compared as ISO-8859-1 text: byte for byte, with a readable diff
        assertThat(proxied.body().toString(java.nio.charset.StandardCharsets.ISO_8859_1)).as("%s %s", path, body)
                .isEqualTo(direct.body().toString(java.nio.charset.StandardCharsets.ISO_8859_1));
    }

    /** The first stream of a model and API is not edited: the sidecar learns from it what the engine sends. */
    static void learnLayout(ProxyFixture f, String path, String body) {
        double before = f.scrape().sum("llm_sidecar_usage_injection_skipped_total", "reason", "learning");
        assertSameBytes(f, path, body, "learn");
        assertThat(f.scrape().sum("llm_sidecar_usage_injection_skipped_total", "reason", "learning"))
                .isEqualTo(before + 1);
    }

    @Test
    void chatAndCompletionsStreamingAndNotWithAndWithoutClientUsage() {
        try (ProxyFixture f = new ProxyFixture(FAST, Map.of())) {
            learnLayout(f, "/v1/chat/completions", chatBody(true, false));
            learnLayout(f, "/v1/completions", completionBody(true, false));
            int n = 0;
            for (boolean stream : new boolean[] {true, false}) {
                for (boolean ask : new boolean[] {true, false}) {
                    if (!stream && ask) {
                        continue;
                    }
                    assertSameBytes(f, "/v1/chat/completions", chatBody(stream, ask), "c" + n);
                    assertSameBytes(f, "/v1/completions", completionBody(stream, ask), "t" + n);
                    n++;
                }
            }
            Scrape s = f.scrape();
            // 2 learning + 3 chat + 3 completion calls through the proxy; the two later streaming ones without usage
            // were injected
            assertThat(s.sum("llm_sidecar_requests_total", "outcome", "ok")).isEqualTo(8);
            assertThat(s.sum("llm_sidecar_usage_injected_total")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_usage_chunks_stripped_total")).isEqualTo(2);
            // exact counts from usage everywhere but the learning streams (one token per chunk there: also exact)
            assertThat(s.sum("llm_sidecar_tokens_total", "operation", "chat", "token_type", "output")).isEqualTo(48);
            assertThat(s.sum("llm_sidecar_tokens_total", "operation", "text_completion", "token_type", "output"))
                    .isEqualTo(36);
            assertThat(s.sum("llm_sidecar_output_token_source_total", "source", "usage")).isEqualTo(6);
            assertThat(s.sum("llm_sidecar_output_token_source_total", "source", "chunks")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "cached_input")).isPositive();
        }
    }

    @Test
    void injectedUsageReachesTheEngineButNotTheClient() {
        try (ProxyFixture f = new ProxyFixture(FAST, Map.of())) {
            learnLayout(f, "/v1/chat/completions", chatBody(true, false));
            Received r = f.post(f.proxyPort, "/v1/chat/completions", chatBody(true, false), Map.of("x-request-id", "u1"));
            assertThat(r.text()).doesNotContain("\"usage\"").endsWith("data: [DONE]\n\n");
            List<ServedRequest> served = f.engine.served();
            assertThat(served.get(served.size() - 1).body()).contains("\"stream_options\":{\"include_usage\":true}");
        }
    }

    @Test
    void anExplicitFalseIsNeverOverridden() {
        try (ProxyFixture f = new ProxyFixture(FAST, Map.of())) {
            learnLayout(f, "/v1/chat/completions", chatBody(true, false));
            String declined = "{\"model\":\"sim-llama-8b\",\"stream\":true,\"stream_options\":{\"include_usage\":false},"
                    + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":4}";
            assertSameBytes(f, "/v1/chat/completions", declined, "d1");
            List<ServedRequest> served = f.engine.served();
            assertThat(served.get(served.size() - 1).body()).isEqualTo(declined);
            assertThat(f.scrape().sum("llm_sidecar_usage_injection_skipped_total", "reason", "client_declined"))
                    .isEqualTo(1);
        }
    }

    @Test
    void injectionCanBeTurnedOff() {
        try (ProxyFixture f = new ProxyFixture(FAST, Map.of("sidecar.llm.inject-include-usage", "false"))) {
            String body = chatBody(true, false);
            for (int i = 0; i < 2; i++) {
                f.post(f.proxyPort, "/v1/chat/completions", body, Map.of());
                List<ServedRequest> served = f.engine.served();
                assertThat(served.get(served.size() - 1).body()).isEqualTo(body);
            }
            Scrape s = f.scrape();
            // no usage: tokens counted from chunks (12 one-token chunks)
            assertThat(s.sum("llm_sidecar_output_token_source_total", "source", "chunks")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "output")).isEqualTo(24);
            assertThat(s.sum("llm_sidecar_usage_injected_total")).isZero();
        }
    }

    @Test
    void crlfFramingAndUsageOnTheFinishChunkAlsoPassUnchanged() {
        EngineBehaviour crlf = FAST.withCrlf(true);
        try (ProxyFixture f = new ProxyFixture(crlf, Map.of())) {
            learnLayout(f, "/v1/chat/completions", chatBody(true, false));
            assertSameBytes(f, "/v1/chat/completions", chatBody(true, false), "x1");
            assertSameBytes(f, "/v1/chat/completions", chatBody(true, true), "x2");
            assertThat(f.scrape().sum("llm_sidecar_usage_chunks_stripped_total")).isEqualTo(1);
        }
        EngineBehaviour onFinish = FAST.withUsageMode(EngineBehaviour.UsageMode.ON_FINISH_CHUNK);
        try (ProxyFixture f = new ProxyFixture(onFinish, Map.of())) {
            learnLayout(f, "/v1/chat/completions", chatBody(true, false));
            assertSameBytes(f, "/v1/chat/completions", chatBody(true, true), "y1");
            // the engine puts usage on the finish chunk when asked: the member is removed, the chunk stays
            assertSameBytes(f, "/v1/chat/completions", chatBody(true, false), "y2");
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_usage_chunks_stripped_total")).isZero();
            assertThat(s.sum("llm_sidecar_usage_members_removed_total")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_output_token_source_total", "source", "usage")).isEqualTo(2);
        }
    }

    @Test
    void multiTokenChunksPassUnchangedAndCountExactly() {
        try (ProxyFixture f = new ProxyFixture(FAST.withTokensPerChunk(4), Map.of())) {
            learnLayout(f, "/v1/chat/completions", chatBody(true, false));
            assertSameBytes(f, "/v1/chat/completions", chatBody(true, false), "m1");
            Scrape s = f.scrape();
            // the learning stream counted 3 chunks (a lower bound); the injected one 12 from usage
            assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "output")).isEqualTo(3 + 12);
            // per stream: 3 chunks of 4 tokens: 2 gaps x 4 token-weighted samples (2 x 1 without usage); 2 chunk gaps
            assertThat(s.sum("llm_sidecar_inter_token_latency_seconds_count")).isEqualTo(8 + 2);
            assertThat(s.sum("gen_ai_client_operation_time_per_output_chunk_seconds_count")).isEqualTo(4);
        }
    }
}
