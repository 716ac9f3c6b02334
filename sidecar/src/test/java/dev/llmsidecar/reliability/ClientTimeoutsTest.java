package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.RawUpstream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A client that stops moving holds nothing for long (issue 41): an unfinished request head, a request body that
 * pauses, a response nobody reads. Over real sockets (127.0.0.1, ephemeral ports), with the timeouts lowered to
 * fractions of a second; each cut counted in llm_sidecar_client_timeouts_total and, for the send timeout, the request
 * ended as end_reason="client_send_timeout".
 */
class ClientTimeoutsTest {

    static final Map<String, String> SHORT = Map.of(
            "sidecar.limits.request-head-timeout", "PT0.4S",
            "sidecar.limits.request-body-timeout", "PT0.4S",
            "sidecar.limits.send-timeout", "PT1S");
    static final byte[] EVENT = ("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":"
            + "[{\"index\":0,\"delta\":{\"content\":\"" + "x".repeat(200) + "\"},\"finish_reason\":null}]}\n\n")
            .getBytes(StandardCharsets.UTF_8);
    static final String STREAM = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    /** An engine that streams events for as long as it may write (bounded: 30 s, 200 MB). */
    static RawUpstream endlessStream() throws IOException {
        return new RawUpstream((r, s, out) -> {
            RawUpstream.writeHead(out, "text/event-stream");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (int i = 0; i < 1_000_000 && System.nanoTime() < deadline; i++) {
                RawUpstream.writeChunk(out, EVENT);
            }
        });
    }

