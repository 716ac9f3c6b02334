package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.testkit.RawUpstream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The keep-alive race: an engine (uvicorn: 5 s) closes an idle connection just as the sidecar reuses it, and that
 * request fails. The sidecar must stop reusing a connection before the engine gives up on it.
 */
class StaleUpstreamConnectionTest {

    static final String PLAIN = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    static final byte[] ANSWER = ("{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
            + "\"content\":\"ok\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}")
            .getBytes(StandardCharsets.UTF_8);
    static final long ENGINE_KEEP_ALIVE_NANOS = 2_000_000_000L;

    /**
     * A persistent upstream that gives up on a connection idle for longer than its keep-alive: a request arriving
     * on it afterwards finds it closed, with no response (what the race looks like from the proxy).
     */
    static RawUpstream engineWithKeepAlive() throws Exception {
        Map<Socket, Long> lastResponse = new ConcurrentHashMap<>();
        return new RawUpstream((r, s, out) -> {
            Long last = lastResponse.get(s);
            if (last != null && System.nanoTime() - last > ENGINE_KEEP_ALIVE_NANOS) {
                s.close();
                return;
            }
            out.write(("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " + ANSWER.length
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(ANSWER);
            out.flush();
            lastResponse.put(s, System.nanoTime());
        }, true);
    }

    /** The sidecar in front of {@code raw} with the given upstream keep-alive. */
    static ProxyFixture sidecar(RawUpstream raw, String keepAlive) {
        return new ProxyFixture(EngineBehaviour.defaults(), Map.of("sidecar.upstream.keep-alive-timeout", keepAlive),
                raw.url());
    }

    /** A request sent once the engine has given up on the connection of the previous one. */
    static Received postAfterTheEnginesKeepAlive(ProxyFixture f) throws InterruptedException {
        Thread.sleep(ENGINE_KEEP_ALIVE_NANOS / 1_000_000 + 500);
        return f.post(f.proxyPort, "/v1/chat/completions", PLAIN, Map.of());
    }

    @Test
    void anIdleConnectionIsRetiredBeforeTheEngineClosesIt() throws Exception {
        try (RawUpstream raw = engineWithKeepAlive(); ProxyFixture f = sidecar(raw, "PT1S")) {
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", PLAIN, Map.of()).status()).isEqualTo(200);
            // back-to-back requests reuse the connection
            Received warm = f.post(f.proxyPort, "/v1/chat/completions", PLAIN, Map.of());
            assertThat(warm.body().getBytes()).isEqualTo(ANSWER);
            assertThat(raw.sockets).hasSize(1);
            Received later = postAfterTheEnginesKeepAlive(f);
            assertThat(later.status()).isEqualTo(200);
            assertThat(later.body().getBytes()).isEqualTo(ANSWER);
            assertThat(raw.sockets).as("a fresh connection after the idle one was retired").hasSize(2);
        }
    }

    /**
     * An engine without an idle timeout of its own (TGI's and Ollama's servers keep idle connections open): the
     * connection the sidecar retires is closed by the sidecar, once, and the next request reuses the new one. (A
     * retired connection that went back to the pool instead was taken, "retired" and recycled again by every later
     * request, each of which then paid a fresh connection of its own: after one quiet spell, for good.)
     */
    @Test
    void aRetiredConnectionIsClosedOnceAndItsSuccessorReused() throws Exception {
        try (RawUpstream raw = new RawUpstream((r, s, out) -> {
            out.write(("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " + ANSWER.length
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(ANSWER);
            out.flush();
        }, true); ProxyFixture f = sidecar(raw, "PT1.2S")) {
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", PLAIN, Map.of()).status()).isEqualTo(200);
            // idle past the sidecar's 1.2 s: the pool retires it (its sweep, or when taken)
            Thread.sleep(1_400);
            for (int i = 0; i < 3; i++) {
                Received r = f.post(f.proxyPort, "/v1/chat/completions", PLAIN, Map.of());
                assertThat(r.body().getBytes()).as("request %d", i).isEqualTo(ANSWER);
            }
            assertThat(f.scrape().sum("llm_sidecar_upstream_idle_connections_retired_total")).isEqualTo(1);
            assertThat(raw.sockets).as("the retired connection, then one reused by the three requests").hasSize(2);
            long deadline = System.nanoTime() + 2_000_000_000L;
            while (!raw.sockets.get(0).isClosed() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(raw.sockets.get(0).isClosed()).as("the retired connection is closed").isTrue();
            assertThat(raw.sockets.get(1).isClosed()).isFalse();
        }
    }

    @Test
    void aRequestWhoseReusedConnectionClosesBeforeAnyResponseByteIsSentOnceMoreOnANewOne() throws Exception {
        // a keep-alive longer than the engine's: the stale connection is reused and closes unanswered
        try (RawUpstream raw = engineWithKeepAlive(); ProxyFixture f = sidecar(raw, "PT60S")) {
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", PLAIN, Map.of()).status()).isEqualTo(200);
            Received later = postAfterTheEnginesKeepAlive(f);
            assertThat(later.status()).isEqualTo(200);
            assertThat(later.body().getBytes()).isEqualTo(ANSWER);
            assertThat(raw.sockets).as("the stale connection, then a new one").hasSize(2);
            assertThat(f.scrape().sum("llm_sidecar_upstream_retries_total", "reason", "closed_before_response"))
                    .isEqualTo(1);
            assertThat(f.proxy().inFlight()).isZero();
        }
    }

    /**
     * llama.cpp's server (the cpp-httplib of its commit de3ff815ea7d) closes the connection after every streamed
     * response without saying so: its content provider returns false after {@code sink.done()}, which cpp-httplib
     * reads as a cancel. The next request, sent on that connection before its FIN arrives, is never read.
     */
    static RawUpstream engineClosingAfterEveryStream() throws Exception {
        return new RawUpstream((r, s, out) -> {
            byte[] event = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n"
                    .getBytes(StandardCharsets.UTF_8);
            out.write(("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            RawUpstream.writeChunk(out, event);
            RawUpstream.writeEnd(out);
            Thread.sleep(2); // the close follows the last chunk, as the proxy may already be reusing the connection
            s.close();
        }, true);
    }

    @Test
    void anEngineThatClosesAfterEveryStreamCostsNoRequest() throws Exception {
        String stream = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        try (RawUpstream raw = engineClosingAfterEveryStream(); ProxyFixture f = sidecar(raw, "PT4S")) {
            for (int i = 0; i < 40; i++) {
                Received r = f.post(f.proxyPort, "/v1/chat/completions", stream, Map.of());
                assertThat(r.status()).as("request %d", i).isEqualTo(200);
                assertThat(r.text()).endsWith("data: [DONE]\n\n");
            }
            assertThat(f.scrape().sum("llm_sidecar_requests_total", "outcome", "ok")).isEqualTo(40);
            // the race happened (18 of 40 here): those requests were sent again on a new connection
            assertThat(f.scrape().sum("llm_sidecar_upstream_retries_total", "reason", "closed_before_response"))
                    .isPositive();
            assertThat(f.proxy().inFlight()).isZero();
        }
    }

    @Test
    void aStreamedBodyIsNotSentTwice() throws Exception {
        // a body the sidecar does not hold whole (not an LLM route: piped) cannot be sent again
        try (RawUpstream raw = engineWithKeepAlive(); ProxyFixture f = sidecar(raw, "PT60S")) {
            assertThat(f.post(f.proxyPort, "/v1/files", PLAIN, Map.of()).status()).isEqualTo(200);
            Thread.sleep(ENGINE_KEEP_ALIVE_NANOS / 1_000_000 + 500);
            Received later = f.post(f.proxyPort, "/v1/files", PLAIN, Map.of());
            assertThat(later.status()).isEqualTo(502);
            assertThat(later.headers().get("x-llm-sidecar-error")).isEqualTo("upstream_closed");
            assertThat(f.scrape().sum("llm_sidecar_upstream_retries_total")).isZero();
        }
    }

    /** Upstream connections used by three back-to-back requests with the given keep-alive. */
    static int connectionsForThreeRequests(String keepAlive) throws Exception {
        try (RawUpstream raw = engineWithKeepAlive(); ProxyFixture f = sidecar(raw, keepAlive)) {
            for (int i = 0; i < 3; i++) {
                assertThat(f.post(f.proxyPort, "/v1/chat/completions", PLAIN, Map.of()).body().getBytes())
                        .isEqualTo(ANSWER);
            }
            return raw.sockets.size();
        }
    }

    @Test
    void aSubSecondKeepAliveStillReusesConnections() throws Exception {
        // Vert.x counts whole seconds: PT0.5S must not round down to "no reuse"
        assertThat(connectionsForThreeRequests("PT0.5S")).isEqualTo(1);
    }

    @Test
    void aZeroKeepAliveUsesAConnectionPerRequest() throws Exception {
        assertThat(connectionsForThreeRequests("PT0S")).isEqualTo(3);
    }
}
