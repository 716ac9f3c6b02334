package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.rewrite.ExchangeRewrite;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.LlmOperation;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/**
 * One client request and its upstream twin, from arrival to the last byte. Its life is one {@link ExchangeState},
 * moved here only. The request on its way upstream is an {@link UpstreamRequest}; what the client gets (the engine's
 * head framed for it, or the sidecar's error) a {@link ClientResponse}; the response body a {@link ResponseBody},
 * decoded or relayed raw, chosen once at the head; the flow between the two connections (one flush per upstream read,
 * pauses, timeouts) a {@link FlowControl}; the LLM side of the bytes its {@link LlmCall}. All calls run on the client
 * connection's event loop, which is also the upstream connection's.
 *
 * <p>Every response byte is timestamped where it reaches the exchange ({@link #onUpstream}, {@link #onUpstreamRaw}).
 * A body that arrived whole ends in {@link #responseEnded}, whichever path carried it; every other end goes through
 * {@link #fail}. What is measured goes to the exchange's {@link ExchangeObserver}.
 */
final class Exchange extends LoopTimeouts.Watched implements UpstreamConnection.Listener, UpstreamPool.Waiter {

    private static final Logger LOG = Logger.getLogger(Exchange.class);

    private final ExchangeContext context;
    private final LoopResources loop;
    private final ClientSide client;
    private final ExchangeObserver observer;
    private final LlmCall llm;               // null: not an LLM call
    private final FlowControl flow;
    private final UpstreamRequest request;
    private final ClientResponse response;

    private ExchangeState state = ExchangeState.REQUEST_HEAD;
    private UpstreamConnection upstream;
    private ResponseBody responseBody;       // chosen once, at the response head
    private boolean upstreamKeepAlive;
    private int status;

    /** @param bodyFollows a body comes after the head ({@link UpstreamRequest}) */
    Exchange(ExchangeContext context, LoopResources loop, ClientSide client, HttpRequest head, boolean bodyFollows,
            long receivedNanos, LlmOperation operation) {
        this.context = context;
        this.loop = loop;
        this.client = client;
        this.observer = context.traffic().exchangeStarted(new NettyHeaders.Head(head), operation, receivedNanos);
        this.llm = operation == null ? null : new LlmCall(context, operation, observer);
        this.flow = new FlowControl(client, observer, context);
        this.response = new ClientResponse(context, client, head, llm, flow);
        this.request = new UpstreamRequest(context, client, flow, llm, head, bodyFollows);
    }

    private void moveTo(ExchangeState next) {
        state = state.to(next);
    }

    // ---------------------------------------------------------------------------------------------- request

    void start() {
        UpstreamRequest.Next next = request.start();
        if (next == UpstreamRequest.Next.TOO_LARGE) {
            bodyTooLarge(true); // before a byte is read or sent
            return;
        }
        loop.timeouts().add(this); // the body timeout while a body is read, then the upstream's silence
        if (next == UpstreamRequest.Next.GATHER) {
            moveTo(ExchangeState.REQUEST_BODY); // the body arrives through onRequestContent
        } else {
            sendUpstream();
        }
    }

    /** Request body from the client. The exchange owns {@code content}. */
    void onRequestContent(HttpContent content) {
        if (state.over()) {
            content.release();
            return;
        }
        switch (request.onContent(content, upstream)) {
            case TOO_LARGE -> bodyTooLarge(false);
            case SEND -> sendUpstream();
            case WAIT, GATHER -> {
            }
        }
    }

    /** The client's read is complete: what it delivered of the body goes upstream in one flush. */
    void onClientReadComplete() {
        if (upstream != null && !state.over()) {
            request.flushPiped(upstream.channel);
        }
    }

    @Override
    public void onUpstreamWritable() {
        flow.upstreamWritable();
    }

    /** The request goes upstream: its head is edited for it and a connection is taken. */
    private void sendUpstream() {
        moveTo(ExchangeState.SENT);
        request.editForUpstream();
        flow.upstreamMoved(System.nanoTime()); // the idle timeout runs from here
        loop.pool().acquire(this);
        request.sent();
    }

    @Override
    public void connected(UpstreamConnection connection) {
        if (state != ExchangeState.SENT) {
            connection.endExchangeUnused();
            return;
        }
        upstream = connection;
        connection.startExchange(this);
        request.writeTo(connection.channel);
    }

    /** The connection the request went out on is given up (closed, never pooled): the request waits for another. */
    private void abandon(UpstreamConnection old) {
        upstream = null;
        moveTo(ExchangeState.SENT);
        old.endExchange(this, false, System.nanoTime());
    }

    // ---------------------------------------------------------------------------------------------- response

