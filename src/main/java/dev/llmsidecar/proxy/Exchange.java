package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.LlmOperation;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.vertx.core.AsyncResult;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.RequestOptions;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/**
 * One client request and its upstream twin, from arrival to the last byte: forwarding, backpressure, cancellation,
 * the body cap, and the one retry a reused upstream connection may cost. All callbacks run on the client
 * connection's event loop. Response chunks are timestamped in {@link #onUpstreamChunk}; the LLM side of the
 * exchange (what is measured, and the include_usage edit) is its {@link LlmCall}.
 */
final class Exchange implements UpstreamConnection.Listener {

    private static final Logger LOG = Logger.getLogger(Exchange.class);
    private static final Set<String> SKIP_ALWAYS = Set.of("host", "expect");
    private static final Set<String> SKIP_WITH_NEW_BODY = Set.of("host", "expect", "content-length");
    /** Bytes held for one client write while a read is delivered; more than this goes out at once. */
    private static final int MAX_COALESCED_BYTES = 64 * 1024;
    /** Idle pooled connections retired in a row for one request before it takes a fresh one. */
    private static final int MAX_RETIRED_PER_REQUEST = 8;

    private final ProxyHandler proxy;
    private final TrafficObserver traffic;
    private final ExchangeObserver observer;
    private final HttpServerRequest request;
    private final HttpServerResponse response;
    private final ClientWriter client;
    private final LlmCall llm;

    // the upstream request, kept whole until the response starts so that it can be sent again
    private RequestOptions upstreamOptions;
    private MultiMap upstreamHeaders;
    private Buffer body;              // the whole body, or the part read before the rest is piped
    private Buffer clientBody;        // the client's own body, while body is the one with include_usage turned on
    private boolean bodyPiped;        // the rest of the body streams from the client: no second attempt
    private boolean retried;

    private HttpClientRequest upstreamRequest;
    private HttpClientResponse upstreamResponse;
    private UpstreamConnection connection;
    private Buffer pending;          // what this read forwards, written once the read completes
    private long pendingSince;       // arrival of the first read part in pending
    private boolean pendingCopied;   // pending is our own buffer (not one the decoder returned)
    private boolean clientGone;
    private long lastUpstreamActivity;
    private long idleTimer = -1;
    private boolean pausedForClient;
    private boolean finished;
    private boolean released;
    private int status;

    Exchange(ProxyHandler proxy, HttpServerRequest request, long receivedNanos, LlmOperation operation) {
        this.proxy = proxy;
        this.traffic = proxy.traffic;
        this.observer = traffic.exchangeStarted(new VertxHeaders.Head(request), operation, receivedNanos);
        this.request = request;
        this.response = request.response();
        this.client = new ClientWriter(request, observer);
        this.llm = operation == null ? null : new LlmCall(proxy, operation, request, observer);
    }

    void start() {
        // every way an exchange can end lets go of its in-flight count, once
        response.endHandler(v -> release());
        response.closeHandler(v -> {
            onClientGone();
            release();
        });
        request.exceptionHandler(t -> onClientGone());
        try {
            forward();
        } catch (RuntimeException e) {
            LOG.error("llm-sidecar failed forwarding a request", e);
            failedBeforeResponse(e);
        }
    }

    private void forward() {
        long declared = declaredLength();
        if (declared > proxy.maxRequestBodyBytes) {
            bodyTooLarge(true); // before a byte is read or sent
            return;
        }
        if ("100-continue".equalsIgnoreCase(request.getHeader(HttpHeaders.EXPECT))) {
            response.writeContinue();
        }
        if (declared == 0 && request.getHeader(HttpHeaders.TRANSFER_ENCODING) == null) {
            sendUpstream(null, false, SKIP_ALWAYS);
            if (llm != null) {
                llm.requestSent();
            }
        } else if (llm != null) {
            readLlmBody();
        } else {
            sendUpstream(null, true, SKIP_ALWAYS);
        }
    }

