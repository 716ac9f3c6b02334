package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.ServedRequest;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.ProxyFixture.Received;
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

    void assertSameBytes(ProxyFixture f, String path, String body, String id) {
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

    @Test
    void chatAndCompletionsStreamingAndNotWithAndWithoutClientUsage() {
        try (ProxyFixture f = new ProxyFixture(FAST, Map.of())) {
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
            // 3 chat + 3 completion calls through the proxy; only the two streaming ones without usage were injected
            assertThat(s.sum("llm_sidecar_requests_total", "outcome", "ok")).isEqualTo(6);
            assertThat(s.sum("llm_sidecar_usage_injected_total")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_usage_chunks_stripped_total")).isEqualTo(2);
            // exact counts from usage everywhere: 12 chat tokens x 3, 9 completion tokens x 3
            assertThat(s.sum("llm_sidecar_tokens_total", "operation", "chat", "token_type", "output")).isEqualTo(36);
            assertThat(s.sum("llm_sidecar_tokens_total", "operation", "text_completion", "token_type", "output"))
                    .isEqualTo(27);
            assertThat(s.sum("llm_sidecar_output_token_source_total", "source", "usage")).isEqualTo(6);
            assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "cached_input")).isPositive();
        }
    }

    @Test
    void injectedUsageReachesTheEngineButNotTheClient() {
        try (ProxyFixture f = new ProxyFixture(FAST, Map.of())) {
            Received r = f.post(f.proxyPort, "/v1/chat/completions", chatBody(true, false), Map.of("x-request-id", "u1"));
            assertThat(r.text()).doesNotContain("\"usage\"").endsWith("data: [DONE]\n\n");
            List<ServedRequest> served = f.engine.served();
            assertThat(served.get(served.size() - 1).body()).contains("\"stream_options\":{\"include_usage\":true}");
        }
    }

    @Test
    void injectionCanBeTurnedOff() {
        try (ProxyFixture f = new ProxyFixture(FAST, Map.of("sidecar.llm.inject-include-usage", "false"))) {
            String body = chatBody(true, false);
            f.post(f.proxyPort, "/v1/chat/completions", body, Map.of());
            List<ServedRequest> served = f.engine.served();
            assertThat(served.get(served.size() - 1).body()).isEqualTo(body);
            Scrape s = f.scrape();
            // no usage: tokens counted from chunks (12 one-token chunks)
            assertThat(s.sum("llm_sidecar_output_token_source_total", "source", "chunks")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "output")).isEqualTo(12);
        }
    }

    @Test
    void crlfFramingAndUsageOnTheFinishChunkAlsoPassUnchanged() {
        EngineBehaviour crlf = FAST.withCrlf(true);
        try (ProxyFixture f = new ProxyFixture(crlf, Map.of())) {
            assertSameBytes(f, "/v1/chat/completions", chatBody(true, false), "x1");
            assertSameBytes(f, "/v1/chat/completions", chatBody(true, true), "x2");
        }
        EngineBehaviour onFinish = FAST.withUsageMode(EngineBehaviour.UsageMode.ON_FINISH_CHUNK);
        try (ProxyFixture f = new ProxyFixture(onFinish, Map.of())) {
            assertSameBytes(f, "/v1/chat/completions", chatBody(true, true), "y1");
            Received r = f.post(f.proxyPort, "/v1/chat/completions", chatBody(true, false), Map.of("x-request-id", "y2"));
            // the engine put usage on the finish chunk: read, never stripped
            assertThat(r.text()).contains("\"finish_reason\":\"length\"}],\"usage\"");
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_usage_chunks_stripped_total")).isZero();
            assertThat(s.sum("llm_sidecar_output_token_source_total", "source", "usage")).isEqualTo(2);
        }
    }

    @Test
    void multiTokenChunksPassUnchangedAndCountExactly() {
        try (ProxyFixture f = new ProxyFixture(FAST.withTokensPerChunk(4), Map.of())) {
            assertSameBytes(f, "/v1/chat/completions", chatBody(true, false), "m1");
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "output")).isEqualTo(12);
            // 3 chunks of 4 tokens: 2 gaps x 4 token-weighted samples; 2 raw chunk gaps
            assertThat(s.sum("llm_sidecar_inter_token_latency_seconds_count")).isEqualTo(8);
            assertThat(s.sum("gen_ai_client_operation_time_per_output_chunk_seconds_count")).isEqualTo(2);
        }
    }
}
