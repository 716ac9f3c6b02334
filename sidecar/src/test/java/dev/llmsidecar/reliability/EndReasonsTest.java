package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.LeavingClient;
import dev.llmsidecar.testkit.RawUpstream;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.DoublePredicate;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every end_reason of llm_sidecar_requests_total made to happen over real sockets (127.0.0.1, ephemeral ports), the
 * live stall gauges of a stream frozen mid-generation and before its first token, one that resumes, and the output
 * tokens of an abandoned stream matched against what its client received, byte for byte.
 */
class EndReasonsTest {

    static final EngineBehaviour ENGINE = EngineBehaviour.defaults()
            .withTiming(java.time.Duration.ofMillis(20), java.time.Duration.ofMillis(10));
    static final String STREAM = "{\"model\":\"sim-llama-8b\",\"stream\":true,\"max_tokens\":50,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    static final String PLAIN = "{\"model\":\"sim-llama-8b\",\"max_tokens\":5,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    /** A token-bearing OpenAI chunk as the client receives it: non-empty content (the role-only chunk has ""). */
    static final Pattern TOKEN = Pattern.compile("\"content\":\"(?!\")");

    static byte[] event(int i, String finish) {
        return ("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                + "\"delta\":{\"content\":\"t" + i + "\"},\"finish_reason\":" + (finish == null ? "null" : "\"" + finish
                + "\"") + "}]}\n\n").getBytes(StandardCharsets.UTF_8);
    }

    static int tokens(String received) {
        Matcher m = TOKEN.matcher(received);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    /** Polls the scrape (every 20 ms, at most 10 s) until {@code name{labels}} summed satisfies {@code until}. */
    static Scrape awaitValue(ProxyFixture f, DoublePredicate until, String name, String... labels) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (true) {
            Scrape s = f.scrape();
            if (until.test(s.sum(name, labels))) {
                return s;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " " + String.join(",", labels) + " stayed at " + s.sum(name, labels));
            }
            sleep(20);
        }
    }

