package dev.llmsidecar.proxy;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.observe.RequestHead;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.rewrite.ExchangeRewrite;
import dev.llmsidecar.rewrite.Headers;
import dev.llmsidecar.rewrite.Rewriter;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.LlmRoutes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import java.net.URI;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One exchange at a time through the real handlers, without a socket: the client connection and each upstream
 * connection are Netty {@code EmbeddedChannel}s with the codecs the proxy installs, so what goes upstream and what the
 * client gets are the bytes on the wire, and every step runs in the test's thread.
 */
class ExchangeEmbeddedTest {

    private static final URI UPSTREAM = URI.create("http://engine.local:8000");
    private static final String BODY = "{\"model\":\"m\",\"stream\":true}";
    private static final String STREAM = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n";

    private final List<EmbeddedChannel> upstreams = new ArrayList<>();
    private final Recording traffic = new Recording();
    private final AtomicInteger inFlight = new AtomicInteger();
    private EmbeddedChannel client;

    /** The proxy's handlers on an embedded client connection; upstream connections embedded too, one per connect. */
    private void start(Rewriter rewriter) {
        client = new EmbeddedChannel();
        UpstreamTarget target = UpstreamTarget.of(UPSTREAM);
        ExchangeContext context = new ExchangeContext(traffic, rewriter, target, false, 1 << 20, 1 << 20, 1 << 20,
                TimeUnit.SECONDS.toNanos(30), new ExchangeContext.Server() {
                    @Override
                    public boolean draining() {
                        return false;
                    }

                    @Override
                    public void exchangeStarted() {
                        inFlight.incrementAndGet();
                    }

                    @Override
                    public void exchangeEnded() {
                        inFlight.decrementAndGet();
                    }

                    @Override
                    public void warnOnce(String kind, String message) {
                    }

                    @Override
                    public void logBug(String message, Throwable t) {
                        throw new AssertionError(message, t);
                    }
                });
        UpstreamPool pool = new UpstreamPool(client.eventLoop(), (loop, init) -> {
            EmbeddedChannel upstream = new EmbeddedChannel(init);
            upstreams.add(upstream);
            return upstream.newSucceededFuture();
        }, null, target.host(), target.port(), TimeUnit.SECONDS.toNanos(60), 8, () -> { }, () -> { });
        LoopResources loop = new LoopResources(pool, new LoopTimeouts(client.eventLoop(), context.upstreamIdleNanos()));
        client.pipeline().addLast(new HttpServerCodec(), new ClientChannelHandler(context,
                new LlmRoutes(new JsonFactory()), new ConnectionErrors(traffic), loop, false));
    }

    @AfterEach
    void close() {
        upstreams.forEach(EmbeddedChannel::finishAndReleaseAll);
        if (client != null) {
            client.finishAndReleaseAll();
        }
    }

    private static String request(String body) {
        return "POST /v1/chat/completions HTTP/1.1\r\nhost: sidecar\r\ncontent-type: application/json\r\n"
                + "content-length: " + body.length() + "\r\n\r\n" + body;
    }

    private static String chunked(String status, String entity) {
        return "HTTP/1.1 " + status + "\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                + Integer.toHexString(entity.length()) + "\r\n" + entity + "\r\n0\r\n\r\n";
    }

    private static ByteBuf bytes(String s) {
        return Unpooled.copiedBuffer(s, US_ASCII);
    }

    /** Everything a channel wrote (its outbound messages, as bytes). */
    private static String written(EmbeddedChannel ch) {
        StringBuilder out = new StringBuilder();
        for (Object m; (m = ch.readOutbound()) != null;) {
            ByteBuf b = (ByteBuf) m;
            out.append(b.toString(US_ASCII));
            b.release();
        }
        return out.toString();
    }

    @Test
    void aStreamGoesThroughWithItsEntityExactAndTheExchangeEndsOnce() {
        start(Rewriter.NONE);
        client.writeInbound(bytes(request(BODY)));
        assertThat(upstreams).hasSize(1);
        String sent = written(upstreams.get(0));
        assertThat(sent).startsWith("POST /v1/chat/completions HTTP/1.1\r\n").contains("host: engine.local:8000")
                .endsWith("\r\n\r\n" + BODY);
        assertThat(inFlight).hasValue(1);

        upstreams.get(0).writeInbound(bytes(chunked("200 OK", STREAM)));
        String got = written(client);
        assertThat(got).startsWith("HTTP/1.1 200 OK\r\n").contains("transfer-encoding: chunked")
                .contains(STREAM).endsWith("0\r\n\r\n");
        assertThat(traffic.ended).containsExactly("OK 200");
        assertThat(inFlight).as("out of flight once its response ended").hasValue(0);
        assertThat(upstreams.get(0).isActive()).as("back in the pool, open").isTrue();
    }

