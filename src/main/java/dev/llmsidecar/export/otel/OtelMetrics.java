package dev.llmsidecar.export.otel;

import dev.llmsidecar.slo.SloVerdict;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.timeline.TokenCountSource;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.LongHistogram;
import io.opentelemetry.api.metrics.Meter;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * The OTLP side of the request measurements: the same values as the Prometheus series, under the OTel GenAI
 * names and attributes (docs/otel.md maps one to the other). Histograms get the Prometheus bucket bounds as
 * advice; {@code OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=base2_exponential_bucket_histogram}
 * turns them into exponential histograms.
 */
public final class OtelMetrics {

    public static final OtelMetrics OFF = new OtelMetrics();

    static final AttributeKey<String> MODEL = AttributeKey.stringKey("gen_ai.request.model");
    static final AttributeKey<String> TOKEN_TYPE = AttributeKey.stringKey("gen_ai.token.type");
    static final AttributeKey<Boolean> STREAMING = AttributeKey.booleanKey("llm_sidecar.streaming");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("llm_sidecar.outcome");
    static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    static final AttributeKey<String> SLO_CLASS = AttributeKey.stringKey("llm_sidecar.slo_class");
    static final AttributeKey<String> OBJECTIVE = AttributeKey.stringKey("llm_sidecar.objective");

    private final boolean enabled;
    private final String provider;
    private DoubleHistogram ttft;
    private DoubleHistogram ttfc;
    private DoubleHistogram chunkGap;
    private DoubleHistogram tpot;
    private DoubleHistogram duration;
    private DoubleHistogram itl;
    private LongHistogram tokenUsage;
    private LongCounter tokens;
    private LongCounter requests;
    private LongCounter sloRequests;
    private LongCounter sloGoodRequests;
    private LongCounter sloOutputTokens;
    private LongCounter sloGoodOutputTokens;
    private LongCounter objectiveRequests;
    private LongCounter objectiveGoodRequests;

    private OtelMetrics() {
        this.enabled = false;
        this.provider = null;
    }

    /**
     * @param latencyBounds bucket bounds in seconds (the Prometheus latency buckets)
     * @param tokenBounds bucket bounds for token counts
     */
    public OtelMetrics(Meter meter, String provider, List<Double> latencyBounds, List<Long> tokenBounds,
            IntSupplier inFlight, IntSupplier waitingFirstToken) {
        this.enabled = true;
        this.provider = provider;
        ttft = seconds(meter, "gen_ai.server.time_to_first_token", latencyBounds,
                "Request received to first token-bearing chunk (content, reasoning or tool call); e2e when not streaming");
        ttfc = seconds(meter, "gen_ai.client.operation.time_to_first_chunk", latencyBounds,
                "Request received to first chunk of any kind (streaming only)");
        chunkGap = seconds(meter, "gen_ai.client.operation.time_per_output_chunk", latencyBounds,
                "Gap between successive token-bearing chunks (streaming only)");
        tpot = seconds(meter, "gen_ai.server.time_per_output_token", latencyBounds,
                "Per request: (e2e - ttft) / (output_tokens - 1)");
        duration = seconds(meter, "gen_ai.server.request.duration", latencyBounds,
                "Request received to last token chunk (successful streams) or to end of response");
        itl = seconds(meter, "llm_sidecar.inter_token_latency", latencyBounds,
                "Token-weighted inter-token latency: k samples of gap/k for a chunk carrying k tokens");
        tokenUsage = meter.histogramBuilder("gen_ai.client.token.usage").ofLongs().setUnit("{token}")
                .setDescription("Tokens per request by gen_ai.token.type").setExplicitBucketBoundariesAdvice(tokenBounds)
                .build();
        tokens = counter(meter, "llm_sidecar.tokens", "{token}", "Tokens of finished LLM requests by type");
        requests = counter(meter, "llm_sidecar.requests", "{request}", "Finished LLM requests");
        sloRequests = counter(meter, "llm_sidecar.slo.requests", "{request}",
                "Finished LLM requests (errors and cancellations included)");
        sloGoodRequests = counter(meter, "llm_sidecar.slo.good_requests", "{request}",
                "Requests that completed and met every applicable objective");
        sloOutputTokens = counter(meter, "llm_sidecar.slo.output_tokens", "{token}",
                "Output tokens of finished LLM requests");
        sloGoodOutputTokens = counter(meter, "llm_sidecar.slo.good_output_tokens", "{token}",
                "Output tokens of good requests");
        objectiveRequests = counter(meter, "llm_sidecar.slo.objective_requests", "{request}",
                "Requests an objective applied to");
        objectiveGoodRequests = counter(meter, "llm_sidecar.slo.objective_good_requests", "{request}",
                "Requests that met the objective");
        meter.gaugeBuilder("llm_sidecar.requests_in_flight").ofLongs().setUnit("{request}")
                .setDescription("LLM requests received and not yet finished")
                .buildWithCallback(m -> m.record(inFlight.getAsInt()));
        meter.gaugeBuilder("llm_sidecar.requests_waiting_first_token").ofLongs().setUnit("{request}")
                .setDescription("LLM requests received that have no token yet")
                .buildWithCallback(m -> m.record(waitingFirstToken.getAsInt()));
    }

