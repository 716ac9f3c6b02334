package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.rewrite.ExchangeRewrite;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.LlmOperation;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/**
 * One client request and its upstream twin, from arrival to the last byte. Its life is one {@link ExchangeState};
 * the request body is a {@link RequestBody}, the response head's framing {@link ResponseFraming}, the response body a
 * {@link ResponseBody} (decoded, or relayed raw: chosen once at the head), the flow between the two connections
 * (flushes, pauses, timeouts) {@link FlowControl}, the one second attempt {@link RetryRule}, the LLM side of the bytes
 * (the rewrite hook, the decoder) its {@link LlmCall}. The client's request head is edited in place and sent upstream;
 * the engine's response head is edited in place and sent to the client. All calls run on the client connection's
 * event loop, which is also the upstream connection's.
 *
 * <p>Every response byte is timestamped where it reaches the exchange ({@link #onUpstream}, {@link #onUpstreamRaw})
 * and goes to the wire format's decoder with that time before it is forwarded. What one upstream read delivered goes
 * to the client in one flush when the read is complete ({@link #onUpstreamReadComplete}). A body that arrived whole
 * ends in {@link #responseEnded}, whichever path carried it; every other end goes through {@link #fail}. What is
 * measured goes to the exchange's {@link ExchangeObserver}.
 */
final class Exchange extends LoopTimeouts.Watched implements UpstreamConnection.Listener, UpstreamPool.Waiter {

    private static final Logger LOG = Logger.getLogger(Exchange.class);

    private final ExchangeContext context;
    private final LoopResources loop;
    private final TrafficObserver traffic;
    private final ClientSide client;
    private final Channel clientChannel;
    private final HttpVersion clientVersion;
    private final boolean http2;
    private final boolean headRequest;
    private final ExchangeObserver observer;
    private final LlmCall llm;
    private final RequestBody body;
    private final FlowControl flow;
    private final RetryRule retry = new RetryRule();

    private ExchangeState state = ExchangeState.REQUEST_HEAD;
    private HttpRequest request;             // until the response starts (a second attempt sends it again)
    private UpstreamConnection upstream;
    private ResponseBody responseBody;       // chosen once, at the response head
    private boolean closeAfter;              // the client's connection ends with this exchange
    private boolean upstreamKeepAlive;
    private int status;

    /**
     * @param bodyFollows a body comes after the head (HTTP/1.x: a length or chunked framing; HTTP/2: the stream is
     *     not ended by its headers)
     */
    Exchange(ExchangeContext context, LoopResources loop, ClientSide client, HttpRequest request, boolean bodyFollows,
            long receivedNanos, LlmOperation operation) {
        this.context = context;
        this.loop = loop;
        this.traffic = context.traffic();
        this.client = client;
        this.clientChannel = client.channel();
        this.request = request;
        this.clientVersion = request.protocolVersion();
        this.http2 = client.http2();
        this.headRequest = HttpMethod.HEAD.equals(request.method());
        this.observer = traffic.exchangeStarted(new NettyHeaders.Head(request), operation, receivedNanos);
        this.llm = operation == null ? null : new LlmCall(context, operation, observer);
        this.closeAfter = !http2 && (clientVersion == HttpVersion.HTTP_1_0 || !HttpUtil.isKeepAlive(request));
        this.body = new RequestBody(bodyFollows, llm != null, context.maxRequestBodyBytes(),
                context.maxInspectedBodyBytes(), context.inspectBudget());
        this.flow = new FlowControl(client, observer, context);
    }

    /** Where its life is (tests). */
    ExchangeState state() {
        return state;
    }

    private void moveTo(ExchangeState next) {
        state = state.to(next);
    }

    // ---------------------------------------------------------------------------------------------- request

