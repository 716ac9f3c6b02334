package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.CapturedLogs;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.RawUpstream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * Upstream faults a well-behaved server never produces, from a raw socket: the client gets exactly the bytes the
 * upstream sent up to the fault, nothing hangs, and every outcome is counted.
 */
class RawUpstreamFaultsTest {

    static final String STREAM = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    static final String PLAIN = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    static byte[] event(int i) {
        return ("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t"
                + i + "\"},\"finish_reason\":null}]}\n\n").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void upstreamClosingBeforeTheStatusLineGivesA502() throws Exception {
        try (RawUpstream raw = new RawUpstream((r, s, out) -> s.close());
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            Received r = f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of());
            assertThat(r.status()).isEqualTo(502);
            assertThat(r.headers().get("x-llm-sidecar-error")).isEqualTo("upstream_closed");
            assertThat(r.text()).contains("upstream closed the connection before responding");
            assertCounted(f, "upstream_error", "5xx");
        }
    }

    @Test
    void upstreamResettingBeforeTheStatusLineGivesA502() throws Exception {
        try (RawUpstream raw = new RawUpstream((r, s, out) -> RawUpstream.reset(s));
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            Received r = f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of());
            assertThat(r.status()).isEqualTo(502);
            assertCounted(f, "upstream_error", "5xx");
            // the sidecar keeps serving after the fault
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of()).status()).isEqualTo(502);
        }
    }

    @Test
    void upstreamStallingBeforeHeadersGivesA504AfterTheIdleTimeout() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (RawUpstream raw = new RawUpstream((r, s, out) -> release.await(30, TimeUnit.SECONDS));
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(),
                        Map.of("sidecar.upstream.idle-timeout", "PT0.3S"), raw.url())) {
            long start = System.nanoTime();
            Received r = f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of());
            double seconds = (System.nanoTime() - start) / 1e9;
            assertThat(r.status()).isEqualTo(504);
            assertThat(r.headers().get("x-llm-sidecar-error")).isEqualTo("upstream_timeout");
            assertThat(seconds).as("cut by the configured idle timeout, not a default").isBetween(0.3, 5.0);
            assertCounted(f, "upstream_error", "5xx");
            // the stalled upstream connection was closed by the sidecar
            waitUntil(() -> raw.sockets.get(0).isClosed() || readsEof(raw), 5);
        } finally {
            release.countDown();
        }
    }

    @Test
    void upstreamDyingInTheMiddleOfAnEventGivesTheClientExactlyTheBytesSent() throws Exception {
        ByteArrayOutputStream sent = new ByteArrayOutputStream();
        try (RawUpstream raw = new RawUpstream((r, s, out) -> {
            RawUpstream.writeHead(out, "text/event-stream");
            for (int i = 0; i < 3; i++) {
                RawUpstream.writeChunk(out, event(i));
                sent.write(event(i));
            }
            byte[] half = java.util.Arrays.copyOf(event(3), 30);
            RawUpstream.writeChunk(out, half);
            sent.write(half);
            Thread.sleep(100);
            RawUpstream.reset(s);
        });
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            Received r = f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of());
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.failure()).as("the client sees the truncation").isNotNull();
            assertThat(r.body().getBytes()).isEqualTo(sent.toByteArray());
            Scrape s = waitForOutcome(f, "upstream_broken");
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_requests_in_flight")).isZero();
        }
    }

    @Test
    void malformedSseIsForwardedByteForByteAndCountedAsUndecodable() throws Exception {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(": comment\n\ndata: {not json at all\n\nevent: weird\ndata: [1,2,3]\n\n".getBytes(StandardCharsets.UTF_8));
        byte[] binary = new byte[256];
        for (int i = 0; i < 256; i++) {
            binary[i] = (byte) i;
        }
        body.write("data: ".getBytes(StandardCharsets.UTF_8));
        body.write(binary);
        body.write("\n\n".getBytes(StandardCharsets.UTF_8));
        body.write(event(1));
        body.write("no field line\r\ndata:{\"choices\":[{\"delta\":{\"content\":\"crlf\"}}]}\r\n\r\ndata: [DONE]\n\n"
                .getBytes(StandardCharsets.UTF_8));
        byte[] expected = body.toByteArray();
        try (RawUpstream raw = new RawUpstream((r, s, out) -> {
            RawUpstream.writeHead(out, "text/event-stream");
            // awkward read boundaries: 7-byte pieces
            for (int i = 0; i < expected.length; i += 7) {
                RawUpstream.writeChunk(out, java.util.Arrays.copyOfRange(expected, i, Math.min(expected.length, i + 7)));
            }
            RawUpstream.writeEnd(out);
        });
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            Received r = f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of());
            assertThat(r.failure()).isNull();
            assertThat(r.body().getBytes()).isEqualTo(expected);
            Scrape s = waitForOutcome(f, "ok");
            assertThat(s.sum("llm_sidecar_undecodable_chunks_total")).isGreaterThanOrEqualTo(3);
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count")).isEqualTo(1);
        }
    }

    @Test
    void malformedJsonAndNdjsonBodiesAreForwardedByteForByteAndCounted() throws Exception {
        byte[] badJson = "{\"id\":\"x\",\"choices\":[{\"message\":{\"content\":\"trunc".getBytes(StandardCharsets.UTF_8);
        byte[] badNdjson = "{\"model\":\"m\",\"message\":{\"content\":\"a\"},\"done\":false}\n{broken\n\u0000\u00ff\n{\"done\":true}\n"
                .getBytes(StandardCharsets.ISO_8859_1);
        try (RawUpstream raw = new RawUpstream((r, s, out) -> {
            boolean nd = r.head().contains("/api/chat");
            RawUpstream.writeHead(out, nd ? "application/x-ndjson" : "application/json");
            RawUpstream.writeChunk(out, nd ? badNdjson : badJson);
            RawUpstream.writeEnd(out);
        });
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            Received json = f.post(f.proxyPort, "/v1/chat/completions", PLAIN, Map.of());
            assertThat(json.body().getBytes()).isEqualTo(badJson);
            Received nd = f.post(f.proxyPort, "/api/chat", "{\"model\":\"m\",\"messages\":[]}", Map.of());
            assertThat(nd.body().getBytes()).isEqualTo(badNdjson);
            Scrape s = waitForOutcome(f, "ok");
            assertThat(s.sum("llm_sidecar_http_requests_total", "status_class", "2xx")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_requests_in_flight")).isZero();
        }
    }

    static boolean readsEof(RawUpstream raw) {
        try {
            var s = raw.sockets.get(0);
            s.setSoTimeout(50);
            return s.getInputStream().read() < 0;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (Exception e) {
            return true;
        }
    }

    @Test
    void connectionResetsOnEitherSideAreCountedAndNeverLoggedAsErrors() throws Exception {
        java.util.List<java.net.Socket> idle = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (CapturedLogs logs = new CapturedLogs(Level.INFO);
                RawUpstream raw = new RawUpstream((r, s, out) -> {
                    if (r.head().contains("reset-mid-stream")) {
                        out.write(("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked"
                                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                        RawUpstream.writeChunk(out, event(0));
                        sleep(50);
                        RawUpstream.reset(s);
                        return;
                    }
                    byte[] body = "{\"ok\":true}".getBytes(StandardCharsets.US_ASCII);
                    out.write(("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " + body.length
                            + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(body);
                    out.flush();
                    idle.add(s);
                }, true);
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            // an upstream reset in the middle of a stream
            Received broken = f.post(f.proxyPort, "/v1/chat/completions?reset-mid-stream", STREAM, Map.of());
            assertThat(broken.failure()).isNotNull();
            // an upstream reset of an idle pooled connection
            assertThat(f.post(f.proxyPort, "/v1/models", "", Map.of()).status()).isEqualTo(200);
            waitUntil(() -> idle.size() == 1, 5);
            RawUpstream.reset(idle.get(0));
            // a client that resets its connection in the middle of a stream
            try (java.net.Socket client = new java.net.Socket("127.0.0.1", f.proxyPort)) {
                client.getOutputStream().write(("POST /v1/chat/completions?reset-mid-stream HTTP/1.1\r\nhost: x\r\n"
                        + "content-type: application/json\r\ncontent-length: " + STREAM.length() + "\r\n\r\n" + STREAM)
                        .getBytes(StandardCharsets.US_ASCII));
                client.getInputStream().read(new byte[64]);
                RawUpstream.reset(client);
            }
            waitForOutcome(f, "client_cancelled");
            // and the sidecar keeps serving
            assertThat(f.post(f.proxyPort, "/v1/models", "", Map.of()).status()).isEqualTo(200);
            assertThat(logs.atLeast(Level.SEVERE)).as("no ERROR for a peer's reset").isEmpty();
            waitUntil(() -> f.scrape().sum("llm_sidecar_connection_errors_total", "peer", "upstream") >= 1, 5);
        }
    }

    static void assertCounted(ProxyFixture f, String outcome, String statusClass) {
        Scrape s = waitForOutcome(f, outcome);
        assertThat(s.sum("llm_sidecar_http_requests_total", "route", "llm", "status_class", statusClass))
                .isGreaterThanOrEqualTo(1);
        assertThat(s.sum("llm_sidecar_requests_in_flight")).isZero();
    }

    static Scrape waitForOutcome(ProxyFixture f, String outcome) {
        for (int i = 0; i < 300; i++) {
            Scrape s = f.scrape();
            if (s.sum("llm_sidecar_requests_total", "outcome", outcome) >= 1) {
                return s;
            }
            sleep(10);
        }
        throw new AssertionError("outcome never counted: " + outcome);
    }

    static void waitUntil(java.util.function.BooleanSupplier condition, int seconds) {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within " + seconds + " s");
            }
            sleep(20);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
