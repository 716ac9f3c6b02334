package dev.llmsidecar.measure;

import static dev.llmsidecar.metrics.Contract.CHUNK_GAP;
import static dev.llmsidecar.metrics.Contract.CHUNK_WRITE_DELAY;
import static dev.llmsidecar.metrics.Contract.FINISH_REASONS;
import static dev.llmsidecar.metrics.Contract.FIRST_ANSWER;
import static dev.llmsidecar.metrics.Contract.FIRST_REASONING;
import static dev.llmsidecar.metrics.Contract.HTTP_REQUESTS;
import static dev.llmsidecar.metrics.Contract.IN_FLIGHT;
import static dev.llmsidecar.metrics.Contract.IN_FLIGHT_MAX;
import static dev.llmsidecar.metrics.Contract.REQUEST_DURATION;
import static dev.llmsidecar.metrics.Contract.TIME_TO_FIRST_CONTENT_CHUNK;
import static dev.llmsidecar.metrics.Contract.TIME_TO_FIRST_RESPONSE_CHUNK;
import static dev.llmsidecar.metrics.Contract.TOKENS;
import static dev.llmsidecar.metrics.Contract.TOKEN_SOURCE;
import static dev.llmsidecar.metrics.Contract.TOKEN_USAGE;
import static dev.llmsidecar.metrics.Contract.TTFT;
import static dev.llmsidecar.metrics.Contract.TTFT_BY_CACHE;
import static dev.llmsidecar.metrics.Contract.ENGINE_VALUES_CLAMPED;
import static dev.llmsidecar.metrics.Contract.UNDECODABLE;
import static dev.llmsidecar.metrics.Contract.WAITING_DEPTH;
import static dev.llmsidecar.metrics.Contract.WAITING_FIRST_TOKEN;
import static dev.llmsidecar.metrics.Contract.ABANDONED_TOKENS;
import static dev.llmsidecar.metrics.Contract.CLIENT_PAUSED_STREAMS;
import static dev.llmsidecar.metrics.Contract.LONGEST_SILENCE;
import static dev.llmsidecar.metrics.Contract.STALLED_STREAMS;
import static dev.llmsidecar.metrics.Contract.STREAM_LONGEST_GAP;
import static dev.llmsidecar.metrics.Label.CACHE;
import static dev.llmsidecar.metrics.Label.END_REASON;
import static dev.llmsidecar.metrics.Label.ERROR_TYPE;
import static dev.llmsidecar.metrics.Label.FINISH_REASON;
import static dev.llmsidecar.metrics.Label.FIELD;
import static dev.llmsidecar.metrics.Label.FORMAT;
import static dev.llmsidecar.metrics.Label.MODEL;
import static dev.llmsidecar.metrics.Label.OPERATION;
import static dev.llmsidecar.metrics.Label.OUTCOME;
import static dev.llmsidecar.metrics.Label.PRIORITY;
import static dev.llmsidecar.metrics.Label.PROVIDER;
import static dev.llmsidecar.metrics.Label.ROUTE;
import static dev.llmsidecar.metrics.Label.SERVER_ADDRESS;
import static dev.llmsidecar.metrics.Label.SERVER_PORT;
import static dev.llmsidecar.metrics.Label.SOURCE;
import static dev.llmsidecar.metrics.Label.STATUS_CLASS;
import static dev.llmsidecar.metrics.Label.STREAMING;
import static dev.llmsidecar.metrics.Label.STREAM_PHASE;
import static dev.llmsidecar.metrics.Label.TENANT;
import static dev.llmsidecar.metrics.Label.TOKEN_TYPE;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorder;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.Series;
import dev.llmsidecar.timeline.ClampedValue;
import dev.llmsidecar.timeline.EndReason;
import dev.llmsidecar.timeline.ItlGrid;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.StallScan;
import dev.llmsidecar.timeline.StallThresholds;
import dev.llmsidecar.timeline.StallWatch;
import dev.llmsidecar.timeline.StreamPhase;
import dev.llmsidecar.timeline.TokenCountSource;
import dev.llmsidecar.wire.ServerTimings;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;

