package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.InflatingDecoder;
import dev.llmsidecar.wire.InspectedRequest;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.UsageHandling;
import dev.llmsidecar.wire.UsageReport;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpVersion;
import io.vertx.core.buffer.Buffer;
import java.util.Locale;

/**
 * The LLM side of one exchange, as far as it touches bytes: what the request asked for (model, streaming), whether
 * the sidecar asks the engine for usage (and takes it out again), and the wire-format decoder the response passes
 * through. What is measured goes to the exchange's {@link ExchangeObserver}; {@link Exchange} moves the bytes. All
 * calls come from the client connection's event loop.
 */
final class LlmCall {

    /** A model name in a log line is cut to this (it comes from a client). */
    private static final int MAX_LOGGED_MODEL_CHARS = 64;

    private final ProxyServer proxy;
    private final TrafficObserver traffic;
    private final ExchangeObserver observer;
    private final LlmOperation operation;
    private final boolean acceptsCompression;
    private final boolean http10;

    private String modelName;
    private UsageHandling usage = UsageHandling.PASS;
    private StreamDecoder decoder;
    private boolean compressed;
    private boolean lengthFramed;
    private boolean streamingResponse;
    private boolean finished;
    private boolean rejectedInjection;

    LlmCall(ProxyServer proxy, LlmOperation operation, HttpHeaders requestHeaders, HttpVersion version,
            ExchangeObserver observer) {
        this.proxy = proxy;
        this.traffic = proxy.traffic;
        this.observer = observer;
        this.operation = operation;
        this.acceptsCompression = acceptsCompression(requestHeaders.get(HttpHeaderNames.ACCEPT_ENCODING));
        this.http10 = version == HttpVersion.HTTP_1_0;
    }

    /**
     * Learns model and streaming from the whole request body, decides whether to turn include_usage on, and returns
     * the bytes to send upstream (the client's own unless it was turned on).
     */
    ByteBuf inspect(ByteBuf body) {
        InspectedRequest inspected = operation.format().inspect(Buffer.buffer(body));
        if (!inspected.decodable()) {
            traffic.bodyNotInspected("not_json");
        }
        modelName = inspected.model();
        observer.requestInspected(modelName, inspected.stream());
        IncludeUsagePolicy.Decision decision = proxy.usagePolicy.decide(policyKey(), inspected.usage(),
                acceptsCompression, http10);
        usage = decision.handling();
        if (decision.skip() != null) {
            traffic.usageSkipped(decision.skip());
        }
        if (!decision.inject()) {
            return body;
        }
        traffic.usageInjected();
        return Unpooled.wrappedBuffer(inspected.bodyWithUsage().getBytes());
    }

    /** The body was too large to inspect: it is forwarded untouched, as model {@code unknown}. */
    void notInspected() {
        traffic.bodyNotInspected("too_large");
    }

    /** True when the sidecar changed the request body (the upstream Content-Length no longer applies). */
    boolean bodyEdited() {
        return usage == UsageHandling.REMOVE;
    }

    /** The model as named (not its label: models folded into "other" may sit behind different servers). */
    private String policyKey() {
        return operation.label() + '\n' + (modelName == null ? "" : modelName);
    }

    /**
     * Adds what the sidecar sends upstream besides the client's headers: the observer's (trace context), and, where it
     * turned include_usage on, {@code Accept-Encoding: identity}, because it can remove the usage only from bytes
     * that are not compressed ({@link #injectionMetCompression}).
     */
    void prepareUpstreamHeaders(HttpHeaders headers) {
        observer.propagate(new NettyHeaders.Upstream(headers));
        if (usage == UsageHandling.REMOVE) {
            headers.set(HttpHeaderNames.ACCEPT_ENCODING, HttpHeaderValues.IDENTITY);
        }
    }

    /**
     * Whether the client's own request must be sent in place of the one the sidecar turned include_usage on for,
     * before a byte of the answer is forwarded (docs/reliability.md), and why; null when the answer goes to the client.
     * The engine compressed a success although asked for identity (the sidecar cannot edit it), or refused the
     * request with 400 or 422 (a server that forbids members it does not know, where the client's own request would
     * have been served). This call then decodes the client's request as an unedited stream.
     */
    IncludeUsagePolicy.Resend resendWithoutInjection(int status, HttpHeaders headers) {
        if (usage != UsageHandling.REMOVE) {
            return null;
        }
        if (status == 400 || status == 422) {
            usage = UsageHandling.OBSERVE;
            rejectedInjection = true;
            return IncludeUsagePolicy.Resend.REJECTED;
        }
        if (status / 100 != 2 || InflatingDecoder.identity(headers.get(HttpHeaderNames.CONTENT_ENCODING))) {
            return null;
        }
        usage = UsageHandling.OBSERVE;
        proxy.usagePolicy.compressedDespiteIdentity(policyKey());
        return IncludeUsagePolicy.Resend.COMPRESSED;
    }

