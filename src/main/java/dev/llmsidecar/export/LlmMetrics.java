package dev.llmsidecar.export;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.timeline.TokenCountSource;
import dev.llmsidecar.wire.ServerTimings;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The Prometheus (Micrometer) side of the sidecar. Every series here is specified in docs/metrics.md; change
 * both together. Meters are cached per label set so recording on the event loop is a map lookup plus
 * lock-free histogram updates.
 */
public final class LlmMetrics {

    private final MeterRegistry registry;
    private final ModelLabels models;
    private final Duration[] latencyBuckets;
    private final double[] tokenBuckets;

    private final Map<LiveKey, Live> live = new ConcurrentHashMap<>();
    private final Map<EndKey, End> end = new ConcurrentHashMap<>();
    private final MeterCache cache;

    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final DistributionSummary waitingDepth;
    private final AtomicInteger waitingFirstToken = new AtomicInteger();
    private final Timer chunkWriteDelay;
    private final ProxyCounters proxy;

    public LlmMetrics(MeterRegistry registry, SidecarConfig.Metrics config) {
        this(registry, config, List.of());
    }

    /** @param extraLatencyBounds more latency bucket bounds in seconds (every SLO threshold becomes one) */
    public LlmMetrics(MeterRegistry registry, SidecarConfig.Metrics config, List<Double> extraLatencyBounds) {
        this.registry = registry;
        this.cache = new MeterCache(registry);
        this.proxy = new ProxyCounters(registry);
        this.models = new ModelLabels(config.maxModels(), config.pinnedModels().orElse(List.of()));
        this.latencyBuckets = java.util.stream.Stream.concat(config.latencyBuckets().stream(), extraLatencyBounds.stream())
                .map(s -> Duration.ofNanos(Math.round(s * 1e9))).distinct().sorted().toArray(Duration[]::new);
        this.tokenBuckets = config.tokenBuckets().stream().mapToDouble(Double::doubleValue).toArray();
        Gauge.builder("llm_sidecar.requests_in_flight", inFlight, AtomicInteger::get)
                .description("LLM requests received and not yet finished").register(registry);
        Gauge.builder("llm_sidecar.requests_waiting_first_token", waitingFirstToken, AtomicInteger::get)
                .description("LLM requests received that have no token yet (queued or prefilling upstream)")
                .register(registry);
        Gauge.builder("llm_sidecar.requests_in_flight_max", maxInFlight, AtomicInteger::get)
                .description("Highest number of LLM requests in flight at once since start").register(registry);
        this.waitingDepth = DistributionSummary.builder("llm_sidecar.requests_waiting_first_token_depth")
                .description("Requests waiting for their first token, sampled at a fixed period: bucket share = "
                        + "share of time the queue was at most that deep")
                .serviceLevelObjectives(0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
                .publishPercentileHistogram(false).register(registry);
        this.chunkWriteDelay = latencyTimer("llm_sidecar.chunk_write_delay", Tags.empty(),
                "Time from a response chunk's arrival from upstream until it was written to the client socket");
        registerKnownCounters();
    }

    /** Latency bucket bounds in seconds, SLO thresholds included (the OTLP histograms use the same). */
    public List<Double> latencyBoundsSeconds() {
        return java.util.Arrays.stream(latencyBuckets).map(d -> d.toNanos() / 1e9).toList();
    }

    /** Token-count bucket bounds. */
    public List<Long> tokenBounds() {
        return java.util.Arrays.stream(tokenBuckets).mapToObj(b -> (long) b).toList();
    }

    /** The model label for a request model name (bounded; see {@link ModelLabels}). */
    public String modelLabel(String model) {
        return models.label(model);
    }

    /** Starts the live part of an LLM request: in-flight and waiting gauges, TTFT / chunk timers. */
    public RequestTimeline.LiveListener requestStarted(String model, String operation, boolean streaming) {
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        waitingFirstToken.incrementAndGet();
        return new LiveRequest(live.computeIfAbsent(new LiveKey(model, operation, streaming), this::newLive));
    }

    /**
     * Records everything that is final only when the request ended.
     *
     * @param format the wire format's name, for the per-format undecodable counter
     */
    public void requestFinished(String model, String operation, String format, RequestResult r) {
        inFlight.decrementAndGet();
        End m = end.computeIfAbsent(new EndKey(model, operation, r.streaming(), r.outcome().label()), this::newEnd);
        m.requests.increment();
        m.duration.record(r.e2eNanos(), TimeUnit.NANOSECONDS);
        if (!r.streaming() && r.ttftNanos() >= 0) {
            // non-streaming: the whole answer is the first token (labelled streaming="false")
            m.live.ttft.record(r.ttftNanos(), TimeUnit.NANOSECONDS);
        }
        if (r.outcome() == Outcome.OK && r.ttftNanos() >= 0) {
            // a TTFT flattered by the prefix cache must be told apart from a cold prefill
            String cache = r.cachedTokens() < 0 ? "unknown" : r.cachedTokens() > 0 ? "hit" : "miss";
            lazyTimer("llm_sidecar.time_to_first_token_by_cache", "TTFT of successful requests by prefix-cache hit",
                    "model", model, "operation", operation, "streaming", Boolean.toString(r.streaming()), "cache", cache)
                    .record(r.ttftNanos(), TimeUnit.NANOSECONDS);
        }
        ServerTimings engine = r.serverTimings();
        if (engine != null) {
            if (engine.queueNanos() >= 0) {
                lazyTimer("llm_sidecar.engine_reported_queue", "Queue time the engine reported for the request",
                        "model", model, "operation", operation).record(engine.queueNanos(), TimeUnit.NANOSECONDS);
            }
            long engineTtft = engine.engineTtftNanos();
            if (engineTtft >= 0) {
                lazyTimer("llm_sidecar.engine_reported_time_to_first_token",
                        "Engine-reported time from its arrival to the first token (queue + prefill)",
                        "model", model, "operation", operation).record(engineTtft, TimeUnit.NANOSECONDS);
                if (r.ttftNanos() >= 0) {
                    lazyTimer("llm_sidecar.time_to_first_token_outside_engine",
                            "Client-visible TTFT minus engine-reported TTFT: network, proxy, HTTP framing, tokenizer",
                            "model", model, "operation", operation)
                            .record(Math.max(0, r.ttftNanos() - engineTtft), TimeUnit.NANOSECONDS);
                }
            }
        }
        if (engine != null && engine.decodeNanos() >= 0) {
            lazyTimer("llm_sidecar.engine_reported_decode", "Engine-reported time generating the output tokens",
                    "model", model, "operation", operation).record(engine.decodeNanos(), TimeUnit.NANOSECONDS);
        }
        if (r.upstreamHeadersNanos() >= 0) {
            m.live.upstreamHeaders.record(r.upstreamHeadersNanos(), TimeUnit.NANOSECONDS);
        }
        if (r.tpotNanos() >= 0 && m.tpot != null) {
            m.tpot.record(r.tpotNanos(), TimeUnit.NANOSECONDS);
        }
        if (m.itl != null) {
            r.itl().forEach((sample, count) -> {
                for (int i = 0; i < count; i++) {
                    m.itl.record(sample, TimeUnit.NANOSECONDS);
                }
            });
        }
        if (r.promptTokens() >= 0) {
            m.inputTokens.record(r.promptTokens());
            m.inputTokensTotal.increment(r.promptTokens());
        }
        if (r.outputTokenSource() != TokenCountSource.NONE) {
            m.outputTokens.record(r.outputTokens());
            m.outputTokensTotal.increment(r.outputTokens());
        }
        if (r.cachedTokens() >= 0) {
            m.cachedTokensTotal.increment(r.cachedTokens());
        }
        tokenSource(r.outputTokenSource().label()).increment();
        finishReason(FinishReasons.label(r.finishReason())).increment();
        if (r.undecodableChunks() > 0) {
            cache.counter("llm_sidecar.undecodable_chunks",
                    "Response chunks or bodies that could not be decoded (forwarded untouched)",
                    "operation", operation, "format", format).increment(r.undecodableChunks());
        }
    }

    /** Samples the waiting depth; called at a fixed period, so the histogram is time-weighted. */
    public void sampleQueueDepth() {
        waitingDepth.record(waitingFirstToken.get());
    }

    /** LLM requests currently in flight. */
    public int inFlight() {
        return inFlight.get();
    }

    public int waitingFirstToken() {
        return waitingFirstToken.get();
    }

    public int maxInFlight() {
        return maxInFlight.get();
    }

    /** Arrival-to-written delay of one forwarded chunk. */
    public void chunkWritten(long delayNanos) {
        chunkWriteDelay.record(delayNanos, TimeUnit.NANOSECONDS);
    }

    /** Every proxied request, LLM or not, by route kind and status class (e.g. "2xx", or "none" without response). */
    public void httpRequest(String route, String statusClass) {
        httpRequests(route, statusClass).increment();
    }

    private Counter httpRequests(String route, String statusClass) {
        return cache.counter("llm_sidecar.http_requests", "Proxied HTTP requests by route (llm, other) and status class",
                "route", route, "status_class", statusClass);
    }

    private Counter tokenSource(String source) {
        return cache.counter("llm_sidecar.output_token_source",
                "Finished LLM requests by where their output token count came from", "source", source);
    }

    private Counter finishReason(String reason) {
        return cache.counter("llm_sidecar.finish_reasons", "Finished LLM requests by finish_reason",
                "finish_reason", reason);
    }

    private Counter notInspected(String reason) {
        return cache.counter("llm_sidecar.body_inspection_skipped",
                "LLM request bodies forwarded without inspection (not_json, too_large)", "reason", reason);
    }

    /**
     * Counters without a model label whose label values are all known are exported at 0 from the start, so a
     * dashboard shows 0 where nothing happened yet, not "No data".
     */
    private void registerKnownCounters() {
        for (String route : List.of("llm", "other")) {
            for (String statusClass : List.of("2xx", "3xx", "4xx", "5xx", "none")) {
                httpRequests(route, statusClass);
            }
        }
        for (TokenCountSource source : TokenCountSource.values()) {
            tokenSource(source.label());
        }
        FinishReasons.labels().forEach(this::finishReason);
        notInspected("not_json");
        notInspected("too_large");
    }

    /** Counters of what the proxy did to keep traffic flowing and bytes exact. */
    public ProxyCounters proxy() {
        return proxy;
    }

    public void bodyNotInspected(String reason) {
        notInspected(reason).increment();
    }

    private Timer latencyTimer(String name, Tags tags, String description) {
        return Timer.builder(name).tags(tags).description(description)
                .serviceLevelObjectives(latencyBuckets)
                .publishPercentileHistogram(false)
                .register(registry);
    }

    private Timer lazyTimer(String name, String description, String... tags) {
        return cache.get(name, tags, t -> latencyTimer(name, t, description));
    }

    private DistributionSummary tokenSummary(String name, Tags tags, String description) {
        return DistributionSummary.builder(name).tags(tags).description(description)
                .serviceLevelObjectives(tokenBuckets)
                .publishPercentileHistogram(false)
                .register(registry);
    }

    private record LiveKey(String model, String operation, boolean streaming) {
        Tags tags() {
            return Tags.of("model", model, "operation", operation, "streaming", Boolean.toString(streaming));
        }
    }

    private record EndKey(String model, String operation, boolean streaming, String outcome) {
    }

    /** Meters recorded while a request runs (no outcome label: it is not known yet). */
    private static final class Live {
        Timer ttft;
        Timer ttfc;
        Timer chunkGap;
        Timer upstreamHeaders;
        Timer firstReasoning;
        Timer firstAnswer;
    }

    private Live newLive(LiveKey k) {
        Live l = new Live();
        Tags tags = k.tags();
        l.ttft = latencyTimer("gen_ai.server.time_to_first_token", tags,
                "Request received to first token-bearing chunk (content, reasoning or tool call)");
        if (k.streaming()) {
            l.ttfc = latencyTimer("gen_ai.client.operation.time_to_first_chunk", tags,
                    "Request received to first chunk of any kind (role-only prelude included)");
            l.chunkGap = latencyTimer("gen_ai.client.operation.time_per_output_chunk", tags,
                    "Raw gap between successive token-bearing chunks");
            l.firstReasoning = latencyTimer("llm_sidecar.time_to_first_reasoning_token", tags,
                    "Request received to first reasoning (thinking) chunk; TTFT is the first of reasoning or answer");
            l.firstAnswer = latencyTimer("llm_sidecar.time_to_first_answer_token", tags,
                    "Request received to first answer chunk (content, refusal or tool call)");
        }
        l.upstreamHeaders = latencyTimer("llm_sidecar.time_to_upstream_headers", tags,
                "Request received to upstream response headers");
        return l;
    }

    private static final class End {
        Live live;
        Counter requests;
        Timer duration;
        Timer tpot;
        Timer itl;
        DistributionSummary inputTokens;
        DistributionSummary outputTokens;
        Counter inputTokensTotal;
        Counter outputTokensTotal;
        Counter cachedTokensTotal;
    }

    private End newEnd(EndKey k) {
        End e = new End();
        e.live = live.computeIfAbsent(new LiveKey(k.model(), k.operation(), k.streaming()), this::newLive);
        Tags tags = Tags.of("model", k.model(), "operation", k.operation(), "streaming",
                Boolean.toString(k.streaming()), "outcome", k.outcome());
        e.requests = Counter.builder("llm_sidecar.requests").tags(tags)
                .description("Finished LLM requests").register(registry);
        e.duration = latencyTimer("gen_ai.server.request.duration", tags,
                "Request received to last token chunk (successful streams) or to end of response");
        if (k.streaming()) {
            e.tpot = latencyTimer("gen_ai.server.time_per_output_token", tags,
                    "Per request: (e2e - ttft) / (output_tokens - 1)");
            e.itl = latencyTimer("llm_sidecar.inter_token_latency", tags,
                    "Token-weighted inter-token latency: k samples of gap/k for a chunk carrying k tokens");
        }
        Tags modelOp = Tags.of("model", k.model(), "operation", k.operation());
        e.inputTokens = tokenSummary("gen_ai.client.token.usage", modelOp.and("token_type", "input"),
                "Tokens per request by type");
        e.outputTokens = tokenSummary("gen_ai.client.token.usage", modelOp.and("token_type", "output"),
                "Tokens per request by type");
        Function<String, Counter> tokens = type -> Counter.builder("llm_sidecar.tokens")
                .tags(modelOp.and("token_type", type)).description("Tokens of finished LLM requests by type")
                .register(registry);
        e.inputTokensTotal = tokens.apply("input");
        e.outputTokensTotal = tokens.apply("output");
        e.cachedTokensTotal = tokens.apply("cached_input");
        return e;
    }

    /** Per-request live recorder; decrements the waiting gauge exactly once. */
    private final class LiveRequest implements RequestTimeline.LiveListener {
        private final Live meters;
        private boolean waiting = true;

        LiveRequest(Live meters) {
            this.meters = meters;
        }

        @Override
        public void onFirstReasoningToken(long nanos) {
            if (meters.firstReasoning != null) {
                meters.firstReasoning.record(nanos, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void onFirstAnswerToken(long nanos) {
            if (meters.firstAnswer != null) {
                meters.firstAnswer.record(nanos, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void onFirstChunk(long ttfcNanos) {
            if (meters.ttfc != null) {
                meters.ttfc.record(ttfcNanos, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void onEnd() {
            release();
        }

        @Override
        public void onFirstToken(long ttftNanos) {
            meters.ttft.record(ttftNanos, TimeUnit.NANOSECONDS);
            release();
        }

        @Override
        public void onChunkGap(long gapNanos) {
            if (meters.chunkGap != null) {
                meters.chunkGap.record(gapNanos, TimeUnit.NANOSECONDS);
            }
        }

        void release() {
            if (waiting) {
                waiting = false;
                waitingFirstToken.decrementAndGet();
            }
        }
    }
}
