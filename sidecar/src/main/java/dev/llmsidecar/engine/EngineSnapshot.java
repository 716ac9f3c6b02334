package dev.llmsidecar.engine;

import dev.llmsidecar.metrics.CumulativeHistogram;
import java.util.Map;
import java.util.Objects;

/**
 * The engine's own view of its load, normalised across engines. Every value is {@link Double#NaN} when the
 * engine does not expose it (or, for the prefix hit ratio, when it cannot be computed yet).
 *
 * @param kind                 the detected engine
 * @param requestsWaiting      requests queued in the engine, summed over all its label sets
 * @param requestsRunning      requests in the engine's running batch, summed over all its label sets
 * @param kvCacheUsageRatio    KV-cache usage 0..1, averaged over label sets (e.g. data-parallel engines)
 * @param prefixCacheHitRatio  prefix-cache hit ratio 0..1 (vLLM: over the last scrape interval)
 * @param prefixCacheHits      raw cumulative prefix-cache hit counter (tokens: vLLM, llama.cpp), summed; NaN if absent
 * @param prefixCacheQueries   raw cumulative prefix-cache query counter (prompt tokens), summed; NaN if absent
 * @param preemptions          cumulative requests preempted by the engine (vLLM num_preemptions, SGLang
 *     retractions), summed; NaN if the engine does not report it
 * @param counters             the engine's other cumulative counts (prompt tokens, speculative decoding)
 * @param phases               the engine's per-request phase histograms, merged over its label sets; only the
 *     phases the engine reports
 */
public record EngineSnapshot(EngineKind kind, double requestsWaiting, double requestsRunning,
        double kvCacheUsageRatio, double prefixCacheHitRatio, double prefixCacheHits, double prefixCacheQueries,
        double preemptions, EngineCounters counters, Map<EnginePhase, CumulativeHistogram> phases) {

    private static final EngineSnapshot UNKNOWN = new EngineSnapshot(EngineKind.UNKNOWN, Double.NaN, Double.NaN,
            Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);

    public EngineSnapshot {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(counters, "counters");
        phases = Map.copyOf(phases);
    }

    /** Without counters or phases. */
    public EngineSnapshot(EngineKind kind, double requestsWaiting, double requestsRunning, double kvCacheUsageRatio,
            double prefixCacheHitRatio, double prefixCacheHits, double prefixCacheQueries, double preemptions) {
        this(kind, requestsWaiting, requestsRunning, kvCacheUsageRatio, prefixCacheHitRatio, prefixCacheHits,
                prefixCacheQueries, preemptions, EngineCounters.none(), Map.of());
    }

    /** Without a preemption count, counters or phases. */
    public EngineSnapshot(EngineKind kind, double requestsWaiting, double requestsRunning, double kvCacheUsageRatio,
            double prefixCacheHitRatio, double prefixCacheHits, double prefixCacheQueries) {
        this(kind, requestsWaiting, requestsRunning, kvCacheUsageRatio, prefixCacheHitRatio, prefixCacheHits,
                prefixCacheQueries, Double.NaN);
    }

    /** The phase histogram, or null when the engine does not report that phase. */
    public CumulativeHistogram phase(EnginePhase phase) {
        return phases.get(phase);
    }

    /** Nothing known: what the sidecar reports while the engine is down or unrecognised. */
    public static EngineSnapshot unknown() {
        return UNKNOWN;
    }
}
