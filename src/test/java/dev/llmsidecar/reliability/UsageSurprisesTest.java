package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
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

    enum Mode { CHUNKED, LENGTH, GZIP_ALWAYS, LLAMA_CPP_TIMINGS }

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
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setTcpNoDelay(true);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: "
                    + "application/json\r\ncontent-length: " + STREAM.length() + "\r\n\r\n" + STREAM)
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
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_usage_reframed_total")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_usage_injection_skipped_total", "reason", "content_length")).isEqualTo(1);
        }
    }

    @Test
    void anEngineCompressingForAClientThatDidNotAskIsForwardedUntouchedAndNotInjectedAgain() throws Exception {
        AtomicReference<Mode> mode = new AtomicReference<>(Mode.CHUNKED);
        try (RawUpstream raw = engine(mode);
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            afterLearning(f, mode, Mode.GZIP_ALWAYS);
            ByteExactMatrixTest.Raw next = post(f.proxyPort);
            assertThat(next.headers()).containsEntry("content-encoding", "gzip");
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_usage_not_removed_total", "reason", "compressed")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_usage_injection_skipped_total", "reason", "compression")).isEqualTo(1);
            // both measured from the inflated copy: a first token each
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count")).isEqualTo(3);
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
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_usage_not_removed_total", "reason", "layout")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_usage_injection_skipped_total", "reason", "layout")).isEqualTo(1);
        }
    }
}