    void start() {
        if (body.declaredTooLarge(declaredLength())) {
            bodyTooLarge(true); // before a byte is read or sent
            return;
        }
        if (HttpUtil.is100ContinueExpected(request) && !http2) {
            clientChannel.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE),
                    clientChannel.voidPromise());
        }
        if (body.mode() != RequestBody.Mode.NONE) {
            flow.requestBodyMoved(System.nanoTime());
            loop.timeouts().add(this); // the body timeout runs while the body is read
        }
        if (body.mode() == RequestBody.Mode.INSPECT) {
            body.startGathering(clientChannel.alloc(), HttpUtil.isContentLengthSet(request) ? declaredLength() : -1);
            if (body.mode() == RequestBody.Mode.INSPECT) {
                moveTo(ExchangeState.REQUEST_BODY);
                return; // the body arrives through onRequestContent
            }
            // too large, or past the budget: piped; its timeline starts with the response, which says whether it
            // streams
            llm.notInspected(body.skipped() == RequestBody.Skipped.BUDGET);
            sendUpstream(false);
            return;
        }
        sendUpstream(body.mode() == RequestBody.Mode.NONE);
        if (llm != null) {
            llm.requestSent();
        }
    }

    /** The declared Content-Length, 0 when absent or unreadable (the codec refuses those before us). */
    private long declaredLength() {
        try {
            return HttpUtil.getContentLength(request, 0L);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Request body from the client. The exchange owns {@code content}. */
    void onRequestContent(HttpContent content) {
        if (state.over()) {
            content.release();
            return;
        }
        flow.requestBodyMoved(System.nanoTime());
        switch (body.accept(content)) {
            case TOO_LARGE -> bodyTooLarge(false);
            case WHOLE -> inspectAndSend();
            case TOO_LARGE_TO_INSPECT -> {
                // its timeline starts with the response, which says whether it streams
                llm.notInspected(body.skipped() == RequestBody.Skipped.BUDGET);
                sendUpstream(false);
            }
            case FORWARD -> {
                if (upstream == null) {
                    body.queue(content);
                    client.setAutoRead(false); // until the upstream connection takes what is queued
                } else {
                    writeBody(content);
                }
            }
            case GATHERING, DROPPED -> {
            }
        }
    }

    /** The client's read is complete: what it delivered of the body goes upstream in one flush. */
    void onClientReadComplete() {
        if (upstream != null && body.mode() == RequestBody.Mode.PIPE && !state.over()) {
            upstream.channel.flush();
        }
    }

    private void writeBody(HttpContent content) {
        upstream.channel.write(content, upstream.channel.voidPromise());
        flow.wroteRequestBody(upstream.channel);
    }

    @Override
    public void onUpstreamWritable() {
        flow.upstreamWritable();
    }

    private void inspectAndSend() {
        ByteBuf read = body.gathered();
        body.holdWhole(llm.inspect(read, request.headers(), clientVersion), read);
        sendUpstream(true);
        llm.requestSent();
    }

    /**
     * Edits the client's request head into the upstream request and takes a connection for it.
     *
     * @param whole the body is held whole (or there is none) and may be sent again
     */
    private void sendUpstream(boolean whole) {
        moveTo(ExchangeState.SENT);
        HttpHeaders h = request.headers();
        String clientAuthority = h.get(HttpHeaderNames.HOST);
        ForwardedHeaders.removeHopByHop(h);
        h.remove(HttpHeaderNames.EXPECT);
        if (llm != null) {
            llm.prepareUpstreamHeaders(h);
        }
        h.set(HttpHeaderNames.HOST, context.preserveHost() && clientAuthority != null ? clientAuthority
                : context.target().authority());
        if (whole) {
            int length = body.wholeLength();
            if (length > 0 || h.contains(HttpHeaderNames.CONTENT_LENGTH) || http2 && body.ended()) {
                h.setInt(HttpHeaderNames.CONTENT_LENGTH, length);
            }
        } else if (!h.contains(HttpHeaderNames.CONTENT_LENGTH)) {
            h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        }
        request.setUri(context.target().requestUri(request.uri()));
        request.setProtocolVersion(HttpVersion.HTTP_1_1);
        armIdleTimer();
        loop.pool().acquire(this);
    }

    @Override
    public void connected(UpstreamConnection connection) {
        if (state != ExchangeState.SENT) {
            connection.endExchangeUnused();
            return;
        }
        upstream = connection;
        connection.startExchange(this);
        Channel ch = connection.channel;
        ch.write(request, ch.voidPromise());
        if (body.whole()) {
            ch.write(body.wholeContent(), ch.voidPromise());
        } else {
            for (HttpContent c; (c = body.pollQueued()) != null;) {
                writeBody(c);
            }
            if (!flow.pausedForUpstream()) {
                client.setAutoRead(true);
            }
        }
        ch.flush();
    }

    @Override
    public void failed(Throwable cause) {
        upstreamFailed(cause);
    }

    // ---------------------------------------------------------------------------------------------- response

    @Override
    public void onUpstream(HttpObject message) {
        long arrived = System.nanoTime();
        flow.upstreamMoved(arrived);
        if (message.decoderResult().isFailure()) {
            ReferenceCountUtil.release(message);
            Throwable cause = message.decoderResult().cause();
            upstream.close();
            onUpstreamClosed(cause);
            return;
        }
        if (message instanceof HttpResponse r) {
            onResponseHead(r, arrived);
        }
        if (message instanceof HttpContent content) {
            if (!state.responding()) {
                content.release();
                return;
            }
            moveTo(ExchangeState.STREAMING);
            onBodyStep(responseBody.onContent(content, arrived), arrived);
        }
    }

    /** A read of a body relayed raw: stamped here, as {@link #onUpstream} stamps a decoded piece. */
    @Override
    public void onUpstreamRaw(ByteBuf read) {
        long arrived = System.nanoTime();
        flow.upstreamMoved(arrived);
        if (!state.responding()) {
            read.release();
            return;
        }
        moveTo(ExchangeState.STREAMING);
        onBodyStep(responseBody.onRead(read, arrived), arrived);
    }

    private void onResponseHead(HttpResponse r, long now) {
        int code = r.status().code();
        if (code >= 100 && code < 200 && code != 101) {
            return; // interim (the sidecar never forwards Expect, so no 100): the real head follows
        }
        if (state != ExchangeState.SENT) {
            return;
        }
        if (llm != null && llm.verdict(code, r.headers()) == ExchangeRewrite.Verdict.RESEND_AS_THE_CLIENT_WROTE_IT) {
            resendAsTheClientWroteIt();
            return;
        }
        moveTo(ExchangeState.RESPONSE_HEAD);
        status = code;
        upstreamKeepAlive = HttpUtil.isKeepAlive(r);
        body.release();
        // no second attempt after a response byte: the request head is not needed any more (a few KB per open
        // stream with an SDK's headers)
        request.headers().clear();
        request = null;
        HttpHeaders h = r.headers();
        boolean bodyless = headRequest || code == 204 || code == 304 || code < 200;
        boolean chunked = HttpUtil.isTransferEncodingChunked(r); // as the upstream codec reads the body
        boolean reframe = llm != null && llm.onResponseHead(code, h, h.contains(HttpHeaderNames.CONTENT_LENGTH), now);
        ResponseFraming.Framed framed = ResponseFraming.frame(r, clientVersion, http2, bodyless, reframe,
                closeAfter || context.server().draining());
        closeAfter = framed.closeAfter();
        responseBody = bodyless ? new DecodedBody(clientChannel, llm, flow) : chooseBody(chunked, reframe);
        clientChannel.write(r, clientChannel.voidPromise());
        if (framed.streamed()) {
            // a streaming client sees the headers when the engine sends them, not with the first token
            clientChannel.flush();
        }
    }

    /** The raw relay where it can take the body; chosen before the head is written, which the client's codec needs. */
    private ResponseBody chooseBody(boolean chunked, boolean reframe) {
        ProxyEvent fallback = RelayedBody.fallback(context.rawRelay(), http2, clientVersion, reframe, chunked);
        if (fallback != null) {
            traffic.count(fallback);
            return new DecodedBody(clientChannel, llm, flow);
        }
        RelayedBody relayed = new RelayedBody(client, llm, flow, upstream, context);
        client.relayNextBody();
        upstream.relayBody();
        return relayed;
    }

    private void onBodyStep(ResponseBody.Step step, long arrived) {
        switch (step) {
            case MORE -> {
            }
            case END -> responseEnded(arrived, true);
            case END_UPSTREAM_SPENT -> responseEnded(arrived, false);
            case BROKEN -> upstreamFailed(new IOException("chunked framing: " + responseBody.anomaly()));
        }
    }

    @Override
    public void onUpstreamReadComplete() {
        flow.flushRead(upstream);
    }

    /** The client's connection can take more: the upstream read resumes. */
    void onClientWritable() {
        flow.clientWritable(upstream);
    }

    /**
     * The response body arrived whole, by either path: the one end of both. The upstream connection goes back to the
     * pool if it may carry another response, the client's serves its next request, and the observer is told last.
     *
     * @param upstreamReusable no byte followed the body on the upstream connection
     */
    private void responseEnded(long now, boolean upstreamReusable) {
        Outcome outcome = status >= 400 ? Outcome.UPSTREAM_ERROR : Outcome.OK;
        if (llm != null) {
            // what the stream taught the rewrite is known before the client has its last byte: a request the client
            // sends the moment it has it already finds it learned
            llm.finish(outcome);
        }
        flow.flushEnd(upstream);
        UpstreamConnection done = upstream;
        release(ExchangeState.ENDED, outcome);
        done.endExchange(this, upstreamReusable && upstreamKeepAlive, now);
        completeResponse();
        // the client has its end (and its connection's, if it asked to close) before the observer's work runs
        observer.ended(outcome, status, now);
    }

    // ---------------------------------------------------------------------------------------------- failures

    @Override
    public void onUpstreamClosed(Throwable cause) {
        if (!state.over()) {
            upstreamFailed(cause != null ? cause : new ClosedChannelException());
        }
    }

    /**
     * The upstream failed (no connection, closed, reset, silent past the idle timeout, a broken framing). Before the
     * head, a reused connection that closed before a single byte of response is the keep-alive race (the engine closed
     * the idle connection as the request went out, or, like llama.cpp's server, closes every connection after a
     * streamed response without saying so): the engine never read the request, so it goes once more on a new
     * connection ({@link RetryRule}); else the client gets the sidecar's error. After the head the client gets what
     * came, then the cut it would have seen directly.
     */
    private void upstreamFailed(Throwable cause) {
        if (state.over()) {
            return;
        }
        if (state.responding()) {
            LOG.debugf("upstream broke mid-response: %s", cause.toString());
            long now = System.nanoTime();
            if (responseBody != null) {
                responseBody.releaseHeld(); // what was held back reaches the client, as it would directly
            }
            flow.flushRead(upstream);
            fail(Outcome.UPSTREAM_BROKEN, now);
            resetClient();
            return;
        }
        UpstreamConnection failedOn = upstream;
        if (failedOn != null && retry.retryAfterClose(body.whole(), failedOn.reused(), failedOn.nothingReadSinceStart(),
                cause)) {
            traffic.count(ProxyEvent.RETRY_CLOSED_BEFORE_RESPONSE);
            context.server().warnOnce("retry_closed_before_response", "a reused upstream connection closed before "
                    + "responding (" + cause + "); the request was sent again on a new connection. Further retries "
                    + "are counted in llm_sidecar_upstream_retries_total, not logged");
            upstream = null;
            moveTo(ExchangeState.SENT);
            failedOn.endExchange(this, false, System.nanoTime());
            loop.pool().acquireFresh(this);
            return;
        }
        SidecarError error = SidecarError.beforeResponse(cause);
        context.server().warnOnce(error.header, "upstream request failed before its response (" + error.header + ", "
                + cause + "); further ones are counted in llm_sidecar_http_requests_total{status_class=\"5xx\"}, not "
                + "logged");
        LOG.debugf("upstream request failed: %s", cause.toString());
        status = error.status;
        fail(Outcome.UPSTREAM_ERROR, System.nanoTime());
        respondWith(error, null);
    }

    /**
     * The rewrite will not have the engine's answer go to the client (an edited request the engine refused, or answered
     * in a way that cannot be edited back). Nothing of the response has been forwarded (its head is in hand, not a body
     * byte), so that answer is abandoned (the engine stops generating) and the client's own request goes out instead,
     * on a new connection: the client gets exactly the response it would have got directly.
     */
    private void resendAsTheClientWroteIt() {
        UpstreamConnection abandoned = upstream;
        upstream = null;
        retry.resent();
        moveTo(ExchangeState.SENT);
        abandoned.endExchange(this, false, System.nanoTime());
        body.backToTheClientsOwn();
        HttpHeaders h = request.headers();
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, body.wholeLength());
        llm.undoRewrite(h);
        loop.pool().acquireFresh(this);
    }

    private void bodyTooLarge(boolean declared) {
        if (!state.over()) {
            status = SidecarError.BODY_TOO_LARGE.status; // unlike the body timeout, even after the engine's head
            refuseBody(declared ? ProxyEvent.BODY_TOO_LARGE_DECLARED : ProxyEvent.BODY_TOO_LARGE_STREAMED,
                    SidecarError.BODY_TOO_LARGE, Outcome.UPSTREAM_ERROR, "the limit is " + body.maxBytes()
                            + " bytes");
        }
    }

    /**
     * The request body is refused (over the cap, or paused past the body timeout): nothing more of it is read or sent
     * (the engine never sees it whole). The client gets the error and its connection closes, or its response is cut.
     */
    private void refuseBody(ProxyEvent counted, SidecarError error, Outcome outcome, String detail) {
        traffic.count(counted);
        client.setAutoRead(false);
        if (!state.responding()) {
            status = error.status;
        }
        fail(outcome, System.nanoTime());
        closeAfter = true;
        respondWith(error, detail);
    }

    /** The client gets the sidecar's own error, or, once the engine's head went out, the cut. */
    private void respondWith(SidecarError error, String detail) {
        if (state == ExchangeState.FAILED_AFTER_HEAD) {
            resetClient();
            return;
        }
        boolean close = closeAfter || context.server().draining();
        closeAfter = close;
        clientChannel.writeAndFlush(error.response(http2 ? HttpVersion.HTTP_1_1 : clientVersion, detail,
                close && !http2)).addListener(f -> completeResponse());
    }

    /** The client went away: the upstream request is cut at once, so the engine stops generating. */
    void onClientGone() {
        if (state == ExchangeState.CLOSED) {
            return;
        }
        if (!state.over()) {
            fail(Outcome.CLIENT_CANCELLED, System.nanoTime());
        }
        close();
    }

    /** The idle timeout runs from now: no bytes from upstream for that long fails the exchange. */
    private void armIdleTimer() {
        flow.upstreamMoved(System.nanoTime());
        loop.timeouts().add(this);
    }

    @Override
    void tick(long now) {
        if (state.over()) {
            loop.timeouts().remove(this);
            return;
        }
        boolean bodyComing = body.mode() != RequestBody.Mode.NONE && !body.ended();
        boolean bodyHeld = state == ExchangeState.SENT && upstream == null; // no connection to take it yet
        switch (flow.stalled(now, bodyComing, bodyHeld, state.requestSent())) {
            case REQUEST_BODY -> refuseBody(ProxyEvent.CLIENT_TIMEOUT_REQUEST_BODY,
                    SidecarError.REQUEST_BODY_TIMEOUT, Outcome.CLIENT_CANCELLED, "no body bytes for "
                            + context.requestBodyTimeoutNanos() / 1_000_000 + " ms");
            case CLIENT -> clientSendTimedOut(now);
            case UPSTREAM -> upstreamFailed(new TimeoutException("no upstream data for "
                    + flow.upstreamQuietNanos(now) / 1_000_000 + " ms"));
            case NONE -> {
            }
        }
    }

    /**
     * The client read nothing for the send timeout while the sidecar's writes to it were blocked: its stream is cut
     * and the engine's connection closed (the engine stops generating). What it had not read is dropped.
     */
    private void clientSendTimedOut(long now) {
        traffic.count(ProxyEvent.CLIENT_TIMEOUT_SEND);
        observer.clientStoppedReading();
        fail(Outcome.CLIENT_CANCELLED, now);
        close();
        if (!http2) {
            // a reset, not a FIN behind what the kernel still holds for a client that does not read (megabytes
            // there, delivered at the pace it reads): as nginx's reset_timedout_connection
            clientChannel.config().setOption(ChannelOption.SO_LINGER, 0);
        }
        clientChannel.close(); // not once written: the client is not reading (an HTTP/2 stream is reset)
    }

    // ---------------------------------------------------------------------------------------------- the end

    /** The response is complete on the client's side: the connection serves its next request, or closes. */
    private void completeResponse() {
        close();
        client.exchangeDone(this, closeAfter);
    }

    /**
     * Closes the client's connection mid-response (HTTP/1.x) or resets its stream (HTTP/2), once what was written
     * has been delivered.
     */
    private void resetClient() {
        close();
        client.exchangeDone(this, true);
    }

    /** Out of flight, once, whichever way it ended. */
    private void close() {
        if (state != ExchangeState.CLOSED) {
            moveTo(ExchangeState.CLOSED);
            context.server().exchangeEnded();
        }
    }

    /**
     * Ends the exchange any way but whole: its state says whether the engine's head had gone out, the observer hears
     * how it ended, and the upstream connection, if any, closes (never pooled).
     */
    private void fail(Outcome outcome, long now) {
        UpstreamConnection cut = upstream;
        release(state.failed(), outcome);
        observer.ended(outcome, status, now);
        if (cut != null) {
            cut.endExchange(this, false, now);
        }
    }

    /** What the exchange held goes; the observer is told by the caller. */
    private void release(ExchangeState end, Outcome outcome) {
        moveTo(end);
        upstream = null;
        body.release();
        if (responseBody != null) {
            responseBody.discard();
        }
        loop.timeouts().remove(this);
        if (llm != null) {
            llm.finish(outcome);
        }
    }
}
