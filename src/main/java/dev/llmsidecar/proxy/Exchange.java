package dev.llmsidecar.proxy;

import dev.llmsidecar.export.ModelLabels;
import dev.llmsidecar.export.otel.RequestSpan;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.openai.InspectedRequest;
import dev.llmsidecar.wire.openai.OpenAiSseDecoder;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.vertx.core.AsyncResult;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.RequestOptions;
import io.opentelemetry.context.Scope;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/**
 * One client request and its upstream twin, from arrival to the last byte. All callbacks run on the client
 * connection's event loop. This is where response chunks are timestamped ({@link #onUpstreamChunk}).
 */
final class Exchange implements UpstreamReadBoundary.Listener {

    private static final Logger LOG = Logger.getLogger(Exchange.class);
    private static final Set<String> SKIP_ALWAYS = Set.of("host", "expect");
    private static final Set<String> SKIP_WITH_NEW_BODY = Set.of("host", "expect", "content-length");
    /** Bytes held for one client write while a read is delivered; more than this goes out at once. */
    private static final int MAX_COALESCED_BYTES = 64 * 1024;

    private final ProxyHandler proxy;
    private final HttpServerRequest request;
    private final HttpServerResponse response;
    private final ClientWriter client;
    private final long receivedNanos;
    private final LlmOperation operation;

    private HttpClientRequest upstreamRequest;
    private HttpClientResponse upstreamResponse;
    private UpstreamReadBoundary readBoundary;
    private Buffer pending;          // what this read forwards, written once the read completes
    private long pendingSince;       // arrival of the first read part in pending
    private boolean pendingCopied;   // pending is our own buffer (not one the decoder returned)
    private boolean clientGone;
    private long lastUpstreamActivity;
    private long idleTimer = -1;
    private boolean pausedForClient;
    private boolean finished;
    private int status;

    // LLM calls only
    private String modelName;
    private String model = ModelLabels.UNKNOWN;
    private String sloClass;
    private boolean streamRequested;
    private boolean usageInjected;
    private RequestTimeline timeline;
    private RequestTimeline.LiveListener live;
    private StreamDecoder decoder;
    private OpenAiSseDecoder sseDecoder;
    private RequestSpan span = RequestSpan.NOOP;

    Exchange(ProxyHandler proxy, HttpServerRequest request, long receivedNanos, LlmOperation operation) {
        this.proxy = proxy;
        this.request = request;
        this.response = request.response();
        this.client = new ClientWriter(request, proxy.metrics);
        this.receivedNanos = receivedNanos;
        this.operation = operation;
    }

    void start() {
        if (operation != null) {
            sloClass = proxy.reporter.policy().sloClass(request.getHeader(proxy.reporter.policy().classHeader()));
            span = proxy.tracing.start(request.headers(), operation.label(), operation.format().providerName(),
                    request.method().name(), request.path(), receivedNanos);
        }
        response.closeHandler(v -> onClientGone());
        request.exceptionHandler(t -> onClientGone());
        if ("100-continue".equalsIgnoreCase(request.getHeader(HttpHeaders.EXPECT))) {
            response.writeContinue();
        }
        if (!hasBody()) {
            sendUpstream(null, null, SKIP_ALWAYS);
            if (operation != null) {
                startTimeline(false);
            }
        } else if (operation != null) {
            readLlmBody();
        } else {
            sendUpstream(null, request, SKIP_ALWAYS);
        }
    }

    private boolean hasBody() {
        String length = request.getHeader(HttpHeaders.CONTENT_LENGTH);
        return request.getHeader(HttpHeaders.TRANSFER_ENCODING) != null
                || (length != null && !length.equals("0"));
    }

    /** Reads an LLM request body (bounded) to learn model/stream and inject include_usage. */
    private void readLlmBody() {
        int max = proxy.config.llm().maxInspectedBodyBytes();
        Buffer body = Buffer.buffer();
        request.handler(chunk -> {
            body.appendBuffer(chunk);
            if (body.length() > max) {
                // too large to inspect: forward what we have and stream the rest untouched
                request.pause();
                request.handler(null);
                request.endHandler(null);
                proxy.metrics.bodyNotInspected("too_large");
                sendUpstream(body, request, SKIP_ALWAYS);
            }
        });
        request.endHandler(v -> {
            // the request object lives as long as the stream: let go of the prompt bytes once they are sent
            request.handler(null);
            request.endHandler(null);
            InspectedRequest inspected = operation.format().inspect(body, proxy.config.llm().injectIncludeUsage());
            if (!inspected.decodable()) {
                proxy.metrics.bodyNotInspected("not_json");
            }
            modelName = inspected.model();
            model = proxy.metrics.modelLabel(modelName);
            streamRequested = inspected.stream();
            span.request(modelName, streamRequested);
            usageInjected = inspected.usageInjected();
            if (usageInjected) {
                proxy.metrics.usageInjected();
            }
            sendUpstream(inspected.upstreamBody(), null, usageInjected ? SKIP_WITH_NEW_BODY : SKIP_ALWAYS);
            startTimeline(streamRequested);
        });
        request.resume();
    }