    @Override
    public void onUpstream(HttpObject message) {
        long arrived = System.nanoTime();
        flow.upstreamMoved(arrived);
        if (message.decoderResult().isFailure()) {
            ReferenceCountUtil.release(message);
            upstream.close();
            onUpstreamClosed(message.decoderResult().cause());
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
        if (code >= 100 && code < 200 && code != 101 || state != ExchangeState.SENT) {
            return; // interim (the sidecar never forwards Expect, so no 100): the real head follows; or none awaited
        }
        if (llm != null && llm.verdict(code, r.headers()) == ExchangeRewrite.Verdict.RESEND_AS_THE_CLIENT_WROTE_IT) {
            // nothing of this answer was forwarded: it is abandoned (the engine stops generating) and the client's
            // own request goes instead, so the client gets exactly the response it would have got directly
            abandon(upstream);
            request.backToTheClientsOwn();
            loop.pool().acquireFresh(this);
            return;
        }
        moveTo(ExchangeState.RESPONSE_HEAD);
        status = code;
        upstreamKeepAlive = HttpUtil.isKeepAlive(r);
        request.responseStarted(); // no second attempt after a response byte
        responseBody = response.writeHead(r, now, upstream);
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
        clientDone(false);
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

    @Override
    public void failed(Throwable cause) {
        upstreamFailed(cause);
    }

    /**
     * The upstream failed (no connection, closed, reset, silent past the idle timeout, a broken framing). Before the
     * head the request goes once more if the keep-alive race explains it ({@link RetryRule}), else the client gets the
     * sidecar's error; after it the client gets what came, then the cut it would have seen directly.
     */
    private void upstreamFailed(Throwable cause) {
        if (state.over()) {
            return;
        }
        if (state.responding()) {
            LOG.debugf("upstream broke mid-response: %s", cause.toString());
            long now = System.nanoTime();
            if (responseBody != null) {
                responseBody.releaseHeld();
            }
            flow.flushRead(upstream);
            fail(Outcome.UPSTREAM_BROKEN, now);
            clientDone(true);
            return;
        }
        UpstreamConnection failedOn = upstream;
        if (failedOn != null && request.retryAfterClose(failedOn, cause)) {
            abandon(failedOn);
            loop.pool().acquireFresh(this);
            return;
        }
        SidecarError error = request.failedBeforeResponse(cause);
        status = error.status;
        fail(Outcome.UPSTREAM_ERROR, System.nanoTime());
        respondWith(error, null);
    }

    private void bodyTooLarge(boolean declared) {
        if (!state.over()) {
            status = SidecarError.BODY_TOO_LARGE.status; // unlike the body timeout, even after the engine's head
            refuseBody(declared ? ProxyEvent.BODY_TOO_LARGE_DECLARED : ProxyEvent.BODY_TOO_LARGE_STREAMED,
                    SidecarError.BODY_TOO_LARGE, Outcome.UPSTREAM_ERROR, "the limit is " + request.maxBodyBytes()
                            + " bytes");
        }
    }

    /**
     * The request body is refused (over the cap, or paused past the body timeout): nothing more of it is read or sent
     * (the engine never sees it whole). The client gets the error and its connection closes, or its response is cut.
     */
    private void refuseBody(ProxyEvent counted, SidecarError error, Outcome outcome, String detail) {
        context.traffic().count(counted);
        client.setAutoRead(false);
        if (!state.responding()) {
            status = error.status;
        }
        fail(outcome, System.nanoTime());
        response.closeAfter();
        respondWith(error, detail);
    }

    /** The client gets the sidecar's own error, or, once the engine's head went out, the cut. */
    private void respondWith(SidecarError error, String detail) {
        if (state == ExchangeState.FAILED_AFTER_HEAD) {
            clientDone(true);
        } else {
            response.writeError(error, detail).addListener(f -> clientDone(false));
        }
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

    @Override
    void tick(long now) {
        if (state.over()) {
            loop.timeouts().remove(this);
            return;
        }
        boolean bodyHeld = state == ExchangeState.SENT && upstream == null; // no connection to take it yet
        switch (flow.stalled(now, request.bodyComing(), bodyHeld, state.requestSent())) {
            case REQUEST_BODY -> refuseBody(ProxyEvent.CLIENT_TIMEOUT_REQUEST_BODY,
                    SidecarError.REQUEST_BODY_TIMEOUT, Outcome.CLIENT_CANCELLED, "no body bytes for "
                            + context.requestBodyTimeoutNanos() / 1_000_000 + " ms");
            case CLIENT -> {
                // its stream is cut and the engine's connection closed; what it had not read is dropped
                context.traffic().count(ProxyEvent.CLIENT_TIMEOUT_SEND);
                observer.clientStoppedReading();
                fail(Outcome.CLIENT_CANCELLED, now);
                close();
                response.abort();
            }
            case UPSTREAM -> upstreamFailed(new TimeoutException("no upstream data for "
                    + flow.upstreamQuietNanos(now) / 1_000_000 + " ms"));
            case NONE -> {
            }
        }
    }

    // ---------------------------------------------------------------------------------------------- the end

    /**
     * The client's side is done: its connection serves its next request, or closes ({@code cut}: mid-response, once
     * what was written was delivered; an HTTP/2 stream is reset).
     */
    private void clientDone(boolean cut) {
        close();
        client.exchangeDone(this, cut || response.closesAfter());
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
        request.release();
        if (responseBody != null) {
            responseBody.discard();
        }
        loop.timeouts().remove(this);
        if (llm != null) {
            llm.finish(outcome);
        }
    }
}