/**
 * What the sidecar measures about LLM requests, recorded through the metrics contract
 * ({@link dev.llmsidecar.metrics.Contract}) into every backend that takes each series: as it happens while
 * the request runs (first token, chunk gaps), and once when it ended. docs/metrics.md defines every series.
 */
public final class LlmMetrics {

    private static final double NS = 1e9;

    private final Recorders recorders;
    private final ItlGrid itlGrid;
    private final Upstream upstream;
    private final ProxyCounters proxy;

    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final DepthSampler waitingFirstToken;
    private volatile long lastEndNanos = System.nanoTime();
    private final Bound chunkWriteDelay;
    private final Map<LiveKey, Live> live = new ConcurrentHashMap<>();
    private final Map<EndKey, Ended> ended = new ConcurrentHashMap<>();
    /** Models whose stall gauges are registered (at their first stream). */
    private final Set<String> stallModels = ConcurrentHashMap.newKeySet();
    private final StallThresholds stall;
    private final StallWatch stalls;

    /** The bucket layout of every stream's ITL samples. */
    public ItlGrid itlGrid() {
        return itlGrid;
    }

    public LlmMetrics(Recorders recorders, Upstream upstream) {
        this(recorders, upstream, StallThresholds.DEFAULTS, System::nanoTime);
    }

    /**
     * @param stall when an open stream counts as stalled ({@code sidecar.stall.*})
     * @param stallClock the clock of the timelines' stamps ({@link System#nanoTime()} but in tests)
     */
    public LlmMetrics(Recorders recorders, Upstream upstream, StallThresholds stall, LongSupplier stallClock) {
        this.stall = stall;
        this.stalls = new StallWatch(stall, stallClock);
        this.recorders = recorders;
        this.upstream = upstream;
        // every stream's ITL buckets nest inside the exported ones (which hold the SLO thresholds)
        this.itlGrid = ItlGrid.of(recorders.bounds(dev.llmsidecar.metrics.Contract.ITL));
        this.proxy = new ProxyCounters(recorders);
        recorders.observe(IN_FLIGHT, inFlight::get);
        this.waitingFirstToken = new DepthSampler(recorders.live(WAITING_DEPTH, LabelValues.NONE), System::nanoTime);
        recorders.observe(WAITING_FIRST_TOKEN, waitingFirstToken::depth);
        recorders.observe(IN_FLIGHT_MAX, maxInFlight::get);
        this.chunkWriteDelay = recorders.live(CHUNK_WRITE_DELAY, LabelValues.NONE);
        registerKnownCounters();
    }

    /**
     * Counters without a model label whose label values are all known are exported at 0 from the start, so a
     * dashboard shows 0 where nothing happened yet, not "No data".
     */
    private void registerKnownCounters() {
        for (ClampedValue v : ClampedValue.values()) {
            recorders.touch(ENGINE_VALUES_CLAMPED, LabelValues.of(FIELD, v.label()));
        }
        for (String route : List.of("llm", "other")) {
            for (String statusClass : List.of("2xx", "3xx", "4xx", "5xx", "none")) {
                recorders.touch(HTTP_REQUESTS, LabelValues.of(ROUTE, route).and(STATUS_CLASS, statusClass));
            }
        }
        for (TokenCountSource source : TokenCountSource.values()) {
            recorders.touch(TOKEN_SOURCE, LabelValues.of(SOURCE, source.label()));
        }
    }

    /** Counters of what the proxy did to keep traffic flowing and bytes exact. */
    public ProxyCounters proxy() {
        return proxy;
    }

    /**
     * Starts the live part of an LLM request: in-flight and waiting gauges, first token and chunk gaps as they happen.
     * The labels' optional ones (tenant, priority) are dropped by the recorders where they are not exported.
     */
    public LiveRequest requestStarted(RequestLabels labels, boolean streaming) {
        int load = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(load, Math::max);
        waitingFirstToken.change(1);
        Live meters = live.computeIfAbsent(new LiveKey(labels, streaming), this::newLive);
        String model = labels.model();
        if (streaming && !stallModels.contains(model) && stallModels.add(model)) {
            registerStallGauges(model);
        }
        return new LiveRequest(meters, labels, streaming, load);
    }

