package dev.llmsidecar.proxy;

import static dev.llmsidecar.proxy.EmbeddedProxy.text;
import static dev.llmsidecar.proxy.EmbeddedProxy.written;
import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.rewrite.ExchangeRewrite;
import dev.llmsidecar.rewrite.Headers;
import dev.llmsidecar.rewrite.Rewriter;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.WireFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Whole exchanges through the real handlers, without a socket ({@link EmbeddedProxy}): the bytes that go upstream and
 * those the client gets, with the raw relay on and off, the one retry, a rewrite's resend, a client going away, and the
 * raw relay's own cases (the engine's framing kept, a rewrite's cut re-framed, framing anomalies).
 */
class ExchangeEmbeddedTest {

    private static final String BODY = "{\"model\":\"m\",\"stream\":true}";
    private static final String STREAM = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n";

    private EmbeddedProxy proxy;

    @AfterEach
    void close() {
        if (proxy != null) {
            proxy.close();
        }
    }

    private EmbeddedProxy start(Rewriter rewriter, boolean rawRelay) {
        proxy = new EmbeddedProxy(rewriter, rawRelay);
        return proxy;
    }

    private static String request(String body) {
        return "POST /v1/chat/completions HTTP/1.1\r\nhost: sidecar\r\ncontent-type: application/json\r\n"
                + "content-length: " + body.length() + "\r\n\r\n" + body;
    }

    private static final String HEAD = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            + "transfer-encoding: chunked\r\n\r\n";

    private static String chunked(String status, String entity) {
        return "HTTP/1.1 " + status + "\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                + Integer.toHexString(entity.length()) + "\r\n" + entity + "\r\n0\r\n\r\n";
    }

    private void client(String s) {
        proxy.fromClient(s.getBytes(ISO_8859_1));
    }

    private void upstream(int n, String s) {
        byte[] b = s.getBytes(ISO_8859_1);
        proxy.fromUpstream(n, b, 0, b.length);
    }

    private String toClient() {
        return text(written(proxy.client()));
    }

    private String toUpstream(int n) {
        return text(written(proxy.upstreams.get(n)));
    }

    @ParameterizedTest(name = "raw relay {0}")
    @ValueSource(booleans = {true, false})
    void aStreamGoesThroughWithItsEntityExactAndTheExchangeEndsOnce(boolean raw) {
        start(Rewriter.NONE, raw);
        client(request(BODY));
        assertThat(proxy.upstreams).hasSize(1);
        assertThat(toUpstream(0)).startsWith("POST /v1/chat/completions HTTP/1.1\r\n")
                .contains("host: engine.local:8000").endsWith("\r\n\r\n" + BODY);
        assertThat(proxy.inFlight()).isEqualTo(1);

        upstream(0, chunked("200 OK", STREAM));
        assertThat(toClient()).startsWith("HTTP/1.1 200 OK\r\n").contains("transfer-encoding: chunked")
                .contains(STREAM).endsWith("0\r\n\r\n");
        assertThat(proxy.traffic.ended).containsExactly("OK 200");
        assertThat(proxy.traffic.tokenChunks).isEqualTo(1);
        assertThat(proxy.inFlight()).as("out of flight once its response ended").isZero();
        assertThat(proxy.upstreams.get(0).isActive()).as("back in the pool, open").isTrue();
        assertThat(proxy.traffic.counted(ProxyEvent.RELAY_FALLBACK_DISABLED)).isEqualTo(raw ? 0 : 1);
    }

    @ParameterizedTest(name = "raw relay {0}")
    @ValueSource(booleans = {true, false})
    void aReusedConnectionThatClosesBeforeAByteIsRetriedOnceOnAFreshOne(boolean raw) {
        start(Rewriter.NONE, raw);
        client(request(BODY));
        toUpstream(0);
        upstream(0, chunked("200 OK", STREAM));
        toClient();

        client(request(BODY));
        assertThat(proxy.upstreams).as("the pooled connection is reused").hasSize(1);
        toUpstream(0);
        proxy.upstreams.get(0).close(); // the keep-alive race: the engine closed it as the request went out
        assertThat(proxy.upstreams).as("sent again on a new connection").hasSize(2);
        assertThat(toUpstream(1)).endsWith("\r\n\r\n" + BODY);
        assertThat(proxy.traffic.counted(ProxyEvent.RETRY_CLOSED_BEFORE_RESPONSE)).isEqualTo(1);

        upstream(1, chunked("200 OK", STREAM));
        assertThat(toClient()).contains(STREAM);
        assertThat(proxy.traffic.ended).containsExactly("OK 200", "OK 200");
        assertThat(proxy.inFlight()).isZero();
    }