    static Socket connect(int port) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
        s.setSoTimeout(10_000);
        return s;
    }

    /** Reads until the peer closes (true) or 10 s pass (false); what was read is returned through {@code into}. */
    static boolean closedByPeer(Socket s, StringBuilder into) throws IOException {
        InputStream in = s.getInputStream();
        byte[] buffer = new byte[8192];
        try {
            for (int n; (n = in.read(buffer)) >= 0;) {
                into.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    @Test
    void anUnfinishedRequestHeadIsClosedAndAnIdleConnectionIsNot() throws Exception {
        try (RawUpstream upstream = new RawUpstream((r, s, out) -> { });
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), SHORT, upstream.url());
                Socket unfinished = connect(f.proxyPort);
                Socket idle = connect(f.proxyPort)) {
            long start = System.nanoTime();
            unfinished.getOutputStream().write("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nx-a: b"
                    .getBytes(StandardCharsets.ISO_8859_1));
            assertThat(closedByPeer(unfinished, new StringBuilder())).as("the unfinished head's connection closed")
                    .isTrue();
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // the sweep runs a quarter of the timeout apart: closed between 0.4 and 0.5 s, with scheduling slack
            assertThat(tookMs).as("closed after the head timeout, ms").isBetween(400L, 5_000L);
            assertThat(upstream.requests).as("nothing reached the engine").isEmpty();
            EndReasonsTest.awaitValue(f, v -> v == 1, "llm_sidecar_client_timeouts_total", "when", "request_head");
            // a connection that sent nothing yet is an idle keep-alive, not a late head: it still serves a request
            idle.getOutputStream().write(("GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            byte[] status = idle.getInputStream().readNBytes(12);
            assertThat(new String(status, StandardCharsets.ISO_8859_1)).startsWith("HTTP/1.1 ");
        }
    }

    @Test
    void anInspectedBodyThatPausesGets408AndNeverGoesUpstream() throws Exception {
        try (RawUpstream upstream = new RawUpstream((r, s, out) -> { });
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), SHORT, upstream.url());
                Socket client = connect(f.proxyPort)) {
            String part = STREAM.substring(0, 20);
            client.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                    + "content-type: application/json\r\ncontent-length: " + STREAM.length() + "\r\n\r\n" + part)
                    .getBytes(StandardCharsets.ISO_8859_1));
            StringBuilder response = new StringBuilder();
            assertThat(closedByPeer(client, response)).isTrue();
            assertThat(response.toString()).startsWith("HTTP/1.1 408").contains("x-llm-sidecar-error: request_body_timeout")
                    .contains("connection: close");
            assertThat(upstream.requests).as("an inspected body never goes upstream in part").isEmpty();
            assertThat(upstream.sockets).isEmpty();
            Scrape s = EndReasonsTest.awaitValue(f, v -> v == 1, "llm_sidecar_client_timeouts_total", "when",
                    "request_body");
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "client_gone_before_first_token"))
                    .isEqualTo(1);
            f.assertNothingInFlight();
        }
    }

    @Test
    void aPipedBodyThatPausesGets408AndItsUpstreamConnectionIsClosed() throws Exception {
        try (RawUpstream upstream = new RawUpstream((r, s, out) -> { });
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), SHORT, upstream.url());
                Socket client = connect(f.proxyPort)) {
            client.getOutputStream().write(("POST /internal/upload HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                    + "content-length: 100000\r\n\r\n" + "y".repeat(5_000)).getBytes(StandardCharsets.ISO_8859_1));
            StringBuilder response = new StringBuilder();
            assertThat(closedByPeer(client, response)).isTrue();
            assertThat(response.toString()).startsWith("HTTP/1.1 408").contains("x-llm-sidecar-error: request_body_timeout");
            // the engine had the head and part of the body: its connection was closed (it read the end of the stream
            // after 5 000 of the 100 000 bytes), not pooled with half a request
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (upstream.requests.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(upstream.requests).hasSize(1);
            assertThat(upstream.requests.get(0).body()).as("what the engine got before its connection closed")
                    .hasSize(5_000);
            EndReasonsTest.awaitValue(f, v -> v == 1, "llm_sidecar_client_timeouts_total", "when", "request_body");
            f.assertNothingInFlight();
        }
    }

    /**
     * The engine streams without end; the client reads the head and then nothing. Once the sidecar's writes to the
     * client are blocked for the send timeout, the stream and the engine's connection are cut: the engine's writes
     * fail, the client's connection closes, and the request ends as the client's doing, not as a stall.
     */
    @Test
    void aClientThatStopsReadingIsCutAfterTheSendTimeoutAndTheEngineReleased() throws Exception {
        try (RawUpstream upstream = endlessStream();
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), SHORT, upstream.url());
                Socket client = connect(f.proxyPort)) {
            OutputStream out = client.getOutputStream();
            out.write(("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                    + "content-length: " + STREAM.length() + "\r\n\r\n" + STREAM).getBytes(StandardCharsets.ISO_8859_1));
            byte[] head = client.getInputStream().readNBytes(12);
            assertThat(new String(head, StandardCharsets.ISO_8859_1)).isEqualTo("HTTP/1.1 200");
            long stoppedReading = System.nanoTime();
            // the engine's writes fail once the sidecar closes its connection
            long deadline = stoppedReading + TimeUnit.SECONDS.toNanos(15);
            while (upstream.closedAtNanos.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(upstream.closedAtNanos.get()).as("the engine's connection was cut").isPositive();
            long cutAfterMs = TimeUnit.NANOSECONDS.toMillis(upstream.closedAtNanos.get() - stoppedReading);
            assertThat(cutAfterMs).as("cut after the send timeout, ms").isGreaterThanOrEqualTo(1_000L);
            Scrape s = EndReasonsTest.awaitValue(f, v -> v == 1, "llm_sidecar_requests_total", "end_reason",
                    "client_send_timeout");
            assertThat(s.sum("llm_sidecar_client_timeouts_total", "when", "response")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_requests_total", "outcome", "client_cancelled")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "stalled")).isZero();
            // the client's connection is closed too: reading it now drains what was queued, then ends
            // the client's connection was reset, not closed behind the megabytes the kernel held for it: reading now
            // ends at once
            long reading = System.nanoTime();
            assertThat(closedByPeer(client, new StringBuilder())).as("the client's connection closed").isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - reading)).as("ms to the end of the connection")
                    .isLessThan(5_000L);
            f.assertNothingInFlight();
        }
    }

    /**
     * A client that stops reading is not an engine stall (issue 42): with the stall threshold at 0.5 s and the send
     * timeout at 30 s, a stream whose client reads nothing for 2 s shows in llm_sidecar_streams_paused_by_client and
     * never in llm_sidecar_stalled_streams, and when the client then leaves, it ends as the client's (client_gone),
     * never as stalled. The engine writes all along: the silence is the client's doing.
     */
    @Test
    void aClientThatStopsReadingIsShownPausedNeverStalledAndEndsAsTheClients() throws Exception {
        try (RawUpstream upstream = endlessStream();
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(
                        "sidecar.stall.threshold", "PT0.5S", "sidecar.limits.send-timeout", "PT30S"), upstream.url());
                Socket client = connect(f.proxyPort)) {
            client.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                    + "content-type: application/json\r\ncontent-length: " + STREAM.length() + "\r\n\r\n" + STREAM)
                    .getBytes(StandardCharsets.ISO_8859_1));
            assertThat(new String(client.getInputStream().readNBytes(12), StandardCharsets.ISO_8859_1))
                    .isEqualTo("HTTP/1.1 200");
            EndReasonsTest.awaitValue(f, v -> v == 1, "llm_sidecar_streams_paused_by_client");
            long pausedAt = System.nanoTime();
            while (System.nanoTime() - pausedAt < TimeUnit.SECONDS.toNanos(2)) { // 4 stall thresholds and more
                Scrape s = f.scrape();
                assertThat(s.sum("llm_sidecar_stalled_streams")).as("stalled streams while the client pauses").isZero();
                assertThat(s.sum("llm_sidecar_streams_paused_by_client")).isEqualTo(1);
                assertThat(s.sum("llm_sidecar_stream_longest_silence_seconds")).isLessThan(0.5);
                Thread.sleep(100);
            }
            client.setSoLinger(true, 0);
            client.close(); // the client leaves while it is not reading
            Scrape s = EndReasonsTest.awaitValue(f, v -> v == 1, "llm_sidecar_requests_total", "outcome",
                    "client_cancelled");
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "client_gone_mid_stream")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "stalled")).isZero();
            // the gauges read a scan at most 200 ms old: the ended stream leaves the next one
            EndReasonsTest.awaitValue(f, v -> v == 0, "llm_sidecar_streams_paused_by_client");
            f.assertNothingInFlight();
        }
    }
}