    // ---- stalls: read when the metrics are read, by scanning the open streams' last signs of life ----

    private void registerStallGauges(String model) {
        for (StreamPhase phase : StreamPhase.values()) {
            LabelValues v = LabelValues.of(MODEL, model).and(STREAM_PHASE, phase.label());
            recorders.observe(STALLED_STREAMS, () -> scan().stalled(model, phase), v);
            recorders.observe(LONGEST_SILENCE, () -> scan().longestSilenceNanos(model, phase) / NS, v);
        }
        recorders.observe(CLIENT_PAUSED_STREAMS, () -> scan().pausedByClient(model), LabelValues.of(MODEL, model));
    }

    /** The open streams' silences now, or as of a scan taken less than 200 ms ago ({@link StallWatch#scan}). */
    public StallScan scan() {
        return stalls.scan();
    }

    /** Handles bound once per model, operation and kind of request: a chunk costs one call per backend. */
    private static final class Live {
        Bound ttft;
        Bound firstContentChunk;
        Bound firstResponseChunk;
        Bound chunkGap;
        Bound firstReasoning;
        Bound firstAnswer;
    }

    private record LiveKey(RequestLabels labels, boolean streaming) {
    }

    private Live newLive(LiveKey k) {
        Live l = new Live();
        l.ttft = live(TTFT, k);
        // the others exist for streams only: a response that does not stream has no chunks of its own
        boolean s = k.streaming();
        l.firstContentChunk = s ? live(TIME_TO_FIRST_CONTENT_CHUNK, k) : Recorder.NOTHING;
        l.firstResponseChunk = s ? live(TIME_TO_FIRST_RESPONSE_CHUNK, k) : Recorder.NOTHING;
        l.chunkGap = s ? live(CHUNK_GAP, k) : Recorder.NOTHING;
        l.firstReasoning = s ? live(FIRST_REASONING, k) : Recorder.NOTHING;
        l.firstAnswer = s ? live(FIRST_ANSWER, k) : Recorder.NOTHING;
        return l;
    }

    /** The series' labels: the request's own by name, and whether it streams and the upstream. */
    private Bound live(Series series, LiveKey k) {
        return recorders.live(series, k.labels().of(series, label -> switch (label) {
            case STREAMING -> k.streaming();
            case SERVER_ADDRESS -> upstream.address();
            case SERVER_PORT -> upstream.portValue();
            default -> throw new IllegalStateException(series + ": a running request has no " + label
                    + "; fix it in the declaration");
        }));
    }

    // ---- what is recorded when a request ended: each series declared once here, recorded once below ----