    /**
     * Starts the timeline (its clock started when the request arrived). Called once the request is on its way
     * upstream: a model's first request creates its meters, 1–2 ms here, which must not delay forwarding. If the
     * request failed in between, {@link #finish} has started it already.
     */
    private void startTimeline(boolean streaming) {
        if (timeline == null) {
            live = proxy.reporter.started(model, operation, streaming);
            timeline = new RequestTimeline(receivedNanos, streaming, live);
        }
    }

    /**
     * @param body bytes to send (the whole body, or its first part when {@code rest} follows)
     * @param rest the rest of the body, streamed with backpressure
     */
    private void sendUpstream(Buffer body, io.vertx.core.streams.ReadStream<Buffer> rest, Set<String> skip) {
        MultiMap headers = HttpHeaders.headers();
        ForwardedHeaders.copy(request.headers(), headers, skip);
        span.inject(headers);
        headers.set(HttpHeaderNames.HOST, proxy.config.upstream().preserveHost() && request.authority() != null
                ? request.authority().toString() : proxy.target.authority());
        RequestOptions options = new RequestOptions()
                .setMethod(request.method())
                .setURI(proxy.target.requestUri(request.uri()))
                .setHeaders(headers);
        armIdleTimer();
        proxy.client().request(options).onComplete(ar -> {
            if (ar.failed()) {
                onUpstreamFailedBeforeResponse(ar.cause());
                return;
            }
            upstreamRequest = ar.result();
            if (clientGone) {
                upstreamRequest.reset();
                return;
            }
            upstreamRequest.response().onComplete(this::onUpstreamResponse);
            upstreamRequest.exceptionHandler(this::onUpstreamFailedBeforeResponse);
            if (rest != null) {
                if (!headers.contains(HttpHeaders.CONTENT_LENGTH)) {
                    upstreamRequest.setChunked(true);
                }
                if (body != null) {
                    upstreamRequest.write(body);
                }
                rest.pipeTo(upstreamRequest).onSuccess(v -> releaseRequestHeaders(headers));
            } else {
                // released once written: Vert.x encodes the head from the request's map on the connection's loop
                (body != null ? upstreamRequest.end(body) : upstreamRequest.end())
                        .onSuccess(v -> releaseRequestHeaders(headers));
            }
        });
    }

    /**
     * Vert.x keeps both requests, the client's and its upstream twin, until the response ends, and with them three
     * header maps (the client's, the upstream request's, and the one this exchange built, which Vert.x's request
     * callback still holds): with the OpenAI SDK's headers 3.4 KB per open stream, a fifth of the live heap at 2000
     * streams. Once the request is forwarded nothing needs them (Vert.x's server decided keep-alive on arrival;
     * its client reads the upstream request's Connection header at response time, and the proxy never forwards
     * one).
     */
    private void releaseRequestHeaders(MultiMap built) {
        request.headers().clear();
        upstreamRequest.headers().clear();
        built.clear();
    }

