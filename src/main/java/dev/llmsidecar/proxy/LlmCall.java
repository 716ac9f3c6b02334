package dev.llmsidecar.proxy;

import dev.llmsidecar.export.ModelLabels;
import dev.llmsidecar.export.ProxyCounters;
import dev.llmsidecar.export.otel.RequestSpan;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.wire.InflatingDecoder;
import dev.llmsidecar.wire.InspectedRequest;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.UsageHandling;
import dev.llmsidecar.wire.UsageReport;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy;
import io.opentelemetry.context.Scope;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import java.util.Locale;

/**
 * The LLM side of one exchange: what the request asked for (model, streaming, SLO class), whether the sidecar
 * asks the engine for usage, the request's timeline, span and wire-format decoder, and the report when it ends.
 * {@link Exchange} moves the bytes; this measures them. All calls come from the client connection's event loop.
 */
final class LlmCall {

    private static final Buffer EMPTY = Buffer.buffer(0);

    private final ProxyHandler proxy;
    private final ProxyCounters counters;
    private final LlmOperation operation;
    private final long receivedNanos;
    private final String sloClass;
    private final String tenantName;
    private final String tenant;
    private final RequestSpan span;
    private final boolean acceptsCompression;
    private final boolean http10;

    private String modelName;
    private String model = ModelLabels.UNKNOWN;
    private boolean streamRequested;
    private UsageHandling usage = UsageHandling.PASS;
    private RequestTimeline timeline;
    private int loadAtArrival;
    private StreamDecoder decoder;
    private boolean compressed;
    private boolean lengthFramed;

    LlmCall(ProxyHandler proxy, LlmOperation operation, HttpServerRequest request, long receivedNanos) {
        this.proxy = proxy;
        this.counters = proxy.metrics.proxy();
        this.operation = operation;
        this.receivedNanos = receivedNanos;
        this.sloClass = proxy.reporter.policy().sloClass(request.getHeader(proxy.reporter.policy().classHeader()));
        this.tenantName = proxy.reporter.tenants().tenantOf(request::getHeader);
        this.tenant = proxy.reporter.tenants().label(tenantName);
        this.span = proxy.tracing.start(request.headers(), operation.label(), operation.format().providerName(),
                request.method().name(), request.path(), receivedNanos);
        this.acceptsCompression = acceptsCompression(request.getHeader(HttpHeaders.ACCEPT_ENCODING));
        this.http10 = request.version() == HttpVersion.HTTP_1_0;
    }

    /**
     * Learns model and streaming from the whole request body, decides whether to turn include_usage on, and returns
     * the bytes to send upstream (the client's own unless it was turned on).
     */
    Buffer inspect(Buffer body) {
        InspectedRequest inspected = operation.format().inspect(body);
        if (!inspected.decodable()) {
            proxy.metrics.bodyNotInspected("not_json");
        }
        modelName = inspected.model();
        model = proxy.metrics.modelLabel(modelName);
        streamRequested = inspected.stream();
        span.request(modelName, streamRequested);
        IncludeUsagePolicy.Decision decision = proxy.usagePolicy.decide(policyKey(), inspected.usage(),
                acceptsCompression, http10);
        usage = decision.handling();
        if (decision.skip() != null) {
            counters.usageSkipped(decision.skip());
        }
        if (!decision.inject()) {
            return body;
        }
        counters.usageInjected();
        return inspected.bodyWithUsage();
    }