    private static final EndSeries REQUESTS = EndSeries.of(Contract.REQUESTS);
    private static final EndSeries DURATION = EndSeries.of(REQUEST_DURATION);
    private static final EndSeries TTFT_AT_END = EndSeries.of(TTFT);
    private static final EndSeries TTFT_CACHE_HIT = EndSeries.of(TTFT_BY_CACHE, CACHE, "hit");
    private static final EndSeries TTFT_CACHE_MISS = EndSeries.of(TTFT_BY_CACHE, CACHE, "miss");
    private static final EndSeries TTFT_CACHE_UNKNOWN = EndSeries.of(TTFT_BY_CACHE, CACHE, "unknown");
    private static final EndSeries UPSTREAM_HEADERS = EndSeries.of(Contract.UPSTREAM_HEADERS);
    private static final EndSeries TPOT = EndSeries.of(Contract.TPOT);
    private static final EndSeries ITL = EndSeries.of(Contract.ITL);
    private static final EndSeries ENGINE_QUEUE = EndSeries.of(Contract.ENGINE_QUEUE);
    private static final EndSeries ENGINE_TTFT = EndSeries.of(Contract.ENGINE_TTFT);
    private static final EndSeries TTFT_OUTSIDE_ENGINE = EndSeries.of(Contract.TTFT_OUTSIDE_ENGINE);
    private static final EndSeries ENGINE_DECODE = EndSeries.of(Contract.ENGINE_DECODE);
    private static final EndSeries DURATION_OUTSIDE_ENGINE = EndSeries.of(Contract.DURATION_OUTSIDE_ENGINE);
    private static final EndSeries USAGE_INPUT = EndSeries.of(TOKEN_USAGE, TOKEN_TYPE, "input");
    private static final EndSeries USAGE_OUTPUT = EndSeries.of(TOKEN_USAGE, TOKEN_TYPE, "output");
    private static final EndSeries TOKENS_INPUT = EndSeries.of(TOKENS, TOKEN_TYPE, "input");
    private static final EndSeries TOKENS_OUTPUT = EndSeries.of(TOKENS, TOKEN_TYPE, "output");
    private static final EndSeries TOKENS_CACHED_INPUT = EndSeries.of(TOKENS, TOKEN_TYPE, "cached_input");
    private static final EndSeries TOKENS_CACHE_REPORTING_INPUT =
            EndSeries.of(TOKENS, TOKEN_TYPE, "cache_reporting_input");
    private static final EndSeries LONGEST_GAP = EndSeries.of(STREAM_LONGEST_GAP);
    private static final EndSeries ABANDONED = EndSeries.of(ABANDONED_TOKENS);
    private static final EndSeries[] OUTPUT_TOKEN_SOURCE = Arrays.stream(TokenCountSource.values())
            .map(source -> EndSeries.of(TOKEN_SOURCE, SOURCE, source.label())).toArray(EndSeries[]::new);

    /** Records everything that is final only when the request ended. */
    public void requestFinished(RequestLabels labels, RequestResult r) {
        inFlight.decrementAndGet();
        lastEndNanos = System.nanoTime();
        boolean ok = r.outcome() == Outcome.OK;
        boolean streaming = r.streaming();
        EndReason reason = EndReason.of(r, stall);
        Ended end = ended.computeIfAbsent(new EndKey(labels, streaming, r.outcome(), ok ? null : r.errorType(),
                reason), Ended::new);
        end.get(REQUESTS).record(1);
        if (r.longestGapNanos() >= 0) {
            end.get(LONGEST_GAP).record(r.longestGapNanos() / NS);
        }
        if (r.outcome() == Outcome.CLIENT_CANCELLED && r.outputTokenSource() != TokenCountSource.NONE
                && r.outputTokens() > 0) {
            // what the client had been sent when it left: its token chunks (or their counts, continuous usage)
            end.get(ABANDONED).record(r.outputTokens());
        }
        end.get(DURATION).record(r.e2eNanos() / NS);
        if (r.ttftNanos() >= 0) {
            if (!streaming) {
                // a response that does not stream: its first token is the whole response, "as it happens" at its end
                live.computeIfAbsent(new LiveKey(labels, false), this::newLive).ttft.record(r.ttftNanos() / NS);
            }
            end.get(TTFT_AT_END).record(r.ttftNanos() / NS);
            EndSeries cache = r.cachedTokens() < 0 ? TTFT_CACHE_UNKNOWN
                    : r.cachedTokens() > 0 ? TTFT_CACHE_HIT : TTFT_CACHE_MISS;
            end.get(cache).record(r.ttftNanos() / NS);
        }
        if (r.upstreamHeadersNanos() >= 0) {
            end.get(UPSTREAM_HEADERS).record(r.upstreamHeadersNanos() / NS);
        }
        if (r.tpotNanos() >= 0) {
            end.get(TPOT).record(r.tpotNanos() / NS);
        }
        if (streaming && r.itl().sampleCount() > 0) {
            // one (value, count) pair per occupied bucket of the stream's ITL histogram: work bounded by its buckets
            r.itl().forEach(end.get(ITL)::record);
        }
        engineSide(end, r);
        tokens(end, r);
        end.get(OUTPUT_TOKEN_SOURCE[r.outputTokenSource().ordinal()]).record(1);
        recorders.end(FINISH_REASONS, ok, 1, labels.of(FINISH_REASONS)
                .and(FINISH_REASON, FinishReasons.label(r.finishReason())));
        for (ClampedValue v : r.clamped()) {
            recorders.count(ENGINE_VALUES_CLAMPED, 1, LabelValues.of(FIELD, v.label()));
        }
        if (r.undecodableChunks() > 0) {
            recorders.end(UNDECODABLE, ok, r.undecodableChunks(), labels.of(UNDECODABLE));
        }
    }