    @Test
    void aRewriteThatWillNotHaveTheAnswerGetsTheClientsOwnRequestSentInstead() {
        String edited = "{\"model\":\"m\",\"stream\":true,\"edited\":1}";
        List<String> seen = new ArrayList<>();
        start(request -> new ExchangeRewrite() {
            @Override
            public ByteBuf requestBody(ByteBuf clientBody) {
                return Unpooled.copiedBuffer(edited, ISO_8859_1);
            }

            @Override
            public void requestHeaders(Headers upstream) {
                upstream.set("x-edited", "yes");
            }

            @Override
            public Verdict responseHead(int status, Headers response) {
                seen.add("head " + status);
                return status == 400 ? Verdict.RESEND_AS_THE_CLIENT_WROTE_IT : Verdict.FORWARD;
            }

            @Override
            public void undo(Headers upstream) {
                upstream.remove("x-edited");
            }

            @Override
            public void ended(boolean completedStream) {
                seen.add("ended " + completedStream);
            }
        }, true);
        client(request(BODY));
        assertThat(toUpstream(0)).contains("x-edited: yes").contains("content-length: " + edited.length())
                .endsWith("\r\n\r\n" + edited);

        upstream(0, "HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}");
        assertThat(toClient()).as("nothing of the refused answer reaches the client").isEmpty();
        assertThat(proxy.upstreams.get(0).isActive()).as("the abandoned answer's connection is closed").isFalse();
        assertThat(proxy.upstreams).hasSize(2);
        assertThat(toUpstream(1)).doesNotContain("x-edited").contains("content-length: " + BODY.length())
                .endsWith("\r\n\r\n" + BODY);

        upstream(1, chunked("200 OK", STREAM));
        assertThat(toClient()).contains(STREAM);
        assertThat(seen).containsExactly("head 400", "head 200", "ended true");
        assertThat(proxy.traffic.ended).containsExactly("OK 200");
    }

    @ParameterizedTest(name = "raw relay {0}")
    @ValueSource(booleans = {true, false})
    void theClientGoingAwayCutsTheUpstreamAndEndsTheExchangeAsCancelled(boolean raw) {
        start(Rewriter.NONE, raw);
        client(request(BODY));
        toUpstream(0);
        upstream(0, HEAD + Integer.toHexString(STREAM.length()) + "\r\n" + STREAM + "\r\n");
        assertThat(toClient()).contains(STREAM);
        proxy.client().close();
        assertThat(proxy.traffic.ended).containsExactly("CLIENT_CANCELLED 200");
        assertThat(proxy.upstreams.get(0).isActive()).as("the engine stops generating").isFalse();
        assertThat(proxy.inFlight()).isZero();
    }

    // ---------------------------------------------------------------------------------------------- the raw relay

    /** The engine's chunks, extensions, trailers and read boundaries, as the engine wrote them. */
    static final String FRAMED = "7;ext=1\r\ndata: a\r\n2\r\n\n\n\r\n" + Integer.toHexString(STREAM.length()) + "\r\n"
            + STREAM + "\r\n0\r\nx-trailer: t\r\n\r\n";

    @Test
    void theRelayedBodyIsTheEngineBytesFramingIncluded() {
        start(Rewriter.NONE, true);
        client(request(BODY));
        toUpstream(0);
        String wire = HEAD + FRAMED;
        for (int cut = HEAD.length(); cut < wire.length(); cut += 5) { // reads of 5 bytes, after the head's
            upstream(0, wire.substring(cut == HEAD.length() ? 0 : cut, Math.min(wire.length(), cut + 5)));
        }
        String got = toClient();
        assertThat(got.substring(got.indexOf("\r\n\r\n") + 4)).isEqualTo(FRAMED);
        assertThat(proxy.traffic.ended).containsExactly("OK 200");
        assertThat(proxy.traffic.tokenChunks).isEqualTo(1);
        assertThat(proxy.upstreams.get(0).isActive()).isTrue();

        // the pooled connection's next response is read from its head again
        client(request(BODY));
        assertThat(proxy.upstreams).hasSize(1);
        toUpstream(0);
        upstream(0, chunked("200 OK", STREAM));
        assertThat(toClient()).contains(STREAM).endsWith("0\r\n\r\n");
        assertThat(proxy.traffic.ended).containsExactly("OK 200", "OK 200");
    }

    @Test
    void withoutTheRelayTheSidecarFramesTheSameEntityItself() {
        start(Rewriter.NONE, false);
        client(request(BODY));
        toUpstream(0);
        upstream(0, HEAD + FRAMED);
        String got = toClient();
        String body = got.substring(got.indexOf("\r\n\r\n") + 4);
        assertThat(body).isNotEqualTo(FRAMED).doesNotContain("ext=1").contains("data: a").contains(STREAM)
                .endsWith("0\r\nx-trailer: t\r\n\r\n");
    }

    @Test
    void aFramingAnomalyRelaysWhatCameBeforeAndClosesBothConnections() {
        start(Rewriter.NONE, true);
        client(request(BODY));
        toUpstream(0);
        upstream(0, HEAD + "5\r\nhello\r\n3\nabc\r\n0\r\n\r\n"); // a bare LF after the second size
        String got = toClient();
        assertThat(got.substring(got.indexOf("\r\n\r\n") + 4)).isEqualTo("5\r\nhello\r\n3");
        assertThat(proxy.client().isActive()).as("the client sees the cut").isFalse();
        assertThat(proxy.upstreams.get(0).isActive()).as("never back in the pool").isFalse();
        assertThat(proxy.traffic.ended).containsExactly("UPSTREAM_BROKEN 200");
        assertThat(proxy.traffic.counted(ProxyEvent.RELAY_FRAMING_ANOMALY)).isEqualTo(1);
    }

