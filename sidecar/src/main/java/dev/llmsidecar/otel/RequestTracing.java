package dev.llmsidecar.otel;

import dev.llmsidecar.observe.RequestHead;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.common.Clock;
import java.util.concurrent.TimeUnit;

/**
 * Starts the server span of each LLM request: the parent comes from the client's W3C trace context, and the
 * span's own context is what the upstream receives. Off (no spans, no header changes) when OTel is off.
 */
public final class RequestTracing {

    public static final RequestTracing OFF = new RequestTracing(null, null, null,
            dev.llmsidecar.metrics.GenAiConventions.LATEST, null, -1);

    static final AttributeKey<String> OPERATION = AttributeKey.stringKey("gen_ai.operation.name");

    private static final TextMapGetter<RequestHead> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(RequestHead carrier) {
            return carrier.headerNames();
        }

        @Override
        public String get(RequestHead carrier, String key) {
            return carrier == null ? null : carrier.header(key);
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;
    private final String providerName;
    private final AttributeKey<String> providerKey; // gen_ai.provider.name, or gen_ai.system with v1.36 names
    private final dev.llmsidecar.metrics.GenAiConventions conventions;
    private final String upstreamHost;
    private final int upstreamPort;
    private final Clock clock = Clock.getDefault();

    private RequestTracing(Tracer tracer, TextMapPropagator propagator, String providerName,
            dev.llmsidecar.metrics.GenAiConventions conventions, String upstreamHost, int upstreamPort) {
        this.tracer = tracer;
        this.propagator = propagator;
        this.providerName = providerName;
        this.conventions = conventions;
        this.providerKey = AttributeKey.stringKey(conventions.providerKey());
        this.upstreamHost = upstreamHost;
        this.upstreamPort = upstreamPort;
    }

    public static RequestTracing of(OtelPipeline pipeline, String providerName) {
        return of(pipeline, providerName, dev.llmsidecar.metrics.GenAiConventions.LATEST);
    }

    /** @param conventions the GenAI semantic-convention version of the attribute names */
    public static RequestTracing of(OtelPipeline pipeline, String providerName,
            dev.llmsidecar.metrics.GenAiConventions conventions) {
        if (!pipeline.enabled()) {
            return OFF;
        }
        OpenTelemetry otel = pipeline.openTelemetry();
        return new RequestTracing(otel.getTracer("dev.llmsidecar"), otel.getPropagators().getTextMapPropagator(),
                providerName, conventions, null, -1);
    }

    /** The same tracing, naming the upstream the proxy sends to ({@code server.address} / {@code server.port}). */
    public RequestTracing toUpstream(String host, int port) {
        return tracer == null ? OFF : new RequestTracing(tracer, propagator, providerName, conventions, host, port);
    }

    public boolean enabled() {
        return tracer != null;
    }

    /**
     * @param providerOverride the wire format's own provider, or null for the configured one
     * @param receivedNanos {@link System#nanoTime()} when the request arrived (the span starts then)
     */
    public RequestSpan start(RequestHead request, String operation, String providerOverride, long receivedNanos) {
        if (tracer == null) {
            return RequestSpan.NOOP;
        }
        // one anchor per request: later nanoTime stamps become epoch times for the span and its events
        long receivedEpochNanos = clock.now() - (System.nanoTime() - receivedNanos);
        Context parent = propagator.extract(Context.root(), request, HEADERS);
        var span = tracer.spanBuilder(operation)
                .setParent(parent)
                .setSpanKind(SpanKind.SERVER)
                .setStartTimestamp(receivedEpochNanos, TimeUnit.NANOSECONDS)
                .setAttribute(OPERATION, operation)
                .setAttribute(providerKey, providerOverride != null ? providerOverride : providerName)
                .setAttribute("http.request.method", request.method())
                .setAttribute("url.path", request.path())
                .setAttribute("server.address", upstreamHost)
                .setAttribute("server.port", (long) upstreamPort)
                .startSpan();
        return new RequestSpan.Live(span, propagator, operation, receivedNanos, receivedEpochNanos);
    }
}
