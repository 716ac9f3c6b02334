package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.observe.RequestBytes;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.rewrite.ExchangeRewrite;
import dev.llmsidecar.rewrite.RewriteRequest;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.InflatingDecoder;
import dev.llmsidecar.wire.InspectedRequest;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpVersion;
import io.vertx.core.buffer.Buffer;

/**
 * The LLM side of one exchange, as far as it touches bytes: what the request asked for (model, streaming), the
 * rewrite the hook chose for it, and the wire-format decoder the response passes through. What is measured goes to
 * the exchange's {@link ExchangeObserver}; {@link Exchange} moves the bytes. All calls come from the client
 * connection's event loop.
 */
final class LlmCall implements RawRelay.Decoding, RequestBytes {

    private final ExchangeContext context;
    private final TrafficObserver traffic;
    private final ExchangeObserver observer;
    private final LlmOperation operation;

    private ExchangeRewrite rewrite = ExchangeRewrite.NONE;
    private StreamDecoder decoder;
    private boolean streamingResponse;
    private boolean finished;
    /** The body being inspected, readable by the observer during {@link ExchangeObserver#requestBody} only. */
    private ByteBuf inspecting;

    LlmCall(ExchangeContext context, LlmOperation operation, ExchangeObserver observer) {
        this.context = context;
        this.traffic = context.traffic();
        this.observer = observer;
        this.operation = operation;
    }

    /**
     * Learns model and streaming from the whole request body, asks the rewrite hook what this exchange's rewrite is,
     * and returns the bytes to send upstream: {@code body} itself unless the rewrite edited it.
     */
    ByteBuf inspect(ByteBuf body, HttpHeaders requestHeaders, HttpVersion version) {
        InspectedRequest inspected = operation.format().inspect(Buffer.buffer(body));
        if (!inspected.decodable()) {
            traffic.count(ProxyEvent.BODY_NOT_INSPECTED_NOT_JSON);
        }
        observer.requestInspected(inspected.model(), inspected.stream(), inspected.priority());
        if (inspected.conversation() != null) {
            observer.conversationRead(inspected.conversation());
        }
        // the client's own body, before any rewrite; this object is the view, so an observer that reads nothing
        // costs nothing (no copy, no allocation)
        inspecting = body;
        try {
            observer.requestBody(this);
        } finally {
            inspecting = null;
        }
        rewrite = context.rewriter().start(new RewriteRequest(operation, inspected,
                new NettyHeaders.Upstream(requestHeaders), version == HttpVersion.HTTP_1_0));
        return rewrite.requestBody(body);
    }

    @Override
    public int length() {
        return inspecting == null ? 0 : inspecting.readableBytes();
    }

    @Override
    public void copyTo(byte[] dst, int length) {
        if (inspecting != null) {
            inspecting.getBytes(inspecting.readerIndex(), dst, 0, Math.min(length, inspecting.readableBytes()));
        }
    }

    /**
     * The body was too large to inspect, or the inspect budget was spent ({@code budget}): it is forwarded
     * untouched, as model {@code unknown} (or the one the engine serves).
     */
    void notInspected(boolean budget) {
        traffic.count(budget ? ProxyEvent.BODY_NOT_INSPECTED_BUDGET : ProxyEvent.BODY_NOT_INSPECTED_TOO_LARGE);
    }

    /**
     * Adds what the sidecar sends upstream besides the client's headers: the observer's (trace context), then the
     * rewrite's edits.
     */
    void prepareUpstreamHeaders(HttpHeaders headers) {
        NettyHeaders.Upstream upstream = new NettyHeaders.Upstream(headers);
        observer.propagate(upstream);
        rewrite.requestHeaders(upstream);
    }

    /** A response head arrived, before a byte of it is forwarded: the rewrite's verdict on it. */
    ExchangeRewrite.Verdict verdict(int status, HttpHeaders headers) {
        return rewrite.responseHead(status, new NettyHeaders.Upstream(headers));
    }

    /** The request goes again as the client wrote it: the rewrite undoes its edits of the upstream head. */
    void undoRewrite(HttpHeaders upstreamRequest) {
        rewrite.undo(new NettyHeaders.Upstream(upstreamRequest));
    }

    /** The request is on its way upstream. */
    void requestSent() {
        observer.requestSent();
    }

    /**
     * The response head was accepted. Returns true when the response must be re-framed as chunked: a Content-Length
     * body that a rewrite edits.
     */
    boolean onResponseHead(int status, HttpHeaders headers, boolean hasLength, long now) {
        String contentType = headers.get(HttpHeaderNames.CONTENT_TYPE);
        boolean streaming = operation.format().streamingResponse(contentType);
        streamingResponse = streaming;
        TokenEventSink sink = observer.responseStarted(status, streaming, now);
        if (status >= 300) {
            return false;
        }
        String encoding = headers.get(HttpHeaderNames.CONTENT_ENCODING);
        boolean compressed = !InflatingDecoder.identity(encoding);
        boolean inflate = compressed && InflatingDecoder.inflates(encoding);
        if (compressed && !inflate) {
            traffic.count(ProxyEvent.NOT_DECODED_CONTENT_ENCODING);
            return false; // forwarded untouched, timed as a body without tokens
        }
        // a compressed body passes as it is and an inflated copy is measured
        UpstreamResponse response = new UpstreamResponse(contentType, headers::get, hasLength,
                context.maxHeldEventBytes(), context.maxInspectedBodyBytes());
        StreamDecoder chosen = rewrite.decoder(operation.format(), sink, response);
        decoder = chosen != null ? chosen : operation.format().decoder(sink, response);
        if (inflate) {
            decoder = InflatingDecoder.wrap(decoder, sink, encoding);
        }
        boolean reframe = hasLength && rewrite.editsResponseBody();
        if (reframe) {
            traffic.count(ProxyEvent.RESPONSE_REFRAMED);
        }
        return reframe;
    }

    /**
     * Decodes one piece of an upstream read; returns what to forward: {@code content} itself (the common case, no
     * copy), or other bytes, in which case the decoder has taken over {@code content}'s reference.
     */
    ByteBuf onChunk(ByteBuf content, long nanos) {
        return decoder == null ? content : decoder.onChunk(content, nanos);
    }

    @Override
    public ByteBuf onData(ByteBuf read, int index, int length, long nanos) {
        return decoder == null ? null : decoder.onData(read, index, length, nanos);
    }

    @Override
    public boolean edits() {
        return decoder != null && decoder.edits();
    }

    /** The upstream body ended: returns any bytes the decoder still held. */
    @Override
    public ByteBuf onEnd(long nanos) {
        return decoder == null ? Unpooled.EMPTY_BUFFER : decoder.onEnd(nanos);
    }

    /** The upstream broke off: returns what the decoder held back, which reaches the client as it would directly. */
    @Override
    public ByteBuf releaseHeld() {
        return decoder == null ? Unpooled.EMPTY_BUFFER : decoder.releaseHeld();
    }

    /** The exchange ended: the rewrite hears of it, once (the observer is told of the end by the exchange). */
    void finish(Outcome outcome) {
        if (!finished) {
            finished = true;
            rewrite.ended(outcome == Outcome.OK && streamingResponse);
        }
    }
}
