package dev.llmsidecar.proxy;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.observe.RequestHead;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.rewrite.ExchangeRewrite;
import dev.llmsidecar.rewrite.Rewriter;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.LlmOperation;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The one end of a response body that arrived whole ({@code Exchange.responseEnded}), reached by each path: the
 * object path (the codecs) and the raw relay. Whichever path carried the body, the end is the same, in the same
 * order: the rewrite hears of it before the client has its last byte; the client has every byte, and its exchange is
 * out of flight, before the observer hears of the end; the read is timed once; the upstream connection goes back to
 * the pool only when it can carry another response. Through the real handlers ({@link EmbeddedProxy}), no socket.
 */
class ResponseEndTest {

    static final String BODY = "{\"model\":\"m\",\"stream\":true}";
    static final String REQUEST = "POST /v1/chat/completions HTTP/1.1\r\nhost: sidecar\r\ncontent-type: application/json"
            + "\r\ncontent-length: " + BODY.length() + "\r\n\r\n" + BODY;
    static final String STREAM = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n";

    static String response(String extraHeader, String after) {
        return "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n" + extraHeader
                + "\r\n" + Integer.toHexString(STREAM.length()) + "\r\n" + STREAM + "\r\n0\r\n\r\n" + after;
    }

    /** What each party had when the rewrite and the observer heard of the end. */
    final List<String> seen = new ArrayList<>();
    final List<Long> written = new ArrayList<>();
    final EmbeddedProxy.Recording recording = new EmbeddedProxy.Recording();
    EmbeddedProxy proxy;

    @AfterEach
    void close() {
        proxy.close();
    }

    /** What the client's socket got so far, left in place. */
    private String flushedToClient() {
        StringBuilder out = new StringBuilder();
        for (Object m : proxy.client().outboundMessages()) {
            ByteBuf b = (ByteBuf) m;
            out.append(b.toString(b.readerIndex(), b.readableBytes(), ISO_8859_1));
        }
        return out.toString();
    }

    private void start(boolean raw) {
        TrafficObserver traffic = new TrafficObserver() {
            @Override
            public ExchangeObserver exchangeStarted(RequestHead head, LlmOperation operation, long receivedNanos) {
                return new ExchangeObserver() {
                    @Override
                    public void written(long arrivedNanos, long writtenNanos) {
                        written.add(arrivedNanos);
                    }

                    @Override
                    public void ended(Outcome outcome, int status, long nanos) {
                        seen.add("observer: " + outcome + " " + status + ", client has the end "
                                + flushedToClient().endsWith("0\r\n\r\n") + ", in flight " + proxy.inFlight()
                                + ", timed reads " + written.size());
                    }
                };
            }

            @Override
            public void refused(boolean llmRoute, int status) {
            }

            @Override
            public void count(dev.llmsidecar.observe.TrafficEvent event, long n) {
                recording.count(event, n);
            }
        };
        Rewriter listening = request -> new ExchangeRewrite() {
            @Override
            public void ended(boolean completedStream) {
                seen.add("rewrite: completed " + completedStream + ", client has the end "
                        + flushedToClient().endsWith("0\r\n\r\n"));
            }
        };
        proxy = new EmbeddedProxy(traffic, listening, raw);
        proxy.fromClient(REQUEST.getBytes(ISO_8859_1));
        EmbeddedProxy.written(proxy.upstreams.get(0));
    }

    private void upstream(String s) {
        byte[] b = s.getBytes(ISO_8859_1);
        proxy.fromUpstream(0, b, 0, b.length);
    }

    @ParameterizedTest(name = "raw relay {0}")
    @ValueSource(booleans = {true, false})
    void eitherPathEndsTheSameWayAndPoolsTheConnection(boolean raw) {
        start(raw);
        upstream(response("", ""));

        assertThat(seen).containsExactly("rewrite: completed true, client has the end false",
                "observer: OK 200, client has the end true, in flight 0, timed reads 1");
        assertThat(EmbeddedProxy.text(EmbeddedProxy.written(proxy.client()))).contains(STREAM).endsWith("0\r\n\r\n");
        assertThat(proxy.upstreams.get(0).isActive()).as("back in the pool").isTrue();
        assertThat(recording.counted(ProxyEvent.RELAY_FALLBACK_DISABLED)).as("the path taken").isEqualTo(raw ? 0 : 1);

        // the pooled connection carries the next exchange, which ends the same way
        seen.clear();
        proxy.fromClient(REQUEST.getBytes(ISO_8859_1));
        assertThat(proxy.upstreams).hasSize(1);
        EmbeddedProxy.written(proxy.upstreams.get(0));
        upstream(response("", ""));
        assertThat(seen).containsExactly("rewrite: completed true, client has the end false",
                "observer: OK 200, client has the end true, in flight 0, timed reads 2");
    }

    @ParameterizedTest(name = "raw relay {0}: {1}")
    @CsvSource({"true, bytes after the body", "true, connection close", "false, connection close"})
    void eitherPathEndsWholeButClosesAnUpstreamThatCannotCarryAnotherResponse(boolean raw, String why) {
        start(raw);
        boolean bytesAfter = why.equals("bytes after the body"); // in the body's last read: the relay sees them
        upstream(response(bytesAfter ? "" : "connection: close\r\n", bytesAfter ? "HTTP/1.1 200 OK\r\n\r\n" : ""));

        assertThat(seen).containsExactly("rewrite: completed true, client has the end false",
                "observer: OK 200, client has the end true, in flight 0, timed reads 1");
        assertThat(EmbeddedProxy.text(EmbeddedProxy.written(proxy.client()))).contains(STREAM).endsWith("0\r\n\r\n");
        assertThat(proxy.upstreams.get(0).isActive()).as("closed, not pooled").isFalse();
        assertThat(proxy.client().isActive()).as("the client's connection serves its next request").isTrue();
        assertThat(recording.counted(ProxyEvent.RELAY_FRAMING_ANOMALY)).isEqualTo(bytesAfter ? 1 : 0);
    }
}
