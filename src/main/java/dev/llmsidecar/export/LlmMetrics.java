package dev.llmsidecar.export;

import static dev.llmsidecar.export.contract.Contract.BODY_NOT_INSPECTED;
import static dev.llmsidecar.export.contract.Contract.CHUNK_GAP;
import static dev.llmsidecar.export.contract.Contract.CHUNK_WRITE_DELAY;
import static dev.llmsidecar.export.contract.Contract.DURATION_OUTSIDE_ENGINE;
import static dev.llmsidecar.export.contract.Contract.ENGINE_DECODE;
import static dev.llmsidecar.export.contract.Contract.ENGINE_QUEUE;
import static dev.llmsidecar.export.contract.Contract.ENGINE_TTFT;
import static dev.llmsidecar.export.contract.Contract.FINISH_REASONS;
import static dev.llmsidecar.export.contract.Contract.FIRST_ANSWER;
import static dev.llmsidecar.export.contract.Contract.FIRST_REASONING;
import static dev.llmsidecar.export.contract.Contract.HTTP_REQUESTS;
import static dev.llmsidecar.export.contract.Contract.IN_FLIGHT;
import static dev.llmsidecar.export.contract.Contract.IN_FLIGHT_MAX;
import static dev.llmsidecar.export.contract.Contract.ITL;
import static dev.llmsidecar.export.contract.Contract.REQUESTS;
import static dev.llmsidecar.export.contract.Contract.REQUEST_DURATION;
import static dev.llmsidecar.export.contract.Contract.TIME_TO_FIRST_CHUNK;
import static dev.llmsidecar.export.contract.Contract.TIME_TO_FIRST_RESPONSE_CHUNK;
import static dev.llmsidecar.export.contract.Contract.TOKENS;
import static dev.llmsidecar.export.contract.Contract.TOKEN_SOURCE;
import static dev.llmsidecar.export.contract.Contract.TOKEN_USAGE;
import static dev.llmsidecar.export.contract.Contract.TPOT;
import static dev.llmsidecar.export.contract.Contract.TTFT;
import static dev.llmsidecar.export.contract.Contract.TTFT_BY_CACHE;
import static dev.llmsidecar.export.contract.Contract.TTFT_OUTSIDE_ENGINE;
import static dev.llmsidecar.export.contract.Contract.UNDECODABLE;
import static dev.llmsidecar.export.contract.Contract.UPSTREAM_HEADERS;
import static dev.llmsidecar.export.contract.Contract.WAITING_DEPTH;
import static dev.llmsidecar.export.contract.Contract.WAITING_FIRST_TOKEN;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.export.contract.Recorder;
import dev.llmsidecar.export.contract.Recorder.Bound;
import dev.llmsidecar.export.contract.Recorders;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.timeline.TokenCountSource;
import dev.llmsidecar.wire.ServerTimings;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the sidecar measures about LLM requests, recorded through the metrics contract
 * ({@link dev.llmsidecar.export.contract.Contract}) into every backend that takes each series: as it happens while
 * the request runs (first token, chunk gaps), and once when it ended. docs/metrics.md defines every series.
 */
public final class LlmMetrics {

    private static final double NS = 1e9;

    /** The request's identity in the GenAI series: the OTLP-only attributes are the same for a whole sidecar. */
    public record Upstream(String provider, String address, long port) {
        public static final Upstream NONE = new Upstream("openai", null, 0);

        Object portValue() {
            return address == null ? null : port;
        }
    }

    private final Recorders recorders;
    private final ModelLabels models;
    private final Upstream upstream;
    private final ProxyCounters proxy;

    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicInteger waitingFirstToken = new AtomicInteger();
    private final Bound waitingDepth;
    private final Bound chunkWriteDelay;
    private final Map<LiveKey, Live> live = new ConcurrentHashMap<>();

    public LlmMetrics(Recorders recorders, SidecarConfig.Metrics config, Upstream upstream) {
        this.recorders = recorders;
        this.upstream = upstream;
        this.models = new ModelLabels(config.maxModels(), config.pinnedModels().orElse(List.of()));
        this.proxy = new ProxyCounters(recorders);
        recorders.observe(IN_FLIGHT, inFlight::get);
        recorders.observe(WAITING_FIRST_TOKEN, waitingFirstToken::get);
        recorders.observe(IN_FLIGHT_MAX, maxInFlight::get);
        this.waitingDepth = recorders.live(WAITING_DEPTH);
        this.chunkWriteDelay = recorders.live(CHUNK_WRITE_DELAY);
        registerKnownCounters();
    }

    /**
     * Counters without a model label whose label values are all known are exported at 0 from the start, so a
     * dashboard shows 0 where nothing happened yet, not "No data".
     */
    private void registerKnownCounters() {
        for (String route : List.of("llm", "other")) {
            for (String statusClass : List.of("2xx", "3xx", "4xx", "5xx", "none")) {
                recorders.touch(HTTP_REQUESTS, route, statusClass);
            }
        }
        for (TokenCountSource source : TokenCountSource.values()) {
            recorders.touch(TOKEN_SOURCE, source.label());
        }
        recorders.touch(BODY_NOT_INSPECTED, "not_json");
        recorders.touch(BODY_NOT_INSPECTED, "too_large");
    }

