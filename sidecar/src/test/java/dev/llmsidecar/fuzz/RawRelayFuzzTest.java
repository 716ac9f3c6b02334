package dev.llmsidecar.fuzz;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.proxy.EmbeddedProxy;
import dev.llmsidecar.rewrite.ExchangeRewrite;
import dev.llmsidecar.rewrite.Rewriter;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.WireFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.List;

/**
 * The raw relay against the object path and {@link ReferenceChunked}, on any chunked body (well formed, cut short, or
 * broken anywhere) cut into any reads, through the real handlers on embedded channels: a body the reference reads
 * whole reaches the client as the engine's very bytes through the relay and with the same entity (and the same token
 * events) through the codecs; no byte the reference rejects is ever relayed, and a broken body closes both
 * connections; with a decoder that cuts (as include_usage does) the client gets a well-framed body whose entity is
 * each chunk's data with the cut made. In every case the next request on the same pooled connection, or on a new one
 * when the first was closed, gets its own answer, byte for byte, and nothing of the first.
 */
class RawRelayFuzzTest {

    private static final String HEAD = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            + "transfer-encoding: chunked\r\n\r\n";
    static final String NEXT_ENTITY = "data: {\"choices\":[{\"delta\":{\"content\":\"next\"}}]}\n\n";
    private static final String NEXT = HEAD + Integer.toHexString(NEXT_ENTITY.length()) + "\r\n" + NEXT_ENTITY
            + "\r\n0\r\n\r\n";
    private static final String CUT = "CUT";

    @FuzzTest
    @DictionaryEntries({"\\r\\n", "0\\r\\n\\r\\n", "data: ", "\\n\\n", ";", "=", "\"", "CUT", "x-t: 1\\r\\n",
            "{\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}", "[DONE]"})
    void theRawRelayAgreesWithTheReferenceAndTheObjectPath(FuzzedDataProvider data) {
        boolean llmRoute = data.consumeBoolean();
        boolean cutting = llmRoute && data.consumeBoolean(); // a rewrite applies to LLM routes only
        ReadSplits splits = ReadSplits.consume(data, 48);
        byte[] body = data.consumeRemainingAsBytes();
        ReferenceChunked.Reading ref = ReferenceChunked.read(body);

        Outcome raw = run(body, splits, true, cutting, llmRoute);
        String shown = Reads.text(body) + " in reads " + splits + (cutting ? ", cutting" : "");
        byte[] relayed = raw.body;
        switch (ref.verdict()) {
            case COMPLETE -> {
                if (!cutting) {
                    assertThat(relayed).as("the engine's bytes, up to the body's end: %s", shown)
                            .isEqualTo(Arrays.copyOf(body, ref.end()));
                } else {
                    ReferenceChunked.Reading got = ReferenceChunked.read(relayed);
                    assertThat(got.verdict()).as("a well-framed body: %s", shown)
                            .isEqualTo(ReferenceChunked.Verdict.COMPLETE);
                    assertThat(got.end()).isEqualTo(relayed.length);
                    assertThat(got.entity()).as("each chunk cut: %s", shown).isEqualTo(cutEach(ref.chunks()));
                }
                assertThat(raw.ended).as(shown).isEqualTo("OK 200");
                boolean extra = ref.end() < body.length;
                assertThat(raw.pooled).as("pooled again only without bytes after its end: %s", shown)
                        .isEqualTo(!extra);
                assertThat(raw.anomalies).as(shown).isEqualTo(extra ? 1 : 0);
                if (!cutting && !extra) {
                    Outcome object = run(body, splits, false, false, llmRoute);
                    assertThat(ReferenceChunked.read(object.body).entity()).as("the object path's entity: %s", shown)
                            .isEqualTo(ref.entity());
                    assertThat(raw.tokenChunks).as("token events: %s", shown).isEqualTo(object.tokenChunks);
                }
            }
            case INCOMPLETE -> {
                ReferenceChunked.Reading got = ReferenceChunked.read(relayed);
                assertThat(got.verdict()).as("a valid beginning relayed: %s", shown)
                        .isNotEqualTo(ReferenceChunked.Verdict.INVALID);
                if (!cutting) {
                    assertThat(relayed).as("every byte of a valid beginning goes at once: %s", shown).isEqualTo(body);
                }
                assertThat(raw.ended).as("cut when the upstream closed: %s", shown).isEqualTo("UPSTREAM_BROKEN 200");
            }
            case INVALID -> {
                assertThat(relayed.length).as(shown).isLessThan(body.length);
                assertThat(ReferenceChunked.read(relayed).verdict()).as("no rejected byte relayed: %s", shown)
                        .isNotEqualTo(ReferenceChunked.Verdict.INVALID);
                if (!cutting) {
                    assertThat(relayed).as("a prefix of the engine's bytes: %s", shown)
                            .isEqualTo(Arrays.copyOf(body, relayed.length));
                }
                assertThat(raw.ended).as(shown).isEqualTo("UPSTREAM_BROKEN 200");
                assertThat(raw.anomalies).as(shown).isEqualTo(1);
                assertThat(raw.pooled).isFalse();
            }
        }
        assertThat(raw.next).as("the next request's own answer: %s", shown).isEqualTo(NEXT_ENTITY);
    }