    /** The declared Content-Length, 0 when absent (or unreadable: Vert.x refuses such a request before us). */
    private long declaredLength() {
        String length = request.getHeader(HttpHeaders.CONTENT_LENGTH);
        if (length == null) {
            return 0;
        }
        try {
            return Long.parseLong(length.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Reads an LLM request body (bounded) to learn model/stream and perhaps turn include_usage on. */
    private void readLlmBody() {
        int max = proxy.config.llm().maxInspectedBodyBytes();
        Buffer read = Buffer.buffer();
        request.handler(chunk -> {
            read.appendBuffer(chunk);
            if (read.length() > proxy.maxRequestBodyBytes) {
                request.handler(null);
                request.endHandler(null);
                bodyTooLarge(false);
            } else if (read.length() > max) {
                // too large to inspect: forward what we have and stream the rest untouched
                request.pause();
                request.handler(null);
                request.endHandler(null);
                llm.notInspected(); // its timeline starts with the response, which says whether it streams
                sendUpstream(read, true, SKIP_ALWAYS);
            }
        });
        request.endHandler(v -> {
            request.handler(null);
            request.endHandler(null);
            Buffer upstreamBody = llm.inspect(read);
            clientBody = llm.bodyEdited() ? read : null;
            sendUpstream(upstreamBody, false, llm.bodyEdited() ? SKIP_WITH_NEW_BODY : SKIP_ALWAYS);
            llm.requestSent();
        });
        request.resume();
    }

    /**
     * @param first the whole body, or its first part when {@code piped}; null when there is none
     * @param piped the (rest of the) body streams from the client with backpressure
     */
    private void sendUpstream(Buffer first, boolean piped, Set<String> skip) {
        body = first;
        bodyPiped = piped;
        upstreamOptions = new RequestOptions()
                .setMethod(request.method())
                .setURI(proxy.target.requestUri(request.uri()))
                .setHeaders(upstreamHeaders(skip));
        armIdleTimer();
        attempt(proxy.client(), 0);
    }

    private MultiMap upstreamHeaders(Set<String> skip) {
        upstreamHeaders = HttpHeaders.headers();
        ForwardedHeaders.copy(request.headers(), upstreamHeaders, skip);
        if (llm != null) {
            llm.prepareUpstreamHeaders(upstreamHeaders);
        }
        upstreamHeaders.set(HttpHeaderNames.HOST, proxy.config.upstream().preserveHost() && request.authority() != null
                ? request.authority().toString() : proxy.target.authority());
        return upstreamHeaders;
    }

    /**
     * The engine compressed a stream that the sidecar had turned include_usage on for, although it was asked for
     * identity: compressed bytes cannot be edited, and forwarding them would hand the client the injected usage.
     * Nothing of the response has been forwarded (its head is in hand, not a body byte), so the edited request is
     * abandoned (the engine stops generating) and the client's own request goes out instead, on a new connection:
     * the client gets exactly the response it would have got directly.
     */
    private void resendAsTheClientWroteIt() {
        traffic.retriedCompressedAfterInjection();
        proxy.warnOnce("retry_compressed_after_injection", "the engine compressed a stream for which the sidecar "
                + "had turned include_usage on and asked for identity encoding; the client's own request was sent "
                + "instead. The sidecar no longer turns include_usage on for this model; further cases are counted in "
                + "llm_sidecar_upstream_retries_total, not logged");
        HttpClientRequest abandoned = upstreamRequest;
        // its reset is expected: unhandled, Vert.x would log it at ERROR; the request's own handlers ignore what
        // follows, as it is no longer upstreamRequest
        upstreamResponse.exceptionHandler(IGNORE);
        upstreamRequest = null;
        upstreamResponse = null;
        connection = null;
        retried = true;
        abandoned.reset();
        body = clientBody;
        clientBody = null;
        upstreamOptions.setHeaders(upstreamHeaders(SKIP_ALWAYS));
        attempt(proxy.freshClient(), MAX_RETIRED_PER_REQUEST);
    }

    /**
     * Takes an upstream connection and sends the request on it. A pooled connection idle for the keep-alive timeout
     * or longer is retired here, when taken, and another one taken: the engine may be closing it at this moment.
     */
    private void attempt(HttpClient upstream, int retired) {
        upstream.request(upstreamOptions).onComplete(ar -> {
            if (ar.failed()) {
                failedBeforeResponse(ar.cause());
                return;
            }
            HttpClientRequest req = ar.result();
            UpstreamConnection conn = UpstreamConnection.of(req.connection());
            // a stale connection is closed even when the request is no longer wanted: handed back, it would look
            // fresh to Vert.x's own sweep
            boolean stale = conn != null && conn.idleFor(System.nanoTime(), proxy.keepAliveNanos);
            if (stale) {
                traffic.idleConnectionRetired();
                retire(req);
            }
            if (finished || clientGone) {
                if (!stale) {
                    discard(req);
                }
                return;
            }
            if (stale) {
                attempt(retired + 1 < MAX_RETIRED_PER_REQUEST ? upstream : proxy.freshClient(), retired + 1);
                return;
            }
            send(req, conn);
        });
    }

    /**
     * Resets a request that was never sent. Its own reset is its only failure, and expected: without a handler
     * Vert.x would log each one at ERROR with a stack trace (under a burst that meets many retired connections,
     * thousands per second).
     */
    private static void discard(HttpClientRequest req) {
        req.exceptionHandler(IGNORE);
        req.reset();
    }

    private static final io.vertx.core.Handler<Throwable> IGNORE = t -> { };

    /**
     * Closes the connection of a request that was never sent. Resetting the request alone would hand the connection
     * back to the pool (nothing was written on it), still idle as far as the engine knows but fresh to Vert.x's own
     * sweep: every later request would take it, retire it and return it again.
     */
    private static void retire(HttpClientRequest req) {
        req.exceptionHandler(IGNORE);
        req.connection().close();
    }

    private void send(HttpClientRequest req, UpstreamConnection conn) {
        upstreamRequest = req;
        connection = conn;
        if (conn != null) {
            conn.startExchange(this);
        }
        req.connection().exceptionHandler(proxy.upstreamConnectionErrors());
        req.response().onComplete(ar -> {
            if (req == upstreamRequest) {
                onUpstreamResponse(ar);
            }
        });
        req.exceptionHandler(t -> {
            if (req == upstreamRequest) {
                onUpstreamRequestFailed(t);
            }
        });
        if (!bodyPiped) {
            if (body != null) {
                req.end(body);
            } else {
                req.end();
            }
            return;
        }
        if (!upstreamHeaders.contains(HttpHeaders.CONTENT_LENGTH)) {
            req.setChunked(true);
        }
        long sent = 0;
        if (body != null) {
            req.write(body);
            sent = body.length();
            body = null;
        }
        RequestBodyPipe.start(request, req, sent, proxy.maxRequestBodyBytes, () -> bodyTooLarge(false));
    }

    /**
     * The request failed before its response started. A reused connection that closed before a single byte of
     * response arrived is the keep-alive race (the engine closed the idle connection as the request went out, or,
     * like llama.cpp's server, closes every connection after a streamed response without saying so): the engine
     * never read the request, so it is sent once more on a new connection, if the sidecar still holds its whole
     * body. Never after any response byte, never twice.
     */
    private void onUpstreamRequestFailed(Throwable cause) {
        if (finished || clientGone) {
            return;
        }
        if (upstreamResponse != null) {
            onUpstreamBroken(cause);
            return;
        }
        if (!retried && !bodyPiped && connection != null && connection.reused() && connection.nothingReadSinceStart()
                && !(cause instanceof TimeoutException)) {
            retried = true;
            traffic.retriedClosedBeforeResponse();
            proxy.warnOnce("retry_closed_before_response", "a reused upstream connection closed before responding ("
                    + cause + "); the request was sent again on a new connection. Further retries are counted in "
                    + "llm_sidecar_upstream_retries_total, not logged");
            upstreamRequest = null;
            connection = null;
            attempt(proxy.freshClient(), MAX_RETIRED_PER_REQUEST);
            return;
        }
        failedBeforeResponse(cause);
    }

    /**
     * Vert.x keeps both requests, the client's and its upstream twin, until the response ends, and with them three
     * header maps (the client's, the upstream request's, and the one this exchange built, which Vert.x's request
     * callback still holds): with the OpenAI SDK's headers 3.4 KB per open stream, a fifth of the live heap at 2000
     * streams. Once the response has started nothing needs them or the body (no second attempt after a response
     * byte; Vert.x's server decided keep-alive on arrival; its client reads the upstream request's Connection
     * header at response time, and the proxy never forwards one).
     */
    private void releaseRequest() {
        body = null;
        clientBody = null;
        request.headers().clear();
        if (upstreamRequest != null) {
            upstreamRequest.headers().clear();
        }
        if (upstreamHeaders != null) {
            upstreamHeaders.clear();
        }
    }

    private void onUpstreamResponse(AsyncResult<HttpClientResponse> ar) {
        if (ar.failed()) {
            onUpstreamRequestFailed(ar.cause());
            return;
        }
        long now = System.nanoTime();
        lastUpstreamActivity = now;
        upstreamResponse = ar.result();
        if (clientGone || finished) {
            return;
        }
        if (llm != null && llm.injectionMetCompression(upstreamResponse.statusCode(), upstreamResponse.headers())) {
            resendAsTheClientWroteIt();
            return;
        }
        releaseRequest();
        status = upstreamResponse.statusCode();
        response.setStatusCode(status);
        response.setStatusMessage(upstreamResponse.statusMessage());
        ForwardedHeaders.copy(upstreamResponse.headers(), response.headers(), Set.of());
        boolean hasLength = upstreamResponse.headers().contains(HttpHeaders.CONTENT_LENGTH);
        boolean bodyless = request.method() == HttpMethod.HEAD || status == 204 || status == 304
                || (status >= 100 && status < 200);
        if (llm != null && llm.onResponseHead(status, upstreamResponse.headers(), hasLength, now)) {
            // the injected usage comes out of a Content-Length stream: its entity stays exact, its framing is chunked
            response.headers().remove(HttpHeaders.CONTENT_LENGTH);
            hasLength = false;
        }
        if (!hasLength && !bodyless) {
            response.setChunked(true);
        }
        upstreamResponse.handler(this::onUpstreamChunk);
        upstreamResponse.endHandler(v -> onUpstreamEnd());
        upstreamResponse.exceptionHandler(this::onUpstreamBroken);
        if (!hasLength && !bodyless) {
            // send the head now: a streaming client sees the headers when the engine sends them, not with the
            // first token
            client.writeHead();
        }
    }

    /**
     * One timer per exchange, re-armed lazily: a stall (no response, or no bytes for the idle timeout) fails the
     * request, while a busy stream costs no timer work per chunk.
     */
    private void armIdleTimer() {
        long idleNanos = proxy.config.upstream().idleTimeout().toNanos();
        lastUpstreamActivity = System.nanoTime();
        idleTimer = proxy.vertx.setTimer(Math.max(1, idleNanos / 1_000_000), id -> checkIdle(idleNanos));
    }

    private void checkIdle(long idleNanos) {
        if (finished || clientGone) {
            return;
        }
        long quiet = System.nanoTime() - lastUpstreamActivity;
        // a slow client pausing the upstream read is not an upstream stall
        if (quiet >= idleNanos && !pausedForClient) {
            TimeoutException timeout = new TimeoutException("no upstream data for " + quiet / 1_000_000 + " ms");
            if (upstreamResponse == null) {
                failedBeforeResponse(timeout);
            } else {
                onUpstreamBroken(timeout);
            }
            return;
        }
        long wait = pausedForClient ? idleNanos : idleNanos - quiet;
        idleTimer = proxy.vertx.setTimer(Math.max(1, wait / 1_000_000), id -> checkIdle(idleNanos));
    }

    /**
     * The timestamping point: every chunk from upstream is stamped here as it is delivered, decoded, and
     * forwarded. Chunks delivered within one socket read are written to the client together when the read
     * completes ({@link #onReadComplete}): one write per read, as nginx does, instead of one per SSE event.
     */
    private void onUpstreamChunk(Buffer chunk) {
        long arrived = System.nanoTime();
        lastUpstreamActivity = arrived;
        Buffer out = llm == null ? chunk : llm.onChunk(chunk, arrived);
        if (out.length() == 0) {
            return;
        }
        hold(out, arrived);
        // a chunk delivered outside a read (after a pause) has nothing coming with it: write it now
        boolean moreInThisRead = connection != null && connection.inRead();
        if (!moreInThisRead || pending.length() >= MAX_COALESCED_BYTES) {
            writePending();
        }
    }

    private void hold(Buffer out, long arrived) {
        if (pending == null) {
            pending = out;
            pendingSince = arrived;
            pendingCopied = false;
            return;
        }
        if (!pendingCopied) {
            // never append to a buffer the decoder returned: copy into one of our own
            pending = Buffer.buffer(Math.max(1024, 2 * (pending.length() + out.length()))).appendBuffer(pending);
            pendingCopied = true;
        }
        pending.appendBuffer(out);
    }

    @Override
    public void onReadComplete() {
        writePending();
    }

    /** Writes what this read held, if anything. */
    private void writePending() {
        Buffer out = pending;
        long arrived = pendingSince;
        pending = null;
        if (out == null || finished || clientGone) {
            return;
        }
        client.write(out, arrived);
        if (response.writeQueueFull() && !pausedForClient) {
            // slow client: stop reading upstream until the client has drained what we hold
            upstreamResponse.pause();
            pausedForClient = true;
            response.drainHandler(v -> {
                pausedForClient = false;
                lastUpstreamActivity = System.nanoTime();
                upstreamResponse.resume();
            });
        }
    }

    private void onUpstreamEnd() {
        if (finished || clientGone) {
            return;
        }
        long now = System.nanoTime();
        writePending(); // the end may arrive in the same read as the last chunks
        if (llm != null) {
            Buffer rest = llm.onEnd(now);
            if (rest.length() > 0) {
                client.writeUntimed(rest);
            }
        }
        response.end();
        finish(status >= 400 ? Outcome.UPSTREAM_ERROR : Outcome.OK, now);
    }

    private void onUpstreamBroken(Throwable cause) {
        if (finished || clientGone) {
            return;
        }
        LOG.debugf("upstream broke mid-response for %s %s: %s", request.method(), request.path(), cause.toString());
        long now = System.nanoTime();
        writePending(); // what arrived before the break reaches the client, as it would directly
        if (llm != null) {
            // an incomplete event held back for usage removal still reaches the client, as it would directly
            Buffer held = llm.releaseHeld();
            if (held.length() > 0) {
                client.writeUntimed(held);
            }
        }
        finish(Outcome.UPSTREAM_BROKEN, now);
        if (upstreamRequest != null) {
            upstreamRequest.reset();
        }
        // deliver what was received, then close: the client sees the same truncation it would have seen
        client.afterWritten(v -> resetResponse());
    }

    private void failedBeforeResponse(Throwable cause) {
        if (finished || clientGone) {
            return;
        }
        if (upstreamResponse != null) {
            onUpstreamBroken(cause);
            return;
        }
        SidecarError error = SidecarError.beforeResponse(cause);
        proxy.warnOnce(error.header, "upstream request failed before its response (" + error.header + ", " + cause
                + "); further ones are counted in llm_sidecar_http_requests_total{status_class=\"5xx\"}, not logged");
        LOG.debugf("upstream request failed for %s %s: %s", request.method(), request.path(), cause.toString());
        status = error.status;
        finish(Outcome.UPSTREAM_ERROR, System.nanoTime());
        if (upstreamRequest != null) {
            upstreamRequest.reset();
        }
        if (!response.headWritten()) {
            error.send(response, null);
        } else {
            resetResponse();
        }
    }

    /**
     * The body is over the cap: nothing more of it is read or sent. If part of it went upstream, that request is
     * reset (the engine never sees a complete one). The client gets 413 and the connection closes (the rest of
     * its body is not read).
     */
    private void bodyTooLarge(boolean declared) {
        if (finished || clientGone) {
            return;
        }
        traffic.bodyTooLarge(declared);
        request.pause();
        status = SidecarError.BODY_TOO_LARGE.status;
        finish(Outcome.UPSTREAM_ERROR, System.nanoTime());
        if (upstreamRequest != null) {
            upstreamRequest.reset();
        }
        if (!response.headWritten()) {
            response.putHeader(HttpHeaders.CONNECTION, "close");
            response.endHandler(v -> {
                release();
                request.connection().close();
            });
            SidecarError.BODY_TOO_LARGE.send(response, "the limit is " + proxy.maxRequestBodyBytes + " bytes");
        } else {
            resetResponse();
        }
    }

    private void onClientGone() {
        if (finished || clientGone) {
            return;
        }
        clientGone = true;
        if (upstreamRequest != null) {
            // cancel at once: closing the upstream connection makes the engine abort the generation
            upstreamRequest.reset();
        }
        finish(Outcome.CLIENT_CANCELLED, System.nanoTime());
    }

    /**
     * Closes the client's connection mid-response (HTTP/1.x) or resets its stream (HTTP/2). Vert.x runs neither the
     * response's end nor its close handler for a reset it was asked for, so the in-flight count goes here.
     */
    private void resetResponse() {
        response.reset();
        release();
    }

    /** The in-flight count of this exchange goes, once, whichever way it ended. */
    private void release() {
        if (!released) {
            released = true;
            proxy.exchangeEnded();
        }
    }

    private void finish(Outcome outcome, long nanos) {
        if (finished) {
            return;
        }
        finished = true;
        if (connection != null) {
            connection.endExchange(this, nanos); // the pooled connection outlives this exchange
        }
        pending = null;
        body = null;
        clientBody = null;
        if (idleTimer >= 0) {
            proxy.vertx.cancelTimer(idleTimer);
        }
        observer.ended(outcome, status, nanos);
        if (llm != null) {
            llm.finish(outcome);
        }
    }
}