    @Test
    void bytesAfterTheLastChunkEndTheBodyAndKeepTheConnectionOutOfThePool() {
        start(Rewriter.NONE, true);
        client(request(BODY));
        toUpstream(0);
        upstream(0, HEAD + "5\r\nhello\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n");
        String got = toClient();
        assertThat(got.substring(got.indexOf("\r\n\r\n") + 4)).isEqualTo("5\r\nhello\r\n0\r\n\r\n");
        assertThat(proxy.traffic.ended).containsExactly("OK 200");
        assertThat(proxy.upstreams.get(0).isActive()).isFalse();
        assertThat(proxy.traffic.counted(ProxyEvent.RELAY_FRAMING_ANOMALY)).isEqualTo(1);

        client(request(BODY));
        assertThat(proxy.upstreams).as("a new connection for the next request").hasSize(2);
    }

    /** A decoder that cuts every "CUT" from the stream, as include_usage cuts its chunk: it edits. */
    static final class Cutting implements StreamDecoder {
        @Override
        public ByteBuf onChunk(ByteBuf chunk, long nanos) {
            String s = chunk.toString(ISO_8859_1);
            if (!s.contains("CUT")) {
                return chunk;
            }
            chunk.release();
            return Unpooled.copiedBuffer(s.replace("CUT", ""), ISO_8859_1);
        }

        @Override
        public ByteBuf onData(ByteBuf read, int index, int length, long nanos) {
            String s = read.toString(index, length, ISO_8859_1);
            return s.contains("CUT") ? Unpooled.copiedBuffer(s.replace("CUT", ""), ISO_8859_1) : null;
        }

        @Override
        public boolean edits() {
            return true;
        }

        @Override
        public ByteBuf onEnd(long nanos) {
            return Unpooled.EMPTY_BUFFER;
        }
    }

    private static Rewriter cutting() {
        return request -> new ExchangeRewrite() {
            @Override
            public StreamDecoder decoder(WireFormat format, TokenEventSink sink, UpstreamResponse response) {
                return new Cutting();
            }

            @Override
            public boolean editsResponseBody() {
                return true;
            }
        };
    }

    @Test
    void aChunkARewriteCutsGoesFramedAnewAndTheOthersAsTheyCame() {
        start(cutting(), true);
        client(request(BODY));
        toUpstream(0);
        String wire = HEAD + "3\r\nabc\r\n6\r\nxCUTyz\r\n4;e=1\r\ndefg\r\n0\r\n\r\n";
        // the second chunk arrives in two reads: it waits for its end before the decoder sees it
        int split = wire.indexOf("xCU") + 2;
        upstream(0, wire.substring(0, split));
        upstream(0, wire.substring(split));
        String got = toClient();
        assertThat(got.substring(got.indexOf("\r\n\r\n") + 4)).isEqualTo("3\r\nabc\r\n3\r\nxyz\r\n4;e=1\r\ndefg\r\n0\r\n\r\n");
        assertThat(proxy.traffic.counted(ProxyEvent.RELAY_REFRAMED)).isEqualTo(1);
        assertThat(proxy.upstreams.get(0).isActive()).isTrue();
    }

    @Test
    void aChunkTooLargeToWaitForIsDecodedAsItComesAndFramedAnew() {
        start(cutting(), true);
        client(request(BODY));
        toUpstream(0);
        int size = RawRelay.MAX_HELD_BYTES + 10;
        String data = "a".repeat(size - 3) + "CUT";
        String wire = HEAD + Integer.toHexString(size) + "\r\n" + data + "\r\n0\r\n\r\n";
        int first = HEAD.length() + RawRelay.MAX_HELD_BYTES + 5;
        upstream(0, wire.substring(0, first));
        upstream(0, wire.substring(first));
        String got = toClient();
        String body = got.substring(got.indexOf("\r\n\r\n") + 4);
        assertThat(dechunk(body)).isEqualTo("a".repeat(size - 3));
        assertThat(body).endsWith("0\r\n\r\n");
        assertThat(proxy.traffic.ended).containsExactly("OK 200");
    }

    /** The entity of a chunked body. */
    static String dechunk(String body) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (true) {
            int eol = body.indexOf("\r\n", i);
            int size = Integer.parseInt(body.substring(i, eol).split(";")[0], 16);
            if (size == 0) {
                return out.toString();
            }
            out.append(body, eol + 2, eol + 2 + size);
            i = eol + 2 + size + 2;
        }
    }

    @Test
    void aBodyWithoutChunkedFramingGoesThroughTheCodecsAndIsCounted() {
        start(Rewriter.NONE, true);
        client(request(BODY));
        toUpstream(0);
        upstream(0, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}");
        assertThat(toClient()).endsWith("\r\n\r\n{}");
        assertThat(proxy.traffic.counted(ProxyEvent.RELAY_FALLBACK_NOT_CHUNKED)).isEqualTo(1);
    }
}
