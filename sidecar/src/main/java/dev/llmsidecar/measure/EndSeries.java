package dev.llmsidecar.measure;

import static dev.llmsidecar.metrics.Contract.ABANDONED_TOKENS;
import static dev.llmsidecar.metrics.Contract.ENGINE_VALUES_CLAMPED;
import static dev.llmsidecar.metrics.Contract.FINISH_REASONS;
import static dev.llmsidecar.metrics.Contract.REQUEST_DURATION;
import static dev.llmsidecar.metrics.Contract.STREAM_LONGEST_GAP;
import static dev.llmsidecar.metrics.Contract.TOKENS;
import static dev.llmsidecar.metrics.Contract.TOKEN_SOURCE;
import static dev.llmsidecar.metrics.Contract.TOKEN_USAGE;
import static dev.llmsidecar.metrics.Contract.TTFT;
import static dev.llmsidecar.metrics.Contract.TTFT_BY_CACHE;
import static dev.llmsidecar.metrics.Contract.UNDECODABLE;
import static dev.llmsidecar.metrics.Label.CACHE;
import static dev.llmsidecar.metrics.Label.FIELD;
import static dev.llmsidecar.metrics.Label.FINISH_REASON;
import static dev.llmsidecar.metrics.Label.SOURCE;
import static dev.llmsidecar.metrics.Label.TOKEN_TYPE;

