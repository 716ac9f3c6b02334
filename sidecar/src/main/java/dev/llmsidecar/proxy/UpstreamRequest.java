package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ProxyEvent;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import org.jboss.logging.Logger;

/**
 * The client's request on its way upstream, up to the engine's response head: its head, edited in place into the
 * upstream request; its body ({@link RequestBody}: read whole for inspection, or piped with backpressure); what a
 * connection is given when one is taken; and whether it may go once more ({@link RetryRule}). It says what the
 * exchange does next ({@link Next}); the exchange keeps the life, the connection and the pool. Nothing of it is held
 * once the response starts. Confined to the exchange's event loop.
 */
final class UpstreamRequest {

    // the exchange's log category, as log settings name it
    private static final Logger LOG = Logger.getLogger("dev.llmsidecar.proxy.Exchange");

    /** What the exchange does next with the request. */
    enum Next {
        /** Nothing: more of the body is to come, or the piece went on. */
        WAIT,
        /** The body is read whole, for inspection, before the request goes. */
        GATHER,
        /** The request goes upstream now. */
        SEND,
        /** The body is over the cap: nothing more of it is read or sent. */
        TOO_LARGE
    }

    private final ExchangeContext context;
    private final ClientSide client;
    private final FlowControl flow;
    private final LlmCall llm;               // null: not an LLM call
    private final boolean http2;
    private final HttpVersion clientVersion;
    private final RequestBody body;
    private final RetryRule retry = new RetryRule();
    private HttpRequest head;                // until the response starts (a second attempt sends it again)

    /**
     * @param bodyFollows a body comes after the head (HTTP/1.x: a length or chunked framing; HTTP/2: the stream is
     *     not ended by its headers)
     */
    UpstreamRequest(ExchangeContext context, ClientSide client, FlowControl flow, LlmCall llm, HttpRequest head,
            boolean bodyFollows) {
        this.context = context;
        this.client = client;
        this.flow = flow;
        this.llm = llm;
        this.http2 = client.http2();
        this.clientVersion = head.protocolVersion();
        this.head = head;
        this.body = new RequestBody(bodyFollows, llm != null, context.maxRequestBodyBytes(),
                context.maxInspectedBodyBytes(), context.inspectBudget());
    }

