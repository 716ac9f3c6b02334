package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.RawUpstream;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** A client too slow to read pauses the upstream (bounded buffering, no idle cut); 10 MB bodies pass untouched. */
class SlowClientAndBodiesTest {

    static final long UPSTREAM_LIMIT = 512L * 1024 * 1024;

    static byte[] event(long i) {
        return ("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token " + i + "\"}}]}\n\n")
                .getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aSlowClientPausesTheUpstreamAndGetsExactlyItsBytes() throws Exception {
        // the upstream writes as fast as the sidecar takes bytes; blocking writes stop when the path is full
        try (RawUpstream raw = new RawUpstream((r, s, out) -> {
            RawUpstream.writeHead(out, "text/event-stream");
            for (long i = 0; raw0().written.get() < UPSTREAM_LIMIT; i++) {
                byte[] e = event(i);
                RawUpstream.writeChunk(out, e);
                raw0().written.addAndGet(e.length);
            }
            RawUpstream.writeEnd(out);
        });
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(),
                        Map.of("sidecar.upstream.idle-timeout", "PT0.5S"), setRaw(raw).url())) {
            try (Socket client = new Socket()) {
                client.setReceiveBufferSize(4096);
                client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), f.proxyPort), 5000);
                client.setSoTimeout(10_000);
                String body = "{\"model\":\"m\",\"stream\":true,\"messages\":[]}";
                OutputStream out = client.getOutputStream();
                out.write(("POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                        + "content-length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = client.getInputStream();
                Dechunker d = new Dechunker(in);
                d.readHead();
                // slow phase: 10 bytes a second for 2.5 s, far longer than the 0.5 s idle timeout
                for (int i = 0; i < 30; i++) {
                    d.readBodyBytes(1);
                    Thread.sleep(100);
                }
                long written = raw.written.get();
                // unpaused, the upstream would have pushed its whole 512 MB over loopback in these 3 s; paused, only
                // the socket buffers on the way (kernel-autotuned, a few MB each) and one write queue hold bytes
                assertThat(written).as("upstream bytes written while the client read 10 bytes a second")
                        .isLessThan(32L * 1024 * 1024);
                // the stream was not cut as an upstream stall; now read fast and compare with what was sent
                d.readBodyBytes(4 * 1024 * 1024);
                byte[] got = d.body.toByteArray();
                ByteArrayOutputStream expected = new ByteArrayOutputStream();
                for (long i = 0; expected.size() < got.length; i++) {
                    expected.write(event(i));
                }
                assertThat(got).isEqualTo(Arrays.copyOf(expected.toByteArray(), got.length));
                assertThat(raw.written.get()).isGreaterThan(written);
            }
            // client gone: the upstream connection is reset at once, the upstream's next write fails
            RawUpstreamFaultsTest.waitUntil(() -> raw.closedAtNanos.get() != 0, 5);
            Scrape s = RawUpstreamFaultsTest.waitForOutcome(f, "client_cancelled");
            assertThat(s.sum("llm_sidecar_requests_in_flight")).isZero();
            // a write queued behind the slow reader is timed until its bytes reached the socket, seconds later
            String delay = "llm_sidecar_chunk_write_delay_seconds";
            assertThat(s.has(delay + "_bucket", "le", "1.0")).isTrue();
            assertThat(s.sum(delay + "_count") - s.sum(delay + "_bucket", "le", "1.0"))
                    .as("writes that took longer than 1 s to reach the client's socket").isPositive();
        }
    }

    @Test
    void tenMegabyteBodiesJsonOrNotAreForwardedExactly() throws Exception {
        try (RawUpstream raw = new RawUpstream((r, s, out) -> {
            byte[] answer = ("{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},"
                    + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}")
                    .getBytes(StandardCharsets.UTF_8);
            out.write(("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " + answer.length
                    + "\r\nconnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(answer);
            out.flush();
        });
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), ProxyFixture.pinned("big-model"), raw.url())) {
            char[] text = new char[10 * 1024 * 1024];
            Random random = new Random(5);
            for (int i = 0; i < text.length; i++) {
                text[i] = (char) ('a' + random.nextInt(26));
            }
            String json = "{\"model\":\"big-model\",\"messages\":[{\"role\":\"user\",\"content\":\"" + new String(text) + "\"}]}";
            Received r1 = ProxyFixture.await(f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions",
                    Buffer.buffer(json), Map.of()));
            assertThat(r1.status()).isEqualTo(200);
            assertThat(sha(raw.requests.get(0).body())).isEqualTo(sha(json.getBytes(StandardCharsets.UTF_8)));

            byte[] notJson = new byte[10 * 1024 * 1024];
            random.nextBytes(notJson);
            Received r2 = ProxyFixture.await(f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions",
                    Buffer.buffer(notJson), Map.of()));
            assertThat(r2.status()).isEqualTo(200);
            assertThat(sha(raw.requests.get(1).body())).isEqualTo(sha(notJson));

            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_requests_total", "model", "big-model", "outcome", "ok")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_body_inspection_skipped_total", "reason", "not_json")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_requests_total", "outcome", "ok")).isEqualTo(2);
        }
    }

    static String sha(byte[] b) throws Exception {
        return java.util.HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    private static RawUpstream current;

    private static RawUpstream setRaw(RawUpstream raw) {
        current = raw;
        return raw;
    }

    private static RawUpstream raw0() {
        return current;
    }

    /** Minimal HTTP/1.1 chunked response reader. */
    static final class Dechunker {
        final InputStream in;
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        int leftInChunk;

        Dechunker(InputStream in) {
            this.in = in;
        }

        void readHead() throws Exception {
            String head = "";
            while (!head.endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    throw new AssertionError("closed in head: " + head);
                }
                head += (char) b;
            }
            assertThat(head).startsWith("HTTP/1.1 200").containsIgnoringCase("transfer-encoding: chunked");
        }

        void readBodyBytes(int n) throws Exception {
            for (int i = 0; i < n; i++) {
                if (leftInChunk == 0) {
                    String size = RawUpstream.line(in);
                    if (size.isEmpty()) {
                        size = RawUpstream.line(in); // CRLF after the previous chunk
                    }
                    leftInChunk = Integer.parseInt(size.trim(), 16);
                    if (leftInChunk == 0) {
                        return;
                    }
                }
                int b = in.read();
                if (b < 0) {
                    throw new AssertionError("closed after " + body.size() + " bytes");
                }
                body.write(b);
                leftInChunk--;
            }
        }
    }
}