    private void onUpstreamResponse(AsyncResult<HttpClientResponse> ar) {
        if (ar.failed()) {
            onUpstreamFailedBeforeResponse(ar.cause());
            return;
        }
        long now = System.nanoTime();
        lastUpstreamActivity = now;
        upstreamResponse = ar.result();
        if (clientGone || finished) {
            return;
        }
        status = upstreamResponse.statusCode();
        response.setStatusCode(status);
        response.setStatusMessage(upstreamResponse.statusMessage());
        ForwardedHeaders.copy(upstreamResponse.headers(), response.headers(), Set.of());
        boolean hasLength = upstreamResponse.headers().contains(HttpHeaders.CONTENT_LENGTH);
        boolean bodyless = request.method() == HttpMethod.HEAD || status == 204 || status == 304
                || (status >= 100 && status < 200);
        if (!hasLength && !bodyless) {
            response.setChunked(true);
        }
        if (operation != null) {
            String contentType = upstreamResponse.getHeader(HttpHeaders.CONTENT_TYPE);
            startTimeline(operation.format().streamingResponse(contentType));
            timeline.onUpstreamHeaders(now);
            if (status < 300) {
                decoder = operation.format().decoder(timeline, new UpstreamResponse(contentType,
                        upstreamResponse.headers(), hasLength, usageInjected, proxy.config.llm().maxHeldEventBytes(),
                        proxy.config.llm().maxInspectedBodyBytes()));
                if (decoder instanceof OpenAiSseDecoder openAi) {
                    sseDecoder = openAi;
                }
            }
        }
        readBoundary = UpstreamReadBoundary.of(upstreamRequest.connection());
        if (readBoundary != null) {
            readBoundary.listen(this);
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
                onUpstreamFailedBeforeResponse(timeout);
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
        Buffer out;
        if (decoder == null) {
            out = chunk;
        } else {
            // the request's span is current while its measurements are recorded: histogram exemplars point to it
            try (Scope scope = span.makeCurrent()) {
                out = decoder.onChunk(chunk, arrived);
            }
        }
        if (out.length() == 0) {
            return;
        }
        hold(out, arrived);
        // a chunk delivered outside a read (after a pause) has nothing coming with it: write it now
        boolean moreInThisRead = readBoundary != null && readBoundary.inRead();
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
        if (decoder != null) {
            Buffer rest;
            try (Scope scope = span.makeCurrent()) {
                rest = decoder.onEnd(now);
            }
            if (rest.length() > 0) {
                response.write(rest);
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
        if (sseDecoder != null) {
            // an incomplete event held back for usage stripping still reaches the client, as it would directly
            Buffer held = sseDecoder.onEnd(now);
            if (held.length() > 0) {
                client.writeUntimed(held);
            }
        }
        finish(Outcome.UPSTREAM_BROKEN, now);
        if (upstreamRequest != null) {
            upstreamRequest.reset();
        }
        // deliver what was received, then close: the client sees the same truncation it would have seen
        client.afterWritten(v -> response.reset());
    }

    private void onUpstreamFailedBeforeResponse(Throwable cause) {
        if (finished || clientGone) {
            return;
        }
        if (upstreamResponse != null) {
            onUpstreamBroken(cause);
            return;
        }
        boolean timeout = cause instanceof TimeoutException
                || (cause.getMessage() != null && cause.getMessage().contains("timeout"));
        // refused / no route / unknown host, or a connection that closed before any response byte: the second
        // is a different page (an engine crashing on the request, or closing idle connections too early)
        boolean unreachable = cause instanceof java.net.ConnectException || cause instanceof java.net.UnknownHostException
                || cause instanceof java.net.NoRouteToHostException;
        String error = timeout ? "upstream_timeout" : unreachable ? "upstream_unreachable" : "upstream_closed";
        String message = timeout ? "timed out" : unreachable ? "unreachable"
                : "closed the connection before responding";
        int code = timeout ? 504 : 502;
        LOG.debugf("upstream request failed for %s %s: %s", request.method(), request.path(), cause.toString());
        status = code;
        if (operation != null) {
            startTimeline(streamRequested);
        }
        finish(Outcome.UPSTREAM_ERROR, System.nanoTime());
        if (upstreamRequest != null) {
            upstreamRequest.reset();
        }
        if (!response.headWritten()) {
            response.setStatusCode(code)
                    .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                    .putHeader("x-llm-sidecar-error", error)
                    .end("{\"error\":{\"message\":\"llm-sidecar: upstream " + message
                            + "\",\"type\":\"upstream_error\",\"code\":" + code + "}}");
        } else {
            response.reset();
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

    private void finish(Outcome outcome, long nanos) {
        if (finished) {
            return;
        }
        finished = true;
        if (readBoundary != null) {
            readBoundary.release(this); // the pooled connection outlives this exchange
        }
        pending = null;
        if (idleTimer >= 0) {
            proxy.vertx.cancelTimer(idleTimer);
        }
        proxy.metrics.httpRequest(operation == null ? "other" : "llm", statusClass(status));
        if (operation != null) {
            if (timeline == null) {
                startTimeline(streamRequested);
            }
            var result = timeline.finish(nanos, outcome, status);
            try (Scope scope = span.makeCurrent()) {
                var verdict = proxy.reporter.finished(modelName, model, operation, sloClass, result);
                span.finish(nanos, result, verdict, sloClass);
            }
            if (sseDecoder != null && sseDecoder.strippedEvents() > 0) {
                proxy.metrics.usageChunkStripped();
            }
        }
    }

    private static String statusClass(int status) {
        return status <= 0 ? "none" : (status / 100) + "xx";
    }
}