    /** The model label for a request model name (bounded; see {@link ModelLabels}). */
    public String modelLabel(String model) {
        return models.label(model);
    }

    /** Counters of what the proxy did to keep traffic flowing and bytes exact. */
    public ProxyCounters proxy() {
        return proxy;
    }

    /**
     * Starts the live part of an LLM request: in-flight and waiting gauges, first token and chunk gaps as they happen.
     *
     * @param provider the format's own gen_ai.provider.name, or null for the configured one
     */
    public RequestTimeline.LiveListener requestStarted(String model, String operation, String provider,
            boolean streaming) {
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        waitingFirstToken.incrementAndGet();
        Live meters = live.computeIfAbsent(new LiveKey(model, operation, provider(provider), streaming), this::newLive);
        return new LiveRequest(meters, streaming);
    }

    private String provider(String override) {
        return override != null ? override : upstream.provider();
    }

    /** Handles bound once per model, operation and kind of request: a chunk costs one call per backend. */
    private static final class Live {
        Bound ttft;
        Bound firstChunk;
        Bound firstResponseChunk;
        Bound chunkGap;
        Bound firstReasoning;
        Bound firstAnswer;
    }

    private record LiveKey(String model, String operation, String provider, boolean streaming) {
    }

    private Live newLive(LiveKey k) {
        Object[] v = genai(k.model(), k.operation(), k.provider(), k.streaming());
        Live l = new Live();
        l.ttft = recorders.live(TTFT, v);
        // the others exist for streams only: a response that does not stream has no chunks of its own
        boolean s = k.streaming();
        l.firstChunk = s ? recorders.live(TIME_TO_FIRST_CHUNK, v) : Recorder.NOTHING;
        l.firstResponseChunk = s ? recorders.live(TIME_TO_FIRST_RESPONSE_CHUNK, v) : Recorder.NOTHING;
        l.chunkGap = s ? recorders.live(CHUNK_GAP, v) : Recorder.NOTHING;
        l.firstReasoning = s ? recorders.live(FIRST_REASONING, v) : Recorder.NOTHING;
        l.firstAnswer = s ? recorders.live(FIRST_ANSWER, v) : Recorder.NOTHING;
        return l;
    }

    /** Label values of a GenAI series with model, operation, streaming (then the OTLP-only attributes). */
    private Object[] genai(String model, String operation, String provider, boolean streaming) {
        return new Object[] {model, operation, streaming, provider, upstream.address(), upstream.portValue()};
    }

    /**
     * Records everything that is final only when the request ended.
     *
     * @param provider the format's own gen_ai.provider.name, or null for the configured one
     * @param format the wire format's name, for the per-format undecodable counter
     */
    public void requestFinished(String model, String operation, String provider, String format, RequestResult r) {
        inFlight.decrementAndGet();
        String p = provider(provider);
        String addr = upstream.address();
        Object port = upstream.portValue();
        boolean ok = r.outcome() == Outcome.OK;
        boolean streaming = r.streaming();
        String outcome = r.outcome().label();
        Object[] base = genai(model, operation, p, streaming);
        Object[] withOutcome = {model, operation, streaming, outcome, p, addr, port};
        recorders.end(REQUESTS, ok, 1, model, operation, streaming, outcome);
        recorders.end(REQUEST_DURATION, ok, r.e2eNanos() / NS, model, operation, streaming, outcome,
                ok ? null : errorType(r), p, addr, port);
        if (r.ttftNanos() >= 0) {
            if (!streaming) {
                // a response that does not stream: its first token is the whole response, "as it happens" at its end
                live.computeIfAbsent(new LiveKey(model, operation, p, false), this::newLive).ttft
                        .record(r.ttftNanos() / NS);
            }
            recorders.end(TTFT, ok, r.ttftNanos() / NS, base);
            String cache = r.cachedTokens() < 0 ? "unknown" : r.cachedTokens() > 0 ? "hit" : "miss";
            recorders.end(TTFT_BY_CACHE, ok, r.ttftNanos() / NS, model, operation, streaming, cache, p, addr, port);
        }
        if (r.upstreamHeadersNanos() >= 0) {
            recorders.end(UPSTREAM_HEADERS, ok, r.upstreamHeadersNanos() / NS, base);
        }
        if (r.tpotNanos() >= 0) {
            recorders.end(TPOT, ok, r.tpotNanos() / NS, withOutcome);
        }
        if (streaming && r.itl().sampleCount() > 0) {
            Bound itl = recorders.ended(ITL, ok, withOutcome);
            r.itl().forEach((sample, count) -> {
                for (int i = 0; i < count; i++) {
                    itl.record(sample / NS);
                }
            });
        }
        engineSide(model, operation, p, ok, r);
        tokens(model, operation, p, ok, r);
        recorders.end(TOKEN_SOURCE, ok, 1, r.outputTokenSource().label());
        recorders.end(FINISH_REASONS, ok, 1, model, FinishReasons.label(r.finishReason()));
        if (r.undecodableChunks() > 0) {
            recorders.end(UNDECODABLE, ok, r.undecodableChunks(), operation, format);
        }
    }