    private static byte[] cutEach(List<byte[]> chunks) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] c : chunks) {
            out.writeBytes(new String(c, ISO_8859_1).replace(CUT, "").getBytes(ISO_8859_1));
        }
        return out.toByteArray();
    }

    /**
     * What one exchange did: the client's body bytes, how it ended, whether its upstream connection went back to the
     * pool, the anomalies counted, the token events, and the entity of the next request's answer.
     */
    record Outcome(byte[] body, String ended, boolean pooled, long anomalies, int tokenChunks, String next) {
    }

    static Outcome run(byte[] body, ReadSplits splits, boolean rawRelay, boolean cutting, boolean llmRoute) {
        try (EmbeddedProxy proxy = new EmbeddedProxy(cutting ? cutting() : Rewriter.NONE, rawRelay)) {
            String path = llmRoute ? "/v1/chat/completions" : "/other";
            String req = "POST " + path + " HTTP/1.1\r\nhost: s\r\ncontent-type: application/json\r\n"
                    + "content-length: 2\r\n\r\n{}";
            proxy.fromClient(req.getBytes(ISO_8859_1));
            EmbeddedProxy.written(proxy.upstreams.get(0));
            byte[] head = HEAD.getBytes(ISO_8859_1);
            proxy.fromUpstream(0, head, 0, head.length);
            for (int[] read : splits.reads(body.length)) {
                if (!proxy.upstreams.get(0).isActive()) {
                    break;
                }
                proxy.fromUpstream(0, body, read[0], read[1]);
            }
            if (proxy.inFlight() > 0) {
                proxy.upstreams.get(0).close(); // the engine goes away with the body unfinished
            }
            String response = EmbeddedProxy.text(EmbeddedProxy.written(proxy.client()));
            int bodyAt = response.indexOf("\r\n\r\n") + 4;
            byte[] got = response.substring(bodyAt).getBytes(ISO_8859_1);
            String ended = proxy.traffic.ended.get(0);
            boolean pooled = proxy.upstreams.get(0).isActive();

            if (!proxy.client().isActive()) {
                proxy.newClient();
            }
            proxy.fromClient(req.getBytes(ISO_8859_1));
            int conn = proxy.upstreams.size() - 1;
            assertThat(conn == 0).as("the pooled connection carries the next request").isEqualTo(pooled);
            EmbeddedProxy.written(proxy.upstreams.get(conn));
            byte[] next = NEXT.getBytes(ISO_8859_1);
            proxy.fromUpstream(conn, next, 0, next.length);
            String second = EmbeddedProxy.text(EmbeddedProxy.written(proxy.client()));
            String secondBody = second.substring(second.indexOf("\r\n\r\n") + 4);
            ReferenceChunked.Reading nextReading = ReferenceChunked.read(secondBody.getBytes(ISO_8859_1));
            return new Outcome(got, ended, pooled, proxy.traffic.counted(ProxyEvent.RELAY_FRAMING_ANOMALY),
                    proxy.traffic.tokenChunks, new String(nextReading.entity(), ISO_8859_1));
        }
    }

    /** A rewrite whose decoder cuts every "CUT" from each piece of data it is given, as include_usage cuts. */
    private static Rewriter cutting() {
        return request -> new ExchangeRewrite() {
            @Override
            public StreamDecoder decoder(WireFormat format, TokenEventSink sink, UpstreamResponse response) {
                return new StreamDecoder() {
                    @Override
                    public ByteBuf onChunk(ByteBuf chunk, long nanos) {
                        String s = chunk.toString(ISO_8859_1);
                        if (!s.contains(CUT)) {
                            return chunk;
                        }
                        chunk.release();
                        return Unpooled.copiedBuffer(s.replace(CUT, ""), ISO_8859_1);
                    }

                    @Override
                    public ByteBuf onData(ByteBuf read, int index, int length, long nanos) {
                        String s = read.toString(index, length, ISO_8859_1);
                        return s.contains(CUT) ? Unpooled.copiedBuffer(s.replace(CUT, ""), ISO_8859_1) : null;
                    }

                    @Override
                    public boolean edits() {
                        return true;
                    }

                    @Override
                    public ByteBuf onEnd(long nanos) {
                        return Unpooled.EMPTY_BUFFER;
                    }
                };
            }
        };
    }
}