    @Test
    void aReusedConnectionThatClosesBeforeAByteIsRetriedOnceOnAFreshOne() {
        start(Rewriter.NONE);
        client.writeInbound(bytes(request(BODY)));
        written(upstreams.get(0));
        upstreams.get(0).writeInbound(bytes(chunked("200 OK", STREAM)));
        written(client);

        client.writeInbound(bytes(request(BODY)));
        assertThat(upstreams).as("the pooled connection is reused").hasSize(1);
        written(upstreams.get(0));
        upstreams.get(0).close(); // the keep-alive race: the engine closed it as the request went out
        assertThat(upstreams).as("sent again on a new connection").hasSize(2);
        assertThat(written(upstreams.get(1))).endsWith("\r\n\r\n" + BODY);
        assertThat(traffic.events.get(ProxyEvent.RETRY_CLOSED_BEFORE_RESPONSE)).isEqualTo(1);

        upstreams.get(1).writeInbound(bytes(chunked("200 OK", STREAM)));
        assertThat(written(client)).contains(STREAM);
        assertThat(traffic.ended).containsExactly("OK 200", "OK 200");
        assertThat(inFlight).hasValue(0);
    }

    @Test
    void aRewriteThatWillNotHaveTheAnswerGetsTheClientsOwnRequestSentInstead() {
        String edited = "{\"model\":\"m\",\"stream\":true,\"edited\":1}";
        List<String> seen = new ArrayList<>();
        start(request -> new ExchangeRewrite() {
            @Override
            public ByteBuf requestBody(ByteBuf clientBody) {
                return bytes(edited);
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
        });
        client.writeInbound(bytes(request(BODY)));
        assertThat(written(upstreams.get(0))).contains("x-edited: yes").contains("content-length: " + edited.length())
                .endsWith("\r\n\r\n" + edited);

        upstreams.get(0).writeInbound(bytes("HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}"));
        assertThat(written(client)).as("nothing of the refused answer reaches the client").isEmpty();
        assertThat(upstreams.get(0).isActive()).as("the abandoned answer's connection is closed").isFalse();
        assertThat(upstreams).hasSize(2);
        String again = written(upstreams.get(1));
        assertThat(again).doesNotContain("x-edited").contains("content-length: " + BODY.length())
                .endsWith("\r\n\r\n" + BODY);

        upstreams.get(1).writeInbound(bytes(chunked("200 OK", STREAM)));
        assertThat(written(client)).contains(STREAM);
        assertThat(seen).containsExactly("head 400", "head 200", "ended true");
        assertThat(traffic.ended).containsExactly("OK 200");
    }

    @Test
    void theClientGoingAwayCutsTheUpstreamAndEndsTheExchangeAsCancelled() {
        start(Rewriter.NONE);
        client.writeInbound(bytes(request(BODY)));
        written(upstreams.get(0));
        upstreams.get(0).writeInbound(bytes("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                + "transfer-encoding: chunked\r\n\r\n" + Integer.toHexString(STREAM.length()) + "\r\n" + STREAM
                + "\r\n"));
        assertThat(written(client)).contains(STREAM);
        client.close();
        assertThat(traffic.ended).containsExactly("CLIENT_CANCELLED 200");
        assertThat(upstreams.get(0).isActive()).as("the engine stops generating").isFalse();
        assertThat(inFlight).hasValue(0);
    }

    /** Records what the proxy reports: how each exchange ended, and the proxy events. */
    private static final class Recording implements TrafficObserver {
        final List<String> ended = new ArrayList<>();
        final Map<ProxyEvent, Long> events = new EnumMap<>(ProxyEvent.class);

        @Override
        public ExchangeObserver exchangeStarted(RequestHead head, LlmOperation operation, long receivedNanos) {
            return (outcome, status, nanos) -> ended.add(outcome.name() + " " + status);
        }

        @Override
        public void refused(boolean llmRoute, int status) {
            ended.add("refused " + status);
        }

        @Override
        public void count(ProxyEvent event, long n) {
            events.merge(event, n, Long::sum);
        }
    }
}