    /** What the engine said it spent, and what was spent outside it. */
    private static void engineSide(Ended end, RequestResult r) {
        ServerTimings engine = r.serverTimings();
        if (engine == null) {
            return;
        }
        if (engine.queueNanos() >= 0) {
            end.get(ENGINE_QUEUE).record(engine.queueNanos() / NS);
        }
        long engineTtft = engine.engineTtftNanos();
        if (engineTtft >= 0) {
            end.get(ENGINE_TTFT).record(engineTtft / NS);
            if (r.streaming() && r.ttftNanos() >= 0) {
                end.get(TTFT_OUTSIDE_ENGINE).record(Math.max(0, r.ttftNanos() - engineTtft) / NS);
            }
        }
        if (engine.decodeNanos() >= 0) {
            end.get(ENGINE_DECODE).record(engine.decodeNanos() / NS);
        }
        long engineTotal = engine.engineTotalNanos();
        if (!r.streaming() && engineTotal >= 0) {
            // a response that does not stream has no first token of its own: compare the whole request
            end.get(DURATION_OUTSIDE_ENGINE).record(Math.max(0, r.e2eNanos() - engineTotal) / NS);
        }
    }

    private static void tokens(Ended end, RequestResult r) {
        if (r.promptTokens() >= 0) {
            end.get(USAGE_INPUT).record(r.promptTokens());
            end.get(TOKENS_INPUT).record(r.promptTokens());
            if (r.cachedTokens() >= 0) {
                // the hit ratio's numerator and denominator, from the same requests: those that said how many of
                // their input tokens were cached
                end.get(TOKENS_CACHED_INPUT).record(r.cachedTokens());
                end.get(TOKENS_CACHE_REPORTING_INPUT).record(r.promptTokens());
            }
        }
        if (r.outputTokenSource() != TokenCountSource.NONE) {
            end.get(USAGE_OUTPUT).record(r.outputTokens());
            end.get(TOKENS_OUTPUT).record(r.outputTokens());
        }
    }

    /** What identifies the end-of-request series of one request, but for per-request values bound separately. */
    private record EndKey(RequestLabels labels, boolean streaming, Outcome outcome, String errorType,
            EndReason endReason) {
    }

    /**
     * An end-of-request series as this class records it: a series of the contract, with at most one label fixed by
     * the declaration (the cache, the token type, the count's source); every other label comes from the request's
     * {@link EndKey} by its name. Each declaration gets a slot of its own in {@link Ended}.
     */
    private static final class EndSeries {
        private static int slots;

        final int slot;
        final Series series;
        final Label fixed;
        final String value;

        private EndSeries(Series series, Label fixed, String value) {
            this.slot = slots++;
            this.series = series;
            this.fixed = fixed;
            this.value = value;
        }

        static EndSeries of(Series series) {
            return new EndSeries(series, null, null);
        }

        static EndSeries of(Series series, Label fixed, String value) {
            return new EndSeries(series, fixed, value);
        }
    }

    /**
     * The handles a finished request records into, bound on first use per {@link EndKey} (a series this kind of
     * request never recorded stays unexported, as when each was bound per request). A finished request then costs
     * one map lookup instead of about 25 label lookups per backend. Two event loops may bind the same slot at once;
     * both get the same meters, so either handle may stay.
     */
    private final class Ended {
        private final EndKey key;
        private final boolean ok;
        private final AtomicReferenceArray<Bound> slots = new AtomicReferenceArray<>(EndSeries.slots);