    /** The request head arrived: a declared body over the cap is refused before a byte is read or sent. */
    Next start() {
        if (body.declaredTooLarge(declaredLength())) {
            return Next.TOO_LARGE;
        }
        Channel clientChannel = client.channel();
        if (HttpUtil.is100ContinueExpected(head) && !http2) {
            clientChannel.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE),
                    clientChannel.voidPromise());
        }
        if (body.mode() != RequestBody.Mode.NONE) {
            flow.requestBodyMoved(System.nanoTime()); // the body timeout runs while the body is read
        }
        if (body.mode() == RequestBody.Mode.INSPECT) {
            body.startGathering(clientChannel.alloc(), HttpUtil.isContentLengthSet(head) ? declaredLength() : -1);
            if (body.mode() == RequestBody.Mode.INSPECT) {
                return Next.GATHER; // the body arrives through onContent
            }
            // too large, or past the budget: piped; its timeline starts with the response, which says whether it
            // streams
            llm.notInspected(body.skipped() == RequestBody.Skipped.BUDGET);
        }
        return Next.SEND;
    }

    /** The declared Content-Length, 0 when absent or unreadable (the codec refuses those before us). */
    private long declaredLength() {
        try {
            return HttpUtil.getContentLength(head, 0L);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * A piece of the body from the client; takes its reference.
     *
     * @param upstream the connection the request went out on, or null while none is taken (the piece waits)
     */
    Next onContent(HttpContent content, UpstreamConnection upstream) {
        flow.requestBodyMoved(System.nanoTime());
        return switch (body.accept(content)) {
            case TOO_LARGE -> Next.TOO_LARGE;
            case WHOLE -> {
                ByteBuf read = body.gathered();
                body.holdWhole(llm.inspect(read, head.headers(), clientVersion), read);
                yield Next.SEND;
            }
            case TOO_LARGE_TO_INSPECT -> {
                // its timeline starts with the response, which says whether it streams
                llm.notInspected(body.skipped() == RequestBody.Skipped.BUDGET);
                yield Next.SEND;
            }
            case FORWARD -> {
                if (upstream == null) {
                    body.queue(content);
                    client.setAutoRead(false); // until the upstream connection takes what is queued
                } else {
                    writeBody(upstream.channel, content);
                }
                yield Next.WAIT;
            }
            case GATHERING, DROPPED -> Next.WAIT;
        };
    }

    private void writeBody(Channel upstream, HttpContent content) {
        upstream.write(content, upstream.voidPromise());
        flow.wroteRequestBody(upstream);
    }

    /** The client's read is complete: what it delivered of a piped body goes upstream in one flush. */
    void flushPiped(Channel upstream) {
        if (body.mode() == RequestBody.Mode.PIPE) {
            upstream.flush();
        }
    }

    /** Edits the client's request head into the upstream request: its hop, its host, its framing, its target. */
    void editForUpstream() {
        HttpHeaders h = head.headers();
        String clientAuthority = h.get(HttpHeaderNames.HOST);
        ForwardedHeaders.removeHopByHop(h);
        h.remove(HttpHeaderNames.EXPECT);
        if (llm != null) {
            llm.prepareUpstreamHeaders(h);
        }
        h.set(HttpHeaderNames.HOST, context.preserveHost() && clientAuthority != null ? clientAuthority
                : context.target().authority());
        if (body.whole()) {
            int length = body.wholeLength();
            if (length > 0 || h.contains(HttpHeaderNames.CONTENT_LENGTH) || http2 && body.ended()) {
                h.setInt(HttpHeaderNames.CONTENT_LENGTH, length);
            }
        } else if (!h.contains(HttpHeaderNames.CONTENT_LENGTH)) {
            h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        }
        head.setUri(context.target().requestUri(head.uri()));
        head.setProtocolVersion(HttpVersion.HTTP_1_1);
    }

    /**
     * The request is on its way: an LLM call whose body was inspected (or that has none) is in flight from now on; one
     * piped uninspected starts its timeline with the response.
     */
    void sent() {
        if (llm != null && body.skipped() == null) {
            llm.requestSent();
        }
    }

    /** A connection was taken: the head, then the body held whole or what of it waited, in one flush. */
    void writeTo(Channel ch) {
        ch.write(head, ch.voidPromise());
        if (body.whole()) {
            ch.write(body.wholeContent(), ch.voidPromise());
        } else {
            for (HttpContent c; (c = body.pollQueued()) != null;) {
                writeBody(ch, c);
            }
            if (!flow.pausedForUpstream()) {
                client.setAutoRead(true);
            }
        }
        ch.flush();
    }

    /** Whether the request goes once more after {@code failedOn} closed before any response ({@link RetryRule}). */
    boolean retryAfterClose(UpstreamConnection failedOn, Throwable cause) {
        if (!retry.retryAfterClose(body.whole(), failedOn.reused(), failedOn.nothingReadSinceStart(), cause)) {
            return false;
        }
        context.traffic().count(ProxyEvent.RETRY_CLOSED_BEFORE_RESPONSE);
        context.server().warnOnce("retry_closed_before_response", "a reused upstream connection closed before "
                + "responding (" + cause + "); the request was sent again on a new connection. Further retries are "
                + "counted in llm_sidecar_upstream_retries_total, not logged");
        return true;
    }

    /** The request failed before any response and goes no more: the error the client gets, warned of once a kind. */
    SidecarError failedBeforeResponse(Throwable cause) {
        SidecarError error = SidecarError.beforeResponse(cause);
        context.server().warnOnce(error.header, "upstream request failed before its response (" + error.header + ", "
                + cause + "); further ones are counted in llm_sidecar_http_requests_total{status_class=\"5xx\"}, not "
                + "logged");
        LOG.debugf("upstream request failed: %s", cause.toString());
        return error;
    }

    /** The request goes once more as the client wrote it (a rewrite's resend): its own body, the rewrite undone. */
    void backToTheClientsOwn() {
        retry.resent();
        body.backToTheClientsOwn();
        HttpHeaders h = head.headers();
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, body.wholeLength());
        llm.undoRewrite(h);
    }

    /**
     * The response started: nothing is sent again, so neither the body nor the head is kept (a few KB per open stream
     * with an SDK's headers).
     */
    void responseStarted() {
        body.release();
        head.headers().clear();
        head = null;
    }

    /** The exchange is over: what the body held goes. */
    void release() {
        body.release();
    }

    /** More of a body is to come from the client. */
    boolean bodyComing() {
        return body.mode() != RequestBody.Mode.NONE && !body.ended();
    }

    long maxBodyBytes() {
        return body.maxBytes();
    }
}
