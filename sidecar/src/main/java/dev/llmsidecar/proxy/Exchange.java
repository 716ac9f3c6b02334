package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/**
 * One client request and its upstream twin, from arrival to the last byte: forwarding, backpressure, cancellation,
 * the body cap, and the one retry a reused upstream connection may cost. The client's request head is edited in place
 * and sent upstream; the engine's response head is edited in place and sent to the client; response content is
 * forwarded as the retained slice the upstream read produced, so a byte is neither copied nor held. All calls run on
 * the client connection's event loop, which is also the upstream connection's.
 *
 * <p>{@link #onUpstream} is where every response chunk is timestamped: it goes to the wire format's decoder with its
 * arrival time before it is forwarded. What one upstream read delivered goes to the client in one flush when the read
 * is complete ({@link #onUpstreamReadComplete}): one {@code writev} per read, as nginx does. What is measured goes to
 * the exchange's {@link ExchangeObserver}; the LLM side of the bytes (include_usage, the decoder) is its
 * {@link LlmCall}.
 */
final class Exchange extends LoopTimeouts.Watched implements UpstreamConnection.Listener, UpstreamPool.Waiter {

    private static final Logger LOG = Logger.getLogger(Exchange.class);

    /** How the request body travels. */
    private enum Body {
        /** There is none: the request can be sent again as it is. */
        NONE,
        /** Read whole (up to the inspection limit) before the request goes upstream: an LLM call. */
        INSPECT,
        /** Forwarded as it arrives, with backpressure. */
        PIPE
    }

    private final ProxyServer proxy;
    private final TrafficObserver traffic;
    private final ClientChannelHandler client;
    private final Channel clientChannel;
    private HttpRequest request;             // until the response starts (a second attempt sends it again)
    private final HttpVersion clientVersion;
    private final boolean http2;
    private final boolean head;
    private final ExchangeObserver observer;
    private final LlmCall llm;

    private Body bodyMode;
    private CompositeByteBuf collected;      // INSPECT: the body read so far
    private ByteBuf body;                    // the whole body, kept until the response starts (a second attempt)
    private ByteBuf clientBody;              // the client's own body while body has include_usage turned on
    private String clientAcceptEncoding;     // the client's own Accept-Encoding, likewise
    private boolean bodyWhole;               // body (or its absence) is all of it: the request may be sent again
    private ArrayDeque<HttpContent> queued;  // PIPE: body read before a connection (rarely: made when needed)
    private long bodyBytes;
    private boolean bodyEnded;
    private boolean retried;
    private boolean closeAfter;
    private final boolean requestHasBody;

    private UpstreamConnection upstream;
    private boolean responseStarted;         // a response head arrived (no second attempt from then on)
    private boolean upstreamKeepAlive;
    private int status;
    private boolean headWritten;
    private boolean pending;                 // written to the client, not yet flushed
    private long pendingSince;               // arrival of the first part of the read not yet flushed
    private boolean pausedForClient;
    private boolean pausedForUpstream;
    private long lastUpstreamActivity;
    private boolean clientGone;
    private boolean finished;
    private boolean released;

    /**
     * @param bodyFollows a body comes after the head (HTTP/1.x: a length or chunked framing; HTTP/2: the stream is
     *     not ended by its headers)
     */
    Exchange(ProxyServer proxy, ClientChannelHandler client, HttpRequest request, boolean bodyFollows,
            long receivedNanos, LlmOperation operation) {
        this.proxy = proxy;
        this.traffic = proxy.traffic;
        this.client = client;
        this.clientChannel = client.channel();
        this.request = request;
        this.clientVersion = request.protocolVersion();
        this.http2 = client.http2();
        this.head = HttpMethod.HEAD.equals(request.method());
        this.observer = traffic.exchangeStarted(new NettyHeaders.Head(request), operation, receivedNanos);
        this.llm = operation == null ? null
                : new LlmCall(proxy, operation, request.headers(), request.protocolVersion(), observer);
        this.closeAfter = !http2 && (clientVersion == HttpVersion.HTTP_1_0 || !HttpUtil.isKeepAlive(request));
        this.requestHasBody = bodyFollows;
    }