        Ended(EndKey key) {
            this.key = key;
            this.ok = key.outcome() == Outcome.OK;
        }

        Bound get(EndSeries s) {
            Bound b = slots.get(s.slot);
            if (b == null) {
                b = recorders.ended(s.series, ok, labels(s));
                slots.set(s.slot, b);
            }
            return b;
        }

        /** The series' labels: the request's own by name, the declaration's, and what the result says. */
        private LabelValues labels(EndSeries s) {
            return key.labels().of(s.series, label -> label == s.fixed ? s.value : switch (label) {
                case STREAMING -> key.streaming();
                case OUTCOME -> key.outcome().label();
                case ERROR_TYPE -> key.errorType();
                case END_REASON -> key.endReason().label();
                case SERVER_ADDRESS -> upstream.address();
                case SERVER_PORT -> upstream.portValue();
                default -> throw new IllegalStateException(s.series + ": a request has no " + label
                        + "; fix it in the declaration");
            });
        }
    }

    /**
     * Brings the waiting-depth histogram up to now (its fixed-period samples are recorded as the depth changes and
     * when read): before a scrape, and on the history tick, so that an exporter that reads on its own sees idle time.
     */
    public void sampleQueueDepth() {
        waitingFirstToken.catchUp();
    }

    /** LLM requests currently in flight. */
    public int inFlight() {
        return inFlight.get();
    }

    /** When the last LLM request ended (or the metrics were made): what the live windows last changed by. */
    public long lastEndNanos() {
        return lastEndNanos;
    }

    public int waitingFirstToken() {
        return waitingFirstToken.depth();
    }

    public int maxInFlight() {
        return maxInFlight.get();
    }

    /** Arrival-to-written delay of one forwarded read. */
    public void chunkWritten(long delayNanos) {
        chunkWriteDelay.record(delayNanos / NS);
    }

    /** Every proxied request, LLM or not, by route kind and status class (e.g. "2xx", or "none" without response). */
    /**
     * A request shed with 503 before it reached the engine (memory past its mark): counted in
     * llm_sidecar_requests_total{outcome="shed",end_reason="shed"}, as the model the engine serves (its body was not
     * read), and in no other series: no objective judges it.
     */
    public void requestShed(RequestLabels labels) {
        ended.computeIfAbsent(new EndKey(labels, false, Outcome.SHED, "503", EndReason.SHED), Ended::new)
                .get(REQUESTS).record(1);
    }

    public void httpRequest(String route, String statusClass) {
        recorders.count(HTTP_REQUESTS, 1, LabelValues.of(ROUTE, route).and(STATUS_CLASS, statusClass));
    }

    /**
     * Per-request live recorder; decrements the waiting gauge exactly once. A stream's stamps for the stall watch are
     * kept by {@link StallWatch.Stream}.
     */
    public final class LiveRequest extends StallWatch.Stream {
        private final Live meters;
        private final RequestLabels labels;
        private final boolean streaming;
        private final int loadAtArrival;
        private boolean waiting = true;

        LiveRequest(Live meters, RequestLabels labels, boolean streaming, int loadAtArrival) {
            super(streaming ? stalls : null, labels.model());
            this.meters = meters;
            this.labels = labels;
            this.streaming = streaming;
            this.loadAtArrival = loadAtArrival;
        }

        /** The labels the request was started with. */
        public RequestLabels labels() {
            return labels;
        }

        /** LLM requests in flight when this one started, itself included: its load band. */
        public int loadAtArrival() {
            return loadAtArrival;
        }

        @Override
        public void onFirstResponseChunk(long firstResponseChunkNanos) {
            if (streaming) {
                meters.firstResponseChunk.record(firstResponseChunkNanos / NS);
            }
        }

        @Override
        public void onFirstToken(long ttftNanos) {
            if (streaming) {
                meters.ttft.record(ttftNanos / NS);
                meters.firstContentChunk.record(ttftNanos / NS);
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
            super.onEnd();
        }

        void release() {
            if (waiting) {
                waiting = false;
                waitingFirstToken.change(-1);
            }
        }
    }
}