    /** The request is on its way upstream. */
    void requestSent() {
        observer.requestSent();
    }

    /**
     * The response head arrived. Returns true when the response must be re-framed as chunked: a Content-Length
     * stream from which the injected usage is removed.
     */
    boolean onResponseHead(int status, HttpHeaders headers, boolean hasLength, long now) {
        if (rejectedInjection && status / 100 == 2) {
            // the client's own request was served where the one with stream_options was refused: not asked again
            proxy.usagePolicy.injectionRejected(policyKey());
        }
        String contentType = headers.get(HttpHeaderNames.CONTENT_TYPE);
        boolean streaming = operation.format().streamingResponse(contentType);
        streamingResponse = streaming;
        TokenEventSink sink = observer.responseStarted(status, streaming, now);
        if (status >= 300) {
            return false;
        }
        String encoding = headers.get(HttpHeaderNames.CONTENT_ENCODING);
        compressed = !InflatingDecoder.identity(encoding);
        lengthFramed = hasLength;
        boolean inflate = compressed && InflatingDecoder.inflates(encoding);
        if (compressed && !inflate) {
            traffic.notDecodedForEncoding();
            return false; // forwarded untouched, timed as a body without tokens
        }
        // a compressed body passes as it is (an injected one never gets here: injectionMetCompression), an inflated
        // copy is measured
        UpstreamResponse response = new UpstreamResponse(contentType, headers::get, hasLength, usage,
                proxy.config.llm().maxHeldEventBytes(), proxy.config.llm().maxInspectedBodyBytes());
        decoder = operation.format().decoder(sink, response);
        if (inflate) {
            decoder = InflatingDecoder.wrap(decoder, sink, encoding);
        }
        boolean reframe = usage == UsageHandling.REMOVE && hasLength && streaming;
        if (reframe) {
            traffic.usageReframed();
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

    /** The upstream body ended: returns any bytes the decoder still held. */
    ByteBuf onEnd(long nanos) {
        return decoder == null ? Unpooled.EMPTY_BUFFER : decoder.onEnd(nanos);
    }

    /** The upstream broke off: returns what the decoder held back, which reaches the client as it would directly. */
    ByteBuf releaseHeld() {
        return decoder == null ? Unpooled.EMPTY_BUFFER : decoder.releaseHeld();
    }

    /**
     * The exchange ended: what the stream showed about usage is counted and learned, once (the observer is told of
     * the end by the exchange).
     */
    void finish(Outcome outcome) {
        if (finished) {
            return;
        }
        finished = true;
        if (decoder == null || usage == UsageHandling.PASS) {
            return;
        }
        UsageReport report = decoder.usageReport();
        if (usage == UsageHandling.REMOVE) {
            traffic.usageRemoved(report.chunksRemoved(), report.membersRemoved());
        }
        if (outcome == Outcome.OK && streamingResponse) {
            var kept = proxy.usagePolicy.observe(policyKey(), new IncludeUsagePolicy.Observation(
                    usage == UsageHandling.REMOVE, acceptsCompression, compressed, lengthFramed, report));
            if (kept != null) {
                traffic.usageNotRemoved(kept);
                proxy.warnOnce("usage_not_removed_" + kept.label, "include_usage was turned on for " + operation.label()
                        + " model " + loggable(modelName) + " but its usage could not be removed exactly ("
                        + kept.label + "); the sidecar no longer turns it on for this model");
            }
        }
    }

    private static String loggable(String model) {
        return model == null ? "(none)" : model.length() <= MAX_LOGGED_MODEL_CHARS ? model
                : model.substring(0, MAX_LOGGED_MODEL_CHARS) + "…";
    }

    /** True when an Accept-Encoding allows any content coding other than identity. */
    static boolean acceptsCompression(String acceptEncoding) {
        if (acceptEncoding == null) {
            return false;
        }
        for (String part : acceptEncoding.split(",")) {
            String[] pieces = part.split(";");
            String coding = pieces[0].trim().toLowerCase(Locale.ROOT);
            if (coding.isEmpty() || coding.equals("identity")) {
                continue;
            }
            boolean refused = false;
            for (int i = 1; i < pieces.length; i++) {
                String p = pieces[i].trim().toLowerCase(Locale.ROOT);
                if (p.startsWith("q=")) {
                    try {
                        refused = Double.parseDouble(p.substring(2).trim()) <= 0;
                    } catch (NumberFormatException e) {
                        refused = false;
                    }
                }
            }
            if (!refused) {
                return true;
            }
        }
        return false;
    }
}