    static Scrape awaitEnded(ProxyFixture f, String endReason) {
        return awaitValue(f, v -> v >= 1, "llm_sidecar_requests_total", "end_reason", endReason);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Reads until {@code enough} holds (at most 10 s), then until nothing came for {@code quietMs}. */
    static String read(LeavingClient c, Predicate<String> enough, long quietMs) throws Exception {
        assertThat(c.readUntilQuiet(enough, quietMs, 10)).as("the client got what it waited for: " + c.text())
                .isTrue();
        return c.text();
    }

    @Test
    void completedStreamsAndResponsesThatDoNotStream() {
        try (ProxyFixture f = new ProxyFixture(ENGINE, Map.of())) {
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of()).text()).endsWith("[DONE]\n\n");
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", PLAIN, Map.of()).status()).isEqualTo(200);
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "completed")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "completed", "outcome", "ok",
                    "streaming", "true")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_requests_total")).isEqualTo(2);
            // every stream with a token had a longest gap; the one that does not stream none
            assertThat(s.sum("llm_sidecar_stream_longest_gap_seconds_count")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_stalled_streams")).isZero();
        }
    }

    @Test
    void aStreamEndingCleanlyWithoutTerminatorOrFinishReasonIsTruncatedAndOneWithItsDoneIsNot() throws Exception {
        try (RawUpstream raw = new RawUpstream((r, s, out) -> {
            RawUpstream.writeHead(out, "text/event-stream");
            for (int i = 0; i < 3; i++) {
                RawUpstream.writeChunk(out, event(i, null));
            }
            if (r.header("x-done") != null) {
                RawUpstream.writeChunk(out, "data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
            }
            RawUpstream.writeEnd(out);
        });
                ProxyFixture f = new ProxyFixture(ENGINE, Map.of(), raw.url())) {
            Received cut = f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of());
            assertThat(cut.failure()).as("the framing was complete: the client sees a clean end").isNull();
            assertThat(tokens(cut.text())).isEqualTo(3);
            Received done = f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of("x-done", "1"));
            assertThat(done.text()).endsWith("data: [DONE]\n\n");
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "truncated", "outcome", "ok")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "completed", "outcome", "ok")).isEqualTo(1);
        }
    }

    @Test
    void anErrorObjectInsideA200StreamIsAStreamError() throws Exception {
        try (RawUpstream raw = new RawUpstream((r, s, out) -> {
            RawUpstream.writeHead(out, "text/event-stream");
            RawUpstream.writeChunk(out, event(0, null));
            RawUpstream.writeChunk(out, ("data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n")
                    .getBytes(StandardCharsets.UTF_8));
            RawUpstream.writeEnd(out);
        });
                ProxyFixture f = new ProxyFixture(ENGINE, Map.of(), raw.url())) {
            Received r = f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of());
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.text()).contains("overloaded");
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "stream_error", "outcome", "upstream_error"))
                    .isEqualTo(1);
        }
    }

    @Test
    void upstreamErrorsAreToldApartByTheHead() throws Exception {
        try (ProxyFixture f = new ProxyFixture(ENGINE, Map.of())) {
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of("x-sim-status", "429")).status())
                    .isEqualTo(429);
            Received broken = f.post(f.proxyPort, "/v1/chat/completions", STREAM,
                    Map.of("x-sim-fail-after-chunks", "3"));
            assertThat(broken.failure()).isNotNull();
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "error_status", "outcome", "upstream_error"))
                    .isEqualTo(1);
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "upstream_error_after_head",
                    "outcome", "upstream_broken")).isEqualTo(1);
        }
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        try (ProxyFixture f = new ProxyFixture(ENGINE, Map.of(), "http://127.0.0.1:" + closedPort)) {
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of()).status()).isEqualTo(502);
            assertThat(f.settledScrape().sum("llm_sidecar_requests_total", "end_reason", "upstream_error_before_head",
                    "outcome", "upstream_error")).isEqualTo(1);
        }
    }

    @Test
    void aClientGoneBeforeItsFirstToken() throws Exception {
        try (ProxyFixture f = new ProxyFixture(ENGINE, Map.of())) {
            try (LeavingClient c = new LeavingClient(f.proxyPort, STREAM, Map.of("x-sim-ttft-ms", "5000"))) {
                read(c, t -> t.startsWith("HTTP/1.1 200"), 200); // the head and the role chunk, no token
                assertThat(tokens(c.text())).isZero();
            }
            Scrape s = awaitEnded(f, "client_gone_before_first_token");
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "client_gone_before_first_token",
                    "outcome", "client_cancelled")).isEqualTo(1);
            assertThat(s.has("llm_sidecar_abandoned_output_tokens_total")).isFalse();
        }
    }

    @Test
    void theTokensOfAnAbandonedStreamAreWhatItsClientReceivedByteForByte() throws Exception {
        try (ProxyFixture f = new ProxyFixture(ENGINE, Map.of())) {
            String received;
            // the engine sends 7 token chunks, then nothing (connection kept): the client reads all it gets, leaves
            try (LeavingClient c = new LeavingClient(f.proxyPort, STREAM, Map.of("x-sim-stall-after-chunks", "7",
                    "x-sim-output-tokens", "50"))) {
                received = read(c, t -> tokens(t) >= 7, 300);
            }
            int clientTokens = tokens(received);
            assertThat(clientTokens).isEqualTo(7);
            Scrape s = awaitEnded(f, "client_gone_mid_stream");
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "client_gone_mid_stream",
                    "outcome", "client_cancelled")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_abandoned_output_tokens_total", "end_reason", "client_gone_mid_stream"))
                    .as("tokens the client received").isEqualTo(clientTokens);
            assertThat(s.sum("llm_sidecar_abandoned_output_tokens_total")).isEqualTo(clientTokens);
        }
    }

    @Test
    void aStreamFrozenMidGenerationShowsLiveAndEndsStalledWhenItsClientGivesUp() throws Exception {
        try (ProxyFixture f = new ProxyFixture(ENGINE, Map.of("sidecar.stall.threshold", "PT0.5S"))) {
            f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of()); // a warm path
            String received;
            double shownAfter;
            try (LeavingClient c = new LeavingClient(f.proxyPort, STREAM, Map.of("x-sim-stall-after-chunks", "3",
                    "x-sim-output-tokens", "50"))) {
                received = read(c, t -> tokens(t) >= 3, 100);
                Scrape s = awaitValue(f, v -> v == 1, "llm_sidecar_stalled_streams", "stream_phase", "generation");
                shownAfter = (System.nanoTime() - c.lastByteNanos()) / 1e9;
                assertThat(s.sum("llm_sidecar_stalled_streams", "model", "sim-llama-8b", "stream_phase",
                        "first_token")).isZero();
                assertThat(s.sum("llm_sidecar_stream_longest_silence_seconds", "stream_phase", "generation"))
                        .isGreaterThan(0.5);
                assertThat(f.telemetry.inFlight().scan().stalled()).isEqualTo(1);
            } // the client gives up
            System.out.printf("stalled stream shown %.3f s after the client's last byte (threshold 0.5 s)%n",
                    shownAfter);
            // at the threshold (the sidecar stamped the token before the client had it), and within one read after
            assertThat(shownAfter).isBetween(0.4, 0.5 + 1.0);
            Scrape s = awaitEnded(f, "stalled");
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "stalled", "outcome", "client_cancelled"))
                    .isEqualTo(1);
            assertThat(s.sum("llm_sidecar_abandoned_output_tokens_total", "end_reason", "stalled"))
                    .isEqualTo(tokens(received)).isEqualTo(3);
            assertThat(s.sum("llm_sidecar_stream_longest_gap_seconds_count")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_stream_longest_gap_seconds_bucket", "le", "0.5"))
                    .as("the warm stream's gaps were short; the frozen one's was not").isEqualTo(1);
            awaitValue(f, v -> v == 0, "llm_sidecar_stalled_streams");
        }
    }

    @Test
    void aStreamFrozenBeforeItsFirstTokenShowsAndIsCutByTheIdleTimeoutAsStalled() throws Exception {
        try (ProxyFixture f = new ProxyFixture(ENGINE, Map.of("sidecar.stall.first-token-threshold", "PT0.5S",
                "sidecar.upstream.idle-timeout", "PT2S"))) {
            f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of());
            try (LeavingClient c = new LeavingClient(f.proxyPort, STREAM, Map.of("x-sim-stall-after-chunks", "0"))) {
                read(c, t -> t.startsWith("HTTP/1.1 200"), 100);
                awaitValue(f, v -> v == 1, "llm_sidecar_stalled_streams", "stream_phase", "first_token");
                assertThat(f.scrape().sum("llm_sidecar_stalled_streams", "stream_phase", "generation")).isZero();
                // the idle timeout cuts it: the client sees its connection close
                read(c, t -> true, 3_000);
            }
            Scrape s = awaitEnded(f, "stalled");
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "stalled", "outcome", "upstream_broken"))
                    .isEqualTo(1);
            assertThat(s.has("llm_sidecar_abandoned_output_tokens_total")).isFalse();
            awaitValue(f, v -> v == 0, "llm_sidecar_stalled_streams");
        }
    }

    @Test
    void aStreamThatResumesClearsTheGaugeAndCompletes() throws Exception {
        try (RawUpstream raw = new RawUpstream((r, s, out) -> {
            RawUpstream.writeHead(out, "text/event-stream");
            RawUpstream.writeChunk(out, event(0, null));
            RawUpstream.writeChunk(out, event(1, null));
            Thread.sleep(1_500); // frozen, then it goes on
            RawUpstream.writeChunk(out, event(2, null));
            RawUpstream.writeChunk(out, event(3, "stop"));
            RawUpstream.writeChunk(out, "data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
            RawUpstream.writeEnd(out);
        });
                ProxyFixture f = new ProxyFixture(ENGINE, Map.of("sidecar.stall.threshold", "PT0.5S"), raw.url())) {
            var pending = f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", Buffer.buffer(STREAM), Map.of());
            awaitValue(f, v -> v == 1, "llm_sidecar_stalled_streams", "stream_phase", "generation");
            Received r = ProxyFixture.await(pending);
            assertThat(r.failure()).isNull();
            assertThat(tokens(r.text())).isEqualTo(4);
            awaitValue(f, v -> v == 0, "llm_sidecar_stalled_streams");
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "completed")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "stalled")).isZero();
            assertThat(s.sum("llm_sidecar_stream_longest_gap_seconds_sum")).isBetween(1.4, 5.0);
        }
    }
}
