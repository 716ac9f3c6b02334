package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.RawUpstream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Events that arrive in one socket read (a fast engine, or a busy box where several accumulate) leave the sidecar
 * in one client write, as from nginx, not one write per SSE event; the bytes and the token timings are unchanged.
 */
class OneWritePerReadTest {

    static final String STREAM = RawUpstreamFaultsTest.STREAM;

    /** Chunked framing for every event, as one byte array: a single write() on loopback arrives as one read. */
    static byte[] framed(int from, int to, ByteArrayOutputStream sent) throws Exception {
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        for (int i = from; i < to; i++) {
            byte[] event = RawUpstreamFaultsTest.event(i);
            wire.write((Integer.toHexString(event.length) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            wire.write(event);
            wire.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
            sent.write(event);
        }
        return wire.toByteArray();
    }

    static RawUpstream burstThenSingle(ByteArrayOutputStream sent) throws Exception {
        return new RawUpstream((r, s, out) -> {
            RawUpstream.writeHead(out, "text/event-stream");
            Thread.sleep(100);
            writeAll(out, framed(0, 5, sent));
            Thread.sleep(500);
            writeAll(out, framed(5, 6, sent));
            Thread.sleep(200);
            RawUpstream.writeEnd(out);
        });
    }

    static void writeAll(OutputStream out, byte[] bytes) throws Exception {
        out.write(bytes);
        out.flush();
    }

    /** Sends a stream request on {@code path}; asserts the client got exactly the upstream's bytes. */
    static Scrape throughSidecar(String path) throws Exception {
        ByteArrayOutputStream sent = new ByteArrayOutputStream();
        try (RawUpstream raw = burstThenSingle(sent);
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            Received r = f.post(f.proxyPort, path, STREAM, Map.of());
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body().getBytes()).isEqualTo(sent.toByteArray());
            return f.scrape();
        }
    }

    @Test
    void eventsOfOneReadLeaveInOneWriteWithTheirBytesAndTokensIntact() throws Exception {
        Scrape s = throughSidecar("/v1/chat/completions");
        // one write for the five events of the first read, one for the sixth (not six writes), each made when its
        // read completed (not held until a later read, 500 ms on)
        assertThat(s.sum("llm_sidecar_chunk_write_delay_seconds_count")).isEqualTo(2);
        assertThat(s.sum("llm_sidecar_chunk_write_delay_seconds_bucket", "le", "0.05")).isEqualTo(2);
        // every event is still a token, timed when its read arrived
        assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "output")).isEqualTo(6);
        String gaps = "gen_ai_client_operation_time_per_output_chunk_seconds";
        assertThat(s.sum(gaps + "_count")).isEqualTo(5);
        // the five events of one read are stamped together (microseconds apart; 50 ms allows a GC pause), the
        // sixth ~500 ms after them
        assertThat(s.sum(gaps + "_bucket", "le", "0.05")).isEqualTo(4);
        assertThat(s.sum(gaps + "_bucket", "le", "0.3")).isEqualTo(4);
    }

    @Test
    void aPooledConnectionCarriesStreamsWhoseEndArrivesInTheSameReadAsTheirLastEvents() throws Exception {
        ByteArrayOutputStream[] sent = {new ByteArrayOutputStream(), new ByteArrayOutputStream()};
        int[] served = {0};
        try (RawUpstream raw = new RawUpstream((r, s, out) -> {
            // keep-alive: the same connection serves the next request
            out.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            Thread.sleep(50);
            ByteArrayOutputStream wire = new ByteArrayOutputStream();
            wire.write(framed(0, 3, sent[served[0]++]));
            wire.write("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            writeAll(out, wire.toByteArray());
        }, true);
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            for (int i = 0; i < 2; i++) {
                Received r = f.post(f.proxyPort, "/v1/chat/completions", STREAM, Map.of());
                assertThat(r.status()).isEqualTo(200);
                assertThat(r.body().getBytes()).isEqualTo(sent[i].toByteArray());
            }
            assertThat(raw.sockets).as("the second stream reused the pooled connection").hasSize(1);
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_chunk_write_delay_seconds_count")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_requests_total", "outcome", "ok")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_tokens_total", "token_type", "output")).isEqualTo(6);
        }
    }

    @Test
    void aPathTheSidecarDoesNotDecodeIsCoalescedToo() throws Exception {
        assertThat(throughSidecar("/other/stream").sum("llm_sidecar_chunk_write_delay_seconds_count")).isEqualTo(2);
    }
}