    private static DoubleHistogram seconds(Meter meter, String name, List<Double> bounds, String description) {
        return meter.histogramBuilder(name).setUnit("s").setDescription(description)
                .setExplicitBucketBoundariesAdvice(bounds).build();
    }

    private static LongCounter counter(Meter meter, String name, String unit, String description) {
        return meter.counterBuilder(name).setUnit(unit).setDescription(description).build();
    }

    public boolean enabled() {
        return enabled;
    }

    /** @param providerOverride the format's own provider, or null for the configured one */
    private Attributes base(String model, String operation, String providerOverride) {
        return Attributes.of(RequestTracing.OPERATION, operation, RequestTracing.PROVIDER,
                providerOverride != null ? providerOverride : provider, MODEL, model);
    }

    /** Records the chunk gaps of one streaming request as they happen; forwards everything to {@code next}. */
    public RequestTimeline.LiveListener live(String model, String operation, String providerOverride,
            boolean streaming, RequestTimeline.LiveListener next) {
        if (!enabled || !streaming) {
            return next;
        }
        return new LiveRecorder(next, base(model, operation, providerOverride).toBuilder().put(STREAMING, true).build());
    }

    /** Forwards to the Prometheus listener and records each chunk gap as it happens. */
    public final class LiveRecorder implements RequestTimeline.LiveListener {
        private final RequestTimeline.LiveListener next;
        private final Attributes attributes;

        LiveRecorder(RequestTimeline.LiveListener next, Attributes attributes) {
            this.next = next;
            this.attributes = attributes;
        }

        @Override
        public void onFirstChunk(long ttfcNanos) {
            next.onFirstChunk(ttfcNanos);
        }

        @Override
        public void onFirstToken(long ttftNanos) {
            next.onFirstToken(ttftNanos);
        }

        @Override
        public void onFirstReasoningToken(long nanos) {
            next.onFirstReasoningToken(nanos);
        }

        @Override
        public void onFirstAnswerToken(long nanos) {
            next.onFirstAnswerToken(nanos);
        }

        @Override
        public void onEnd() {
            next.onEnd();
        }

        @Override
        public void onChunkGap(long gapNanos) {
            next.onChunkGap(gapNanos);
            chunkGap.record(gapNanos / 1e9, attributes);
        }
    }

    /** OTel {@code error.type} of a failed request: the upstream's HTTP status when it sent one, else the outcome. */
    static String errorType(RequestResult r) {
        return r.outcome() == Outcome.UPSTREAM_ERROR && r.status() > 0 ? Integer.toString(r.status())
                : r.outcome().label();
    }

    public void finished(String model, String operation, String providerOverride, String sloClass, RequestResult r,
            SloVerdict verdict) {
        if (!enabled) {
            return;
        }
        Attributes common = base(model, operation, providerOverride);
        var withOutcome = common.toBuilder().put(STREAMING, r.streaming()).put(OUTCOME, r.outcome().label());
        if (r.outcome() != Outcome.OK) {
            withOutcome.put(ERROR_TYPE, errorType(r));
        }
        Attributes attributes = withOutcome.build();
        requests.add(1, attributes);
        duration.record(r.e2eNanos() / 1e9, attributes);
        if (r.ttftNanos() >= 0) {
            ttft.record(r.ttftNanos() / 1e9, attributes);
        }
        if (r.ttfcNanos() >= 0) {
            ttfc.record(r.ttfcNanos() / 1e9, attributes);
        }
        if (r.tpotNanos() >= 0) {
            tpot.record(r.tpotNanos() / 1e9, attributes);
        }
        r.itl().forEach((sample, count) -> {
            for (int i = 0; i < count; i++) {
                itl.record(sample / 1e9, attributes);
            }
        });
        if (r.promptTokens() >= 0) {
            Attributes input = common.toBuilder().put(TOKEN_TYPE, "input").build();
            tokenUsage.record(r.promptTokens(), input);
            tokens.add(r.promptTokens(), input);
        }
        if (r.outputTokenSource() != TokenCountSource.NONE) {
            Attributes output = common.toBuilder().put(TOKEN_TYPE, "output").build();
            tokenUsage.record(r.outputTokens(), output);
            tokens.add(r.outputTokens(), output);
        }
        if (r.cachedTokens() >= 0) {
            tokens.add(r.cachedTokens(), common.toBuilder().put(TOKEN_TYPE, "cached_input").build());
        }
        if (!verdict.counted()) {
            return; // neither good nor bad (docs/slo.md)
        }
        Attributes slo = Attributes.of(MODEL, model, SLO_CLASS, sloClass);
        long outputTokens = Math.max(0, r.outputTokens());
        sloRequests.add(1, slo);
        sloOutputTokens.add(outputTokens, slo);
        if (verdict.good()) {
            sloGoodRequests.add(1, slo);
            sloGoodOutputTokens.add(outputTokens, slo);
        }
        for (SloVerdict.ObjectiveResult o : verdict.objectives()) {
            Attributes objective = slo.toBuilder().put(OBJECTIVE, o.objective().name()).build();
            objectiveRequests.add(1, objective);
            if (o.met()) {
                objectiveGoodRequests.add(1, objective);
            }
        }
    }
}