    /** What the engine said it spent, and what was spent outside it. */
    private void engineSide(String model, String operation, String p, boolean ok, RequestResult r) {
        ServerTimings engine = r.serverTimings();
        if (engine == null) {
            return;
        }
        Object[] v = {model, operation, p, upstream.address(), upstream.portValue()};
        if (engine.queueNanos() >= 0) {
            recorders.end(ENGINE_QUEUE, ok, engine.queueNanos() / NS, v);
        }
        long engineTtft = engine.engineTtftNanos();
        if (engineTtft >= 0) {
            recorders.end(ENGINE_TTFT, ok, engineTtft / NS, v);
            if (r.streaming() && r.ttftNanos() >= 0) {
                recorders.end(TTFT_OUTSIDE_ENGINE, ok, Math.max(0, r.ttftNanos() - engineTtft) / NS, v);
            }
        }
        if (engine.decodeNanos() >= 0) {
            recorders.end(ENGINE_DECODE, ok, engine.decodeNanos() / NS, v);
        }
        long engineTotal = engine.engineTotalNanos();
        if (!r.streaming() && engineTotal >= 0) {
            // a response that does not stream has no first token of its own: compare the whole request
            recorders.end(DURATION_OUTSIDE_ENGINE, ok, Math.max(0, r.e2eNanos() - engineTotal) / NS, v);
        }
    }

    private void tokens(String model, String operation, String p, boolean ok, RequestResult r) {
        String addr = upstream.address();
        Object port = upstream.portValue();
        if (r.promptTokens() >= 0) {
            recorders.end(TOKEN_USAGE, ok, r.promptTokens(), model, operation, "input", p, addr, port);
            recorders.end(TOKENS, ok, r.promptTokens(), model, operation, "input");
            if (r.cachedTokens() >= 0) {
                // the hit ratio's numerator and denominator, from the same requests: those that said how many of
                // their input tokens were cached
                recorders.end(TOKENS, ok, r.cachedTokens(), model, operation, "cached_input");
                recorders.end(TOKENS, ok, r.promptTokens(), model, operation, "cache_reporting_input");
            }
        }
        if (r.outputTokenSource() != TokenCountSource.NONE) {
            recorders.end(TOKEN_USAGE, ok, r.outputTokens(), model, operation, "output", p, addr, port);
            recorders.end(TOKENS, ok, r.outputTokens(), model, operation, "output");
        }
    }

    /**
     * OTel {@code error.type} of a failed request: the HTTP error status the client got (the engine's, or the
     * sidecar's own 502/504), else the outcome (an error inside a 200 stream, a broken stream, a cancel).
     */
    public static String errorType(RequestResult r) {
        return r.outcome() == Outcome.UPSTREAM_ERROR && r.status() >= 400 ? Integer.toString(r.status())
                : r.outcome().label();
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

    /** Arrival-to-written delay of one forwarded read. */
    public void chunkWritten(long delayNanos) {
        chunkWriteDelay.record(delayNanos / NS);
    }

    /** Every proxied request, LLM or not, by route kind and status class (e.g. "2xx", or "none" without response). */
    public void httpRequest(String route, String statusClass) {
        recorders.count(HTTP_REQUESTS, 1, route, statusClass);
    }

    public void bodyNotInspected(String reason) {
        recorders.count(BODY_NOT_INSPECTED, 1, reason);
    }

    /** Per-request live recorder; decrements the waiting gauge exactly once. */
    private final class LiveRequest implements RequestTimeline.LiveListener {
        private final Live meters;
        private final boolean streaming;
        private boolean waiting = true;

        LiveRequest(Live meters, boolean streaming) {
            this.meters = meters;
            this.streaming = streaming;
        }

        @Override
        public void onFirstChunk(long ttfcNanos) {
            if (streaming) {
                meters.firstResponseChunk.record(ttfcNanos / NS);
            }
        }

        @Override
        public void onFirstToken(long ttftNanos) {
            if (streaming) {
                meters.ttft.record(ttftNanos / NS);
                meters.firstChunk.record(ttftNanos / NS);
            }
            release();
        }

        @Override
        public void onFirstReasoningToken(long nanos) {
            if (streaming) {
                meters.firstReasoning.record(nanos / NS);
            }
        }

        @Override
        public void onFirstAnswerToken(long nanos) {
            if (streaming) {
                meters.firstAnswer.record(nanos / NS);
            }
        }

        @Override
        public void onChunkGap(long gapNanos) {
            if (streaming) {
                meters.chunkGap.record(gapNanos / NS);
            }
        }

        @Override
        public void onEnd() {
            release();
        }

        void release() {
            if (waiting) {
                waiting = false;
                waitingFirstToken.decrementAndGet();
            }
        }
    }
}
