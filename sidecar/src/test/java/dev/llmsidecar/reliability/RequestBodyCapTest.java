package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.RawUpstream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The request-body cap holds on every path: a declared length over it is refused before a byte is read or sent; a
 * chunked body that grows past it is cut, whether the sidecar was reading it for inspection or piping it upstream.
 */
class RequestBodyCapTest {

    static final int CAP = 256 * 1024;
    static final Map<String, String> CAPPED = Map.of("sidecar.proxy.max-request-body-bytes", Integer.toString(CAP),
            "sidecar.llm.max-inspected-body-bytes", Integer.toString(64 * 1024));

    static RawUpstream okUpstream() throws Exception {
        return new RawUpstream((r, s, out) -> {
            out.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
        });
    }

    /** Sends a request head (and {@code body}, then chunks of {@code chunked} bytes until refused); returns the answer. */
    static String exchange(int port, String path, String head, byte[] body, int chunked) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\n"
                    + head + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            try {
                if (body != null) {
                    out.write(body);
                }
                byte[] piece = new byte[16 * 1024];
                java.util.Arrays.fill(piece, (byte) 'x');
                for (int sent = 0; sent < chunked; sent += piece.length) {
                    out.write((Integer.toHexString(piece.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(piece);
                    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
                if (chunked > 0) {
                    out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
            } catch (SocketException refused) {
                // the sidecar answered and closed while we were still sending: what we want
            }
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            try {
                for (int n; (n = in.read(buf)) > 0;) {
                    got.write(buf, 0, n);
                }
            } catch (SocketException reset) {
                // closed after the answer
            }
            return got.toString(StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void aDeclaredLengthOverTheCapIsRefusedBeforeAnythingIsReadOrSent() throws Exception {
        try (RawUpstream raw = okUpstream();
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), CAPPED, raw.url())) {
            for (String path : new String[] {"/v1/chat/completions", "/v1/files"}) {
                String answer = exchange(f.proxyPort, path, "content-length: 104857600\r\n", null, 0);
                assertThat(answer).startsWith("HTTP/1.1 413").contains("x-llm-sidecar-error: request_body_too_large")
                        .contains("\"code\":413").contains("the limit is " + CAP + " bytes");
            }
            assertThat(raw.requests).as("the engine never saw them").isEmpty();
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_request_body_too_large_total", "when", "declared")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_http_requests_total", "status_class", "4xx")).isEqualTo(2);
        }
    }

    @Test
    void aChunkedBodyGrowingPastTheCapIsCutWhileInspectedOrPiped() throws Exception {
        try (RawUpstream raw = okUpstream();
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), CAPPED, raw.url())) {
            // an LLM body: read for inspection up to 64 KB, then piped: cut at the cap either way
            String llm = exchange(f.proxyPort, "/v1/chat/completions", "transfer-encoding: chunked\r\n",
                    null, 4 * CAP);
            assertThat(llm).startsWith("HTTP/1.1 413");
            // any other route: piped from the first byte
            String other = exchange(f.proxyPort, "/v1/files", "transfer-encoding: chunked\r\n", null, 4 * CAP);
            assertThat(other).startsWith("HTTP/1.1 413");
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_request_body_too_large_total", "when", "streamed")).isEqualTo(2);
            // what reached the engine was never a complete request: it saw no terminating chunk
            RawUpstreamFaultsTest.sleep(200);
            assertThat(raw.requests).isEmpty();
            // bodies under the cap still pass, chunked or not
            String ok = exchange(f.proxyPort, "/v1/files", "transfer-encoding: chunked\r\n", null, CAP / 2);
            assertThat(ok).doesNotStartWith("HTTP/1.1 413");
        }
    }

    @Test
    void aBodyJustUnderTheCapIsForwardedWhole() throws Exception {
        try (RawUpstream raw = okUpstream();
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), CAPPED, raw.url())) {
            byte[] body = new byte[CAP];
            java.util.Arrays.fill(body, (byte) 'y');
            String answer = exchange(f.proxyPort, "/v1/files", "content-length: " + CAP + "\r\n", body, 0);
            assertThat(answer).startsWith("HTTP/1.1 200").endsWith("ok");
            assertThat(raw.requests.get(0).body()).hasSize(CAP);
        }
    }
}