import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.Series;
import dev.llmsidecar.timeline.ClampedValue;
import dev.llmsidecar.timeline.EndReason;
import dev.llmsidecar.timeline.ItlGrid;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.StallThresholds;
import dev.llmsidecar.timeline.TokenCountSource;
import dev.llmsidecar.wire.ServerTimings;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The series recorded once, when an LLM request ended: its count by outcome and end reason, its latencies, tokens and
 * engine-reported times, through the metrics contract into every backend that takes each series. Each series is
 * declared once below and recorded once in {@link #record}. docs/metrics.md defines every series.
 */
public final class EndSeries {

    private static final double NS = 1e9;

    private static final Declared REQUESTS = Declared.of(Contract.REQUESTS);
    private static final Declared DURATION = Declared.of(REQUEST_DURATION);
    private static final Declared TTFT_AT_END = Declared.of(TTFT);
    private static final Declared TTFT_CACHE_HIT = Declared.of(TTFT_BY_CACHE, CACHE, "hit");
    private static final Declared TTFT_CACHE_MISS = Declared.of(TTFT_BY_CACHE, CACHE, "miss");
    private static final Declared TTFT_CACHE_UNKNOWN = Declared.of(TTFT_BY_CACHE, CACHE, "unknown");
    private static final Declared UPSTREAM_HEADERS = Declared.of(Contract.UPSTREAM_HEADERS);
    private static final Declared TPOT = Declared.of(Contract.TPOT);
    private static final Declared ITL = Declared.of(Contract.ITL);
    private static final Declared ENGINE_QUEUE = Declared.of(Contract.ENGINE_QUEUE);
    private static final Declared ENGINE_TTFT = Declared.of(Contract.ENGINE_TTFT);
    private static final Declared TTFT_OUTSIDE_ENGINE = Declared.of(Contract.TTFT_OUTSIDE_ENGINE);
    private static final Declared ENGINE_DECODE = Declared.of(Contract.ENGINE_DECODE);
    private static final Declared DURATION_OUTSIDE_ENGINE = Declared.of(Contract.DURATION_OUTSIDE_ENGINE);
    private static final Declared USAGE_INPUT = Declared.of(TOKEN_USAGE, TOKEN_TYPE, "input");
    private static final Declared USAGE_OUTPUT = Declared.of(TOKEN_USAGE, TOKEN_TYPE, "output");
    private static final Declared TOKENS_INPUT = Declared.of(TOKENS, TOKEN_TYPE, "input");
    private static final Declared TOKENS_OUTPUT = Declared.of(TOKENS, TOKEN_TYPE, "output");
    private static final Declared TOKENS_CACHED_INPUT = Declared.of(TOKENS, TOKEN_TYPE, "cached_input");
    private static final Declared TOKENS_CACHE_REPORTING_INPUT =
            Declared.of(TOKENS, TOKEN_TYPE, "cache_reporting_input");
    private static final Declared LONGEST_GAP = Declared.of(STREAM_LONGEST_GAP);
    private static final Declared ABANDONED = Declared.of(ABANDONED_TOKENS);
    private static final Declared[] OUTPUT_TOKEN_SOURCE = Arrays.stream(TokenCountSource.values())
            .map(source -> Declared.of(TOKEN_SOURCE, SOURCE, source.label())).toArray(Declared[]::new);

    private final Recorders recorders;
    private final Upstream upstream;
    private final StallThresholds stall;
    private final ItlGrid itlGrid;
    private final Map<EndKey, Ended> ended = new ConcurrentHashMap<>();

    /** @param stall when a stream that ended silent had stalled ({@code sidecar.stall.*}): its end reason */
    public EndSeries(Recorders recorders, Upstream upstream, StallThresholds stall) {
        this.recorders = recorders;
        this.upstream = upstream;
        this.stall = stall;
        // every stream's ITL buckets nest inside the exported ones (which hold the SLO thresholds)
        this.itlGrid = ItlGrid.of(recorders.bounds(Contract.ITL));
        // a dashboard shows 0 where nothing happened yet, not "No data"
        for (ClampedValue v : ClampedValue.values()) {
            recorders.touch(ENGINE_VALUES_CLAMPED, LabelValues.of(FIELD, v.label()));
        }
        for (TokenCountSource source : TokenCountSource.values()) {
            recorders.touch(TOKEN_SOURCE, LabelValues.of(SOURCE, source.label()));
        }
    }

    /** The bucket layout of every stream's ITL samples. */
    public ItlGrid itlGrid() {
        return itlGrid;
    }

    /** Records everything that is final only when the request ended. */
    public void record(RequestLabels labels, RequestResult r) {
        boolean ok = r.outcome() == Outcome.OK;
        boolean streaming = r.streaming();
        Ended end = ended(new EndKey(labels, streaming, r.outcome(), ok ? null : r.errorType(),
                EndReason.of(r, stall)));
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
            end.get(TTFT_AT_END).record(r.ttftNanos() / NS);
            Declared cache = r.cachedTokens() < 0 ? TTFT_CACHE_UNKNOWN
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

    /**
     * A request shed with 503 before it reached the engine (memory past its mark): counted in
     * llm_sidecar_requests_total{outcome="shed",end_reason="shed"}, as the model the engine serves (its body was not
     * read), and in no other series: no objective judges it.
     */
    public void shed(RequestLabels labels) {
        ended(new EndKey(labels, false, Outcome.SHED, "503", EndReason.SHED)).get(REQUESTS).record(1);
    }

    private Ended ended(EndKey key) {
        Ended end = ended.get(key);
        return end != null ? end : ended.computeIfAbsent(key, Ended::new);
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
    private static final class Declared {
        private static int slots;

        final int slot;
        final Series series;
        final Label fixed;
        final String value;

        private Declared(Series series, Label fixed, String value) {
            this.slot = slots++;
            this.series = series;
            this.fixed = fixed;
            this.value = value;
        }

        static Declared of(Series series) {
            return new Declared(series, null, null);
        }

        static Declared of(Series series, Label fixed, String value) {
            return new Declared(series, fixed, value);
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
        private final AtomicReferenceArray<Bound> slots = new AtomicReferenceArray<>(Declared.slots);

        Ended(EndKey key) {
            this.key = key;
            this.ok = key.outcome() == Outcome.OK;
        }

        Bound get(Declared d) {
            Bound b = slots.get(d.slot);
            if (b == null) {
                b = recorders.ended(d.series, ok, labels(d));
                slots.set(d.slot, b);
            }
            return b;
        }

        /** The series' labels: the request's own by name, the declaration's, and what the result says. */
        private LabelValues labels(Declared d) {
            return key.labels().of(d.series, label -> label == d.fixed ? d.value : switch (label) {
                case STREAMING -> key.streaming();
                case OUTCOME -> key.outcome().label();
                case ERROR_TYPE -> key.errorType();
                case END_REASON -> key.endReason().label();
                case SERVER_ADDRESS -> upstream.address();
                case SERVER_PORT -> upstream.portValue();
                default -> throw new IllegalStateException(d.series + ": a request has no " + label
                        + "; fix it in the declaration");
            });
        }
    }
}