    /** The body was too large to inspect: it is forwarded untouched, as model {@code unknown}. */
    void notInspected() {
        proxy.metrics.bodyNotInspected("too_large");
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
     * Adds what the sidecar sends upstream besides the client's headers: the trace context, and, where it turned
     * include_usage on, {@code Accept-Encoding: identity}, because it can remove the usage only from bytes that are
     * not compressed ({@link #injectionMetCompression}).
     */
    void prepareUpstreamHeaders(MultiMap headers) {
        span.inject(headers);
        if (usage == UsageHandling.REMOVE) {
            headers.set(HttpHeaders.ACCEPT_ENCODING, HttpHeaders.IDENTITY);
        }
    }

    /**
     * True when the engine answered a request the sidecar turned include_usage on for with a compressed success
     * although it was asked for identity: the exchange then sends the client's own request instead
     * (docs/reliability.md), and this call measures that one as an unedited stream. The engine is not asked again
     * for this model.
     */
    boolean injectionMetCompression(int status, MultiMap headers) {
        if (usage != UsageHandling.REMOVE || status / 100 != 2
                || InflatingDecoder.identity(headers.get(HttpHeaders.CONTENT_ENCODING))) {
            return false;
        }
        usage = UsageHandling.OBSERVE;
        proxy.usagePolicy.compressedDespiteIdentity(policyKey());
        return true;
    }

    /**
     * Starts the timeline (its clock started when the request arrived). Called once the request is on its way
     * upstream: a model's first request creates its meters, 1–2 ms here, which must not delay forwarding.
     */
    void requestSent() {
        startTimeline(streamRequested);
    }

    private void startTimeline(boolean streaming) {
        if (timeline == null) {
            var live = proxy.reporter.started(model, tenant, operation, streaming);
            loadAtArrival = live.loadAtArrival();
            timeline = new RequestTimeline(receivedNanos, streaming, live);
        }
    }

    /**
     * The response head arrived. Returns true when the response must be re-framed as chunked: a Content-Length
     * stream from which the injected usage is removed.
     */
    boolean onResponseHead(int status, MultiMap headers, boolean hasLength, long now) {
        String contentType = headers.get(HttpHeaders.CONTENT_TYPE);
        boolean streaming = operation.format().streamingResponse(contentType);
        startTimeline(streaming);
        timeline.onUpstreamHeaders(now);
        if (status >= 300) {
            return false;
        }
        String encoding = headers.get(HttpHeaders.CONTENT_ENCODING);
        compressed = !InflatingDecoder.identity(encoding);
        lengthFramed = hasLength;
        boolean inflate = compressed && InflatingDecoder.inflates(encoding);
        if (compressed && !inflate) {
            counters.notDecodedForEncoding();
            return false; // forwarded untouched, timed as a body without tokens
        }
        // a compressed body passes as it is (an injected one never gets here: injectionMetCompression), an inflated
        // copy is measured
        UpstreamResponse response = new UpstreamResponse(contentType, headers, hasLength, usage,
                proxy.config.llm().maxHeldEventBytes(), proxy.config.llm().maxInspectedBodyBytes());
        decoder = operation.format().decoder(timeline, response);
        if (inflate) {
            decoder = InflatingDecoder.wrap(decoder, timeline, encoding);
        }
        boolean reframe = usage == UsageHandling.REMOVE && hasLength && streaming;
        if (reframe) {
            counters.usageReframed();
        }
        return reframe;
    }

    /** Decodes one upstream read; returns the bytes to forward. */
    Buffer onChunk(Buffer chunk, long nanos) {
        if (decoder == null) {
            return chunk;
        }
        // the request's span is current while its measurements are recorded: histogram exemplars point to it
        try (Scope scope = span.makeCurrent()) {
            return decoder.onChunk(chunk, nanos);
        }
    }

    /** The upstream body ended: returns any bytes the decoder still held. */
    Buffer onEnd(long nanos) {
        if (decoder == null) {
            return EMPTY;
        }
        try (Scope scope = span.makeCurrent()) {
            return decoder.onEnd(nanos);
        }
    }

    /** The upstream broke off: returns what the decoder held back, which reaches the client as it would directly. */
    Buffer releaseHeld() {
        return decoder == null ? EMPTY : decoder.releaseHeld();
    }

    /** Reports the finished request (once). */
    void finish(Outcome outcome, int status, long nanos) {
        startTimeline(streamRequested);
        if (status / 100 == 2) {
            proxy.reporter.tenants().admit(tenantName); // the engine accepted it: a tenant of its own from now on
        }
        var result = timeline.finish(nanos, outcome, status);
        try (Scope scope = span.makeCurrent()) {
            var verdict = proxy.reporter.finished(modelName, model, tenant, operation, sloClass, loadAtArrival, result);
            span.finish(nanos, result, verdict, sloClass);
        }
        if (decoder == null || usage == UsageHandling.PASS) {
            return;
        }
        UsageReport report = decoder.usageReport();
        if (usage == UsageHandling.REMOVE) {
            counters.usageRemoved(report.chunksRemoved(), report.membersRemoved());
        }
        if (outcome == Outcome.OK && result.streaming()) {
            var kept = proxy.usagePolicy.observe(policyKey(), new IncludeUsagePolicy.Observation(
                    usage == UsageHandling.REMOVE, acceptsCompression, compressed, lengthFramed, report));
            if (kept != null) {
                counters.usageNotRemoved(kept);
                proxy.warnOnce("usage_not_removed_" + kept.label, "include_usage was turned on for " + operation.label()
                        + " model " + model + " but its usage could not be removed exactly (" + kept.label
                        + "); the sidecar no longer turns it on for this model");
            }
        }
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
