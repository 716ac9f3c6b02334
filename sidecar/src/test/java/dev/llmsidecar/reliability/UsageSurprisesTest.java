package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.RawUpstream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/**
 * An engine that changes behaviour after the sidecar learned its layout: what the sidecar does with the injected
 * stream it did not expect, and that it stops injecting for that model afterwards.
 */
class UsageSurprisesTest {

    /**
     * GZIP_ALWAYS compresses every answer, whatever the request's Accept-Encoding says (identity included);
     * UNDECODABLE_ALWAYS labels every answer with a coding the sidecar cannot read (br; the bytes are never decoded).
     */
    enum Mode { CHUNKED, LENGTH, GZIP_ALWAYS, UNDECODABLE_ALWAYS, LLAMA_CPP_TIMINGS }

    static final String STREAM = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    static String body(boolean usageAsked, Mode mode) {
        String finish = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]"
                + (mode == Mode.LLAMA_CPP_TIMINGS && !usageAsked ? ",\"timings\":{\"prompt_n\":3}" : "") + "}\n\n";
        String usage = !usageAsked ? "" : "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,"
                + "\"completion_tokens\":1}" + (mode == Mode.LLAMA_CPP_TIMINGS ? ",\"timings\":{\"prompt_n\":3}" : "")
                + "}\n\n";
        return "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" + finish + usage
                + "data: [DONE]\n\n";
    }

    static RawUpstream engine(AtomicReference<Mode> mode) throws Exception {
        return new RawUpstream((r, s, out) -> {
            boolean asked = new String(r.body(), StandardCharsets.UTF_8).contains("\"include_usage\":true");
            Mode m = mode.get();
            byte[] entity = body(asked, m).getBytes(StandardCharsets.UTF_8);
            String head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n";
            if (m == Mode.GZIP_ALWAYS) {
                ByteArrayOutputStream z = new ByteArrayOutputStream();
                try (GZIPOutputStream gz = new GZIPOutputStream(z)) {
                    gz.write(entity);
                }
                entity = z.toByteArray();
                head += "content-encoding: gzip\r\n";
            } else if (m == Mode.UNDECODABLE_ALWAYS) {
                head += "content-encoding: br\r\n";
            }
            if (m != Mode.LENGTH) {
                out.write((head + "transfer-encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                RawUpstream.writeChunk(out, entity);
                RawUpstream.writeEnd(out);
            } else {
                out.write((head + "content-length: " + entity.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(entity);
                out.flush();
            }
        });
    }

    static ByteExactMatrixTest.Raw post(int port) throws Exception {
        return post(port, "");
    }

    /** @param headers extra request header lines, each ending in CRLF */
    static ByteExactMatrixTest.Raw post(int port, String headers) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setTcpNoDelay(true);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: "
                    + "application/json\r\n" + headers + "content-length: " + STREAM.length() + "\r\n\r\n" + STREAM)
                    .getBytes(StandardCharsets.US_ASCII));
            return ByteExactMatrixTest.read(s.getInputStream());
        }
    }

    /** Learns the layout on a plain chunked stream, then switches the engine to {@code later}. */
    static ByteExactMatrixTest.Raw afterLearning(ProxyFixture f, AtomicReference<Mode> mode, Mode later) throws Exception {
        assertThat(post(f.proxyPort).statusLine()).contains("200");
        mode.set(later);
        return post(f.proxyPort);
    }

    @Test
    void aContentLengthStreamFromWhichUsageIsRemovedIsReframedChunkedWithTheSameEntity() throws Exception {
        AtomicReference<Mode> mode = new AtomicReference<>(Mode.CHUNKED);
        try (RawUpstream raw = engine(mode);
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            ByteExactMatrixTest.Raw r = afterLearning(f, mode, Mode.LENGTH);
            assertThat(new String(r.entity(), StandardCharsets.UTF_8)).isEqualTo(body(false, Mode.LENGTH));
            assertThat(r.headers()).doesNotContainKey("content-length").containsEntry("transfer-encoding", "chunked");
            // learned: Content-Length streams are not injected again, so their framing stays too
            ByteExactMatrixTest.Raw next = post(f.proxyPort);
            assertThat(next.headers()).containsEntry("content-length", Integer.toString(body(false, Mode.LENGTH).length()));
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_usage_reframed_total")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_usage_injection_skipped_total", "reason", "content_length")).isEqualTo(1);
        }
    }

    /**
     * The leak this rules out: the engine learned as one that answers uncompressed, then compresses an injected
     * stream although the sidecar asked for identity. Compressed bytes cannot be edited, so the sidecar sends the
     * client's own request instead, before a byte of the compressed answer is forwarded: the client gets exactly
     * the bytes a direct connection gives, compressed bytes compared compressed.
     */
    @Test
    void anEngineThatCompressesAnInjectedStreamAnywayIsAskedAgainAsTheClientWroteIt() throws Exception {
        for (Mode compressing : new Mode[] {Mode.GZIP_ALWAYS, Mode.UNDECODABLE_ALWAYS}) {
            for (String accept : new String[] {"", "accept-encoding: gzip, deflate, br\r\n"}) {
                AtomicReference<Mode> mode = new AtomicReference<>(Mode.CHUNKED);
                try (RawUpstream raw = engine(mode);
                        ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
                    String what = compressing + " " + accept.trim();
                    // learning: one plain stream (for a client accepting compression it also shows none came)
                    assertThat(post(f.proxyPort, accept).statusLine()).contains("200");
                    int before = raw.requests.size();
                    mode.set(compressing);
                    ByteExactMatrixTest.Raw proxied = post(f.proxyPort, accept);
                    java.util.List<RawUpstream.Request> seen =
                            java.util.List.copyOf(raw.requests.subList(before, raw.requests.size()));
                    ByteExactMatrixTest.Raw direct = post(raw.server.getLocalPort(), accept);
                    ByteExactMatrixTest.assertSame(null, null, direct, proxied, false);
                    assertThat(proxied.headers()).as(what).containsKey("content-encoding");
                    // the engine got the edited request, asking for identity, then the client's own
                    assertThat(seen).as(what).hasSize(2);
                    assertThat(new String(seen.get(0).body(), StandardCharsets.UTF_8)).contains("\"include_usage\":true");
                    assertThat(seen.get(0).header("accept-encoding")).isEqualTo("identity");
                    assertThat(seen.get(1).body()).isEqualTo(STREAM.getBytes(StandardCharsets.UTF_8));
                    assertThat(seen.get(1).header("accept-encoding"))
                            .isEqualTo(accept.isEmpty() ? null : "gzip, deflate, br");
                    // learned: not injected again
                    ByteExactMatrixTest.Raw next = post(f.proxyPort, accept);
                    ByteExactMatrixTest.assertSame(null, null, direct, next, false);
                    assertThat(new String(raw.requests.get(raw.requests.size() - 1).body(), StandardCharsets.UTF_8))
                            .doesNotContain("include_usage");
                    Scrape s = f.settledScrape();
                    assertThat(s.sum("llm_sidecar_usage_injected_total")).as(what).isEqualTo(1);
                    assertThat(s.sum("llm_sidecar_upstream_retries_total", "reason", "compressed_after_injection"))
                            .as(what).isEqualTo(1);
                    assertThat(s.sum("llm_sidecar_usage_not_removed_total")).as(what).isZero();
                    assertThat(s.sum("llm_sidecar_usage_injection_skipped_total", "reason", "compression"))
                            .as(what).isEqualTo(1);
                    // the answer the client got is measured as one request; gzip is measured from an inflated copy
                    assertThat(s.sum("llm_sidecar_requests_total")).as(what).isEqualTo(3);
                    assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count")).as(what)
                            .isEqualTo(compressing == Mode.GZIP_ALWAYS ? 3 : 1);
                }
            }
        }
    }

    @Test
    void aUsageChunkThatCarriesMoreThanUsageStopsInjection() throws Exception {
        // llama.cpp: with include_usage its timings leave the final chunk for the usage chunk
        AtomicReference<Mode> mode = new AtomicReference<>(Mode.CHUNKED);
        try (RawUpstream raw = engine(mode);
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            afterLearning(f, mode, Mode.LLAMA_CPP_TIMINGS);
            ByteExactMatrixTest.Raw next = post(f.proxyPort);
            assertThat(new String(next.entity(), StandardCharsets.UTF_8)).isEqualTo(body(false, Mode.LLAMA_CPP_TIMINGS));
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_usage_not_removed_total", "reason", "layout")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_usage_injection_skipped_total", "reason", "layout")).isEqualTo(1);
        }
    }
}