    // ---------------------------------------------------------------------------------------------- request

    void start() {
        long declared = declaredLength();
        if (declared > proxy.maxRequestBodyBytes) {
            bodyTooLarge(true); // before a byte is read or sent
            return;
        }
        if (HttpUtil.is100ContinueExpected(request) && !http2) {
            clientChannel.writeAndFlush(new io.netty.handler.codec.http.DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    io.netty.handler.codec.http.HttpResponseStatus.CONTINUE), clientChannel.voidPromise());
        }
        bodyMode = !requestHasBody ? Body.NONE : llm != null ? Body.INSPECT : Body.PIPE;
        if (bodyMode == Body.INSPECT) {
            collected = clientChannel.alloc().compositeBuffer(Integer.MAX_VALUE);
            return; // the body arrives through onRequestContent
        }
        sendUpstream(bodyMode == Body.NONE);
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
        if (finished || clientGone || bodyEnded || bodyMode == Body.NONE) {
            content.release();
            return;
        }
        bodyBytes += content.content().readableBytes();
        boolean last = content instanceof LastHttpContent;
        if (bodyBytes > proxy.maxRequestBodyBytes) {
            content.release();
            bodyTooLarge(false);
            return;
        }
        if (last) {
            bodyEnded = true;
        }
        if (bodyMode == Body.INSPECT) {
            if (content.content().isReadable()) {
                collected.addComponent(true, content.content().retain());
            }
            content.release();
            if (last) {
                inspectAndSend();
            } else if (collected.readableBytes() > proxy.config.llm().maxInspectedBodyBytes()) {
                // too large to inspect: what was read goes first, the rest streams untouched
                llm.notInspected(); // its timeline starts with the response, which says whether it streams
                bodyMode = Body.PIPE;
                queue(new DefaultHttpContent(collected));
                collected = null;
                sendUpstream(false);
            }
            return;
        }
        if (upstream == null) {
            queue(content);
            client.setAutoRead(false); // until the upstream connection takes what is queued
            return;
        }
        writeBody(content);
    }

    private void queue(HttpContent content) {
        if (queued == null) {
            queued = new ArrayDeque<>(4);
        }
        queued.add(content);
    }

    /** The client's read is complete: what it delivered of the body goes upstream in one flush. */
    void onClientReadComplete() {
        if (upstream != null && bodyMode == Body.PIPE && !finished) {
            upstream.channel.flush();
        }
    }

    private void writeBody(HttpContent content) {
        upstream.channel.write(content, upstream.channel.voidPromise());
        if (!upstream.channel.isWritable() && !pausedForUpstream) {
            pausedForUpstream = true;
            client.setAutoRead(false);
        }
    }

    @Override
    public void onUpstreamWritable() {
        if (pausedForUpstream) {
            pausedForUpstream = false;
            client.setAutoRead(true);
        }
    }

    private void inspectAndSend() {
        ByteBuf read = collected;
        collected = null;
        body = llm.inspect(read);
        if (body != read) {
            clientBody = read; // kept for a request sent again as the client wrote it
            clientAcceptEncoding = request.headers().get(HttpHeaderNames.ACCEPT_ENCODING);
        }
        sendUpstream(true);
        llm.requestSent();
    }

    /**
     * Edits the client's request head into the upstream request and takes a connection for it.
     *
     * @param whole the body is held whole ({@link #body}, possibly null for none) and may be sent again
     */
    private void sendUpstream(boolean whole) {
        HttpHeaders h = request.headers();
        String clientAuthority = h.get(HttpHeaderNames.HOST);
        ForwardedHeaders.removeHopByHop(h);
        h.remove(HttpHeaderNames.EXPECT);
        if (llm != null) {
            llm.prepareUpstreamHeaders(h);
        }
        h.set(HttpHeaderNames.HOST, proxy.config.upstream().preserveHost() && clientAuthority != null
                ? clientAuthority : proxy.target.authority());
        if (whole) {
            int length = body == null ? 0 : body.readableBytes();
            if (length > 0 || h.contains(HttpHeaderNames.CONTENT_LENGTH) || http2 && bodyEnded) {
                h.setInt(HttpHeaderNames.CONTENT_LENGTH, length);
            }
        } else if (!h.contains(HttpHeaderNames.CONTENT_LENGTH)) {
            h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        }
        request.setUri(proxy.target.requestUri(request.uri()));
        request.setProtocolVersion(HttpVersion.HTTP_1_1);
        bodyWhole = whole;
        armIdleTimer();
        proxy.pool(clientChannel.eventLoop()).acquire(this);
    }

    @Override
    public void connected(UpstreamConnection connection) {
        if (finished || clientGone) {
            connection.endExchangeUnused();
            return;
        }
        upstream = connection;
        connection.startExchange(this);
        Channel ch = connection.channel;
        ch.write(request, ch.voidPromise());
        if (bodyWhole) {
            ch.write(body == null ? LastHttpContent.EMPTY_LAST_CONTENT
                    : new DefaultLastHttpContent(body.retainedDuplicate()), ch.voidPromise());
        } else {
            for (HttpContent c; queued != null && (c = queued.poll()) != null;) {
                writeBody(c);
            }
            if (!pausedForUpstream) {
                client.setAutoRead(true);
            }
        }
        ch.flush();
    }

    @Override
    public void failed(Throwable cause) {
        failedBeforeResponse(cause);
    }

    // ---------------------------------------------------------------------------------------------- response

    @Override
    public void onUpstream(HttpObject message) {
        long arrived = System.nanoTime();
        lastUpstreamActivity = arrived;
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
            onResponseContent(content, arrived);
        }
    }

    private void onResponseHead(HttpResponse r, long now) {
        int code = r.status().code();
        if (code >= 100 && code < 200 && code != 101) {
            return; // interim (the sidecar never forwards Expect, so no 100): the real head follows
        }
        if (clientGone || finished) {
            return;
        }
        IncludeUsagePolicy.Resend resend = llm == null ? null : llm.resendWithoutInjection(code, r.headers());
        if (resend != null) {
            resendAsTheClientWroteIt(resend);
            return;
        }
        responseStarted = true;
        status = code;
        upstreamKeepAlive = HttpUtil.isKeepAlive(r);
        releaseBody();
        // no second attempt after a response byte: the request head is not needed any more (a few KB per open
        // stream with an SDK's headers)
        request.headers().clear();
        request = null;
        HttpHeaders h = r.headers();
        boolean hasLength = h.contains(HttpHeaderNames.CONTENT_LENGTH);
        boolean bodyless = head || code == 204 || code == 304 || code < 200;
        if (llm != null && llm.onResponseHead(code, h, hasLength, now)) {
            // the injected usage comes out of a Content-Length stream: its entity stays exact, its framing is chunked
            h.remove(HttpHeaderNames.CONTENT_LENGTH);
            hasLength = false;
        }
        ForwardedHeaders.removeHopByHop(h);
        boolean streamed = !hasLength && !bodyless;
        if (streamed && !http2) {
            if (clientVersion == HttpVersion.HTTP_1_0) {
                closeAfter = true; // no chunked framing in HTTP/1.0: the end of the connection ends the body
            } else {
                h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            }
        }
        if (proxy.draining()) {
            closeAfter = true;
        }
        if (closeAfter && !http2) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        } else if (clientVersion == HttpVersion.HTTP_1_0) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        r.setProtocolVersion(http2 ? HttpVersion.HTTP_1_1 : clientVersion);
        headWritten = true;
        clientChannel.write(r, clientChannel.voidPromise());
        if (streamed) {
            // a streaming client sees the headers when the engine sends them, not with the first token
            clientChannel.flush();
        }
    }

    /**
     * The timestamping point: every piece of the response is stamped as it is delivered, decoded, and written; the
     * flush waits for the end of the read.
     */
    private void onResponseContent(HttpContent content, long arrived) {
        boolean last = content instanceof LastHttpContent;
        if (finished || clientGone || !responseStarted) {
            content.release();
            return;
        }
        ByteBuf data = content.content();
        ByteBuf out = llm == null ? data : llm.onChunk(data, arrived);
        if (out == data) {
            write(content, arrived);
        } else {
            if (out.isReadable()) {
                write(new DefaultHttpContent(out), arrived);
            } else {
                out.release();
            }
            if (last) {
                LastHttpContent end = (LastHttpContent) content;
                write(end.trailingHeaders().isEmpty() ? LastHttpContent.EMPTY_LAST_CONTENT
                        : new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER, end.trailingHeaders()), arrived);
            }
        }
        if (last) {
            onUpstreamEnd(arrived);
        }
    }

    /** Writes forwarded bytes; a write with bytes is timed to the client's socket when its read is flushed. */
    private void write(HttpContent content, long arrived) {
        if (!pending && content.content().isReadable()) {
            pending = true;
            pendingSince = arrived;
        }
        clientChannel.write(content, clientChannel.voidPromise());
    }

    @Override
    public void onUpstreamReadComplete() {
        flushPending();
    }

    /** Flushes what this read wrote, times its way to the client's socket, and pauses a client that lags. */
    private void flushPending() {
        if (!pending) {
            return;
        }
        pending = false;
        long arrived = pendingSince;
        if (!clientChannel.isActive()) {
            return;
        }
        clientChannel.flush();
        ChannelOutboundBuffer queuedOut = clientChannel.unsafe().outboundBuffer();
        if (!http2 && (queuedOut == null || queuedOut.totalPendingWriteBytes() == 0)) {
            observer.written(arrived, System.nanoTime()); // the kernel has every byte
        } else {
            client.whenWritten(ok -> {
                if (ok) {
                    observer.written(arrived, System.nanoTime());
                }
            });
        }
        if (!clientChannel.isWritable() && !pausedForClient && upstream != null) {
            // slow client: stop reading upstream until the client has drained what we hold
            pausedForClient = true;
            upstream.channel.config().setAutoRead(false);
        }
    }

    /** The client's connection can take more: the upstream read resumes. */
    void onClientWritable() {
        if (pausedForClient && upstream != null) {
            pausedForClient = false;
            lastUpstreamActivity = System.nanoTime();
            upstream.channel.config().setAutoRead(true);
        }
    }

    private void onUpstreamEnd(long now) {
        if (llm != null) {
            ByteBuf rest = llm.onEnd(now);
            if (rest.isReadable()) {
                clientChannel.write(new DefaultHttpContent(rest), clientChannel.voidPromise());
            }
            // what the stream taught about include_usage is known before the client has its last byte: a request
            // the client sends the moment it has it already finds it learned
            llm.finish(status >= 400 ? Outcome.UPSTREAM_ERROR : Outcome.OK);
        }
        flushPending();
        clientChannel.flush();
        boolean keepAlive = upstreamKeepAlive;
        UpstreamConnection done = upstream;
        finish(status >= 400 ? Outcome.UPSTREAM_ERROR : Outcome.OK, now);
        done.endExchange(this, keepAlive, now);
        completeResponse();
    }

    // ---------------------------------------------------------------------------------------------- failures

    @Override
    public void onUpstreamClosed(Throwable cause) {
        if (finished || clientGone) {
            return;
        }
        Throwable why = cause != null ? cause : new ClosedChannelException();
        if (!responseStarted) {
            onUpstreamRequestFailed(why);
        } else {
            onUpstreamBroken(why);
        }
    }

    /**
     * The request failed before its response started. A reused connection that closed before a single byte of
     * response arrived is the keep-alive race (the engine closed the idle connection as the request went out, or,
     * like llama.cpp's server, closes every connection after a streamed response without saying so): the engine
     * never read the request, so it is sent once more on a new connection, if the sidecar still holds its whole
     * body. Never after any response byte, never twice.
     */
    private void onUpstreamRequestFailed(Throwable cause) {
        UpstreamConnection failedOn = upstream;
        if (!retried && bodyWhole && failedOn != null && failedOn.reused() && failedOn.nothingReadSinceStart()
                && !(cause instanceof TimeoutException)) {
            retried = true;
            traffic.retriedClosedBeforeResponse();
            proxy.warnOnce("retry_closed_before_response", "a reused upstream connection closed before responding ("
                    + cause + "); the request was sent again on a new connection. Further retries are counted in "
                    + "llm_sidecar_upstream_retries_total, not logged");
            upstream = null;
            failedOn.endExchange(this, false, System.nanoTime());
            proxy.pool(clientChannel.eventLoop()).acquireFresh(this);
            return;
        }
        failedBeforeResponse(cause);
    }

    /**
     * The engine answered the request the sidecar had turned include_usage on for in a way the client must not see:
     * compressed although asked for identity (compressed bytes cannot be edited, and forwarding them would hand the
     * client the injected usage), or refused with 400 or 422 (an engine that forbids members it does not know).
     * Nothing of the response has been forwarded (its head is in hand, not a body byte), so the edited request is
     * abandoned (the engine stops generating) and the client's own request goes out instead, on a new connection:
     * the client gets exactly the response it would have got directly.
     */
    private void resendAsTheClientWroteIt(IncludeUsagePolicy.Resend why) {
        traffic.retriedWithoutInjection(why);
        proxy.warnOnce("retry_" + why.label, (why == IncludeUsagePolicy.Resend.COMPRESSED
                ? "the engine compressed a stream for which the sidecar had turned include_usage on and asked for "
                        + "identity encoding"
                : "the engine refused a request for which the sidecar had turned include_usage on (400 or 422)")
                + "; the client's own request was sent instead. The sidecar no longer turns include_usage on for a "
                + "model once its engine has done so and served the client's own request; further cases are counted "
                + "in llm_sidecar_upstream_retries_total, not logged");
        UpstreamConnection abandoned = upstream;
        upstream = null;
        retried = true;
        abandoned.endExchange(this, false, System.nanoTime());
        body.release();
        body = clientBody;
        clientBody = null;
        HttpHeaders h = request.headers();
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        if (clientAcceptEncoding == null) {
            h.remove(HttpHeaderNames.ACCEPT_ENCODING);
        } else {
            h.set(HttpHeaderNames.ACCEPT_ENCODING, clientAcceptEncoding);
        }
        proxy.pool(clientChannel.eventLoop()).acquireFresh(this);
    }

    private void onUpstreamBroken(Throwable cause) {
        LOG.debugf("upstream broke mid-response: %s", cause.toString());
        long now = System.nanoTime();
        if (llm != null) {
            // an incomplete event held back for usage removal still reaches the client, as it would directly
            ByteBuf held = llm.releaseHeld();
            if (held.isReadable()) {
                clientChannel.write(new DefaultHttpContent(held), clientChannel.voidPromise());
            }
        }
        flushPending();
        UpstreamConnection broken = upstream;
        finish(Outcome.UPSTREAM_BROKEN, now);
        if (broken != null) {
            broken.endExchange(this, false, now);
        }
        // deliver what was received, then close: the client sees the same truncation it would have seen directly
        resetClient();
    }

    private void failedBeforeResponse(Throwable cause) {
        if (finished || clientGone) {
            return;
        }
        SidecarError error = SidecarError.beforeResponse(cause);
        proxy.warnOnce(error.header, "upstream request failed before its response (" + error.header + ", " + cause
                + "); further ones are counted in llm_sidecar_http_requests_total{status_class=\"5xx\"}, not logged");
        LOG.debugf("upstream request failed: %s", cause.toString());
        status = error.status;
        UpstreamConnection failedOn = upstream;
        long now = System.nanoTime();
        finish(Outcome.UPSTREAM_ERROR, now);
        if (failedOn != null) {
            failedOn.endExchange(this, false, now);
        }
        respondWith(error, null);
    }

    /**
     * The body is over the cap: nothing more of it is read or sent. If part of it went upstream, that request is
     * abandoned (the engine never sees a complete one). The client gets 413 and the connection closes (the rest of
     * its body is not read).
     */
    private void bodyTooLarge(boolean declared) {
        if (finished || clientGone) {
            return;
        }
        traffic.bodyTooLarge(declared);
        client.setAutoRead(false);
        status = SidecarError.BODY_TOO_LARGE.status;
        UpstreamConnection abandoned = upstream;
        long now = System.nanoTime();
        finish(Outcome.UPSTREAM_ERROR, now);
        if (abandoned != null) {
            abandoned.endExchange(this, false, now);
        }
        closeAfter = true;
        respondWith(SidecarError.BODY_TOO_LARGE, "the limit is " + proxy.maxRequestBodyBytes + " bytes");
    }

    /** Answers with the sidecar's own error, or cuts the response if its head already went out. */
    private void respondWith(SidecarError error, String detail) {
        if (headWritten) {
            resetClient();
            return;
        }
        headWritten = true;
        boolean close = closeAfter || proxy.draining();
        closeAfter = close;
        clientChannel.writeAndFlush(error.response(http2 ? HttpVersion.HTTP_1_1 : clientVersion, detail,
                close && !http2)).addListener(f -> completeResponse());
    }

    /** The client went away: the upstream request is cut at once, so the engine stops generating. */
    void onClientGone() {
        if (clientGone) {
            return;
        }
        clientGone = true;
        UpstreamConnection cut = upstream;
        long now = System.nanoTime();
        if (!finished) {
            finish(Outcome.CLIENT_CANCELLED, now);
        }
        if (cut != null) {
            cut.endExchange(this, false, now);
        }
        releaseQueued();
        release();
    }

    /** No bytes from upstream for the idle timeout (a client pausing the read is not an upstream stall). */
    private void armIdleTimer() {
        lastUpstreamActivity = System.nanoTime();
        proxy.timeouts(clientChannel.eventLoop()).add(this);
    }

    @Override
    void tick(long now) {
        if (finished || clientGone) {
            proxy.timeouts(clientChannel.eventLoop()).remove(this);
            return;
        }
        if (pausedForClient) {
            lastUpstreamActivity = now; // a slow client pausing the read is not an upstream stall
            return;
        }
        long quiet = now - lastUpstreamActivity;
        if (quiet >= proxy.upstreamIdleNanos) {
            TimeoutException timeout = new TimeoutException("no upstream data for " + quiet / 1_000_000 + " ms");
            if (!responseStarted) {
                failedBeforeResponse(timeout);
            } else {
                UpstreamConnection stalled = upstream;
                onUpstreamBroken(timeout);
                if (stalled != null) {
                    stalled.close();
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------------- the end

    /** The response is complete on the client's side: the connection serves its next request, or closes. */
    private void completeResponse() {
        release();
        client.exchangeDone(this, closeAfter);
    }

    /**
     * Closes the client's connection mid-response (HTTP/1.x) or resets its stream (HTTP/2), once what was written
     * has been delivered.
     */
    private void resetClient() {
        release();
        client.exchangeDone(this, true);
    }

    /** The in-flight count of this exchange goes, once, whichever way it ended. */
    private void release() {
        if (!released) {
            released = true;
            proxy.exchangeEnded();
        }
    }

    private void releaseBody() {
        if (body != null) {
            body.release();
            body = null;
        }
        if (clientBody != null) {
            clientBody.release();
            clientBody = null;
        }
        if (collected != null) {
            collected.release();
            collected = null;
        }
    }

    private void releaseQueued() {
        for (HttpContent c; queued != null && (c = queued.poll()) != null;) {
            c.release();
        }
    }

    private void finish(Outcome outcome, long nanos) {
        if (finished) {
            return;
        }
        finished = true;
        upstream = null;
        releaseBody();
        releaseQueued();
        proxy.timeouts(clientChannel.eventLoop()).remove(this);
        observer.ended(outcome, status, nanos);
        if (llm != null) {
            llm.finish(outcome);
        }
    }
}
