package dev.llmsidecar.timeline;

import java.time.Duration;

/**
 * How long a stream may stay silent before it counts as stalled, per phase ({@code sidecar.stall.*}): before the first
 * token (queueing and prefill are not stalls) and between tokens. Silence is measured from the request's arrival, or
 * from its last token-bearing chunk once it has one.
 */
public record StallThresholds(long firstTokenNanos, long generationNanos) {

    /** The documented defaults (docs/configuration.md, "Stalls"). */
    public static final StallThresholds DEFAULTS = of(Duration.ofSeconds(60), Duration.ofSeconds(10));

    public StallThresholds {
        if (firstTokenNanos <= 0 || generationNanos <= 0) {
            throw new IllegalArgumentException("sidecar.stall thresholds must be positive: first token "
                    + firstTokenNanos + " ns, generation " + generationNanos + " ns");
        }
    }

    public static StallThresholds of(Duration firstToken, Duration generation) {
        return new StallThresholds(firstToken.toNanos(), generation.toNanos());
    }

    public long of(StreamPhase phase) {
        return phase == StreamPhase.FIRST_TOKEN ? firstTokenNanos : generationNanos;
    }

    /** Silent longer than its phase allows (strictly: a silence of exactly the threshold is not yet a stall). */
    public boolean stalled(StreamPhase phase, long silenceNanos) {
        return silenceNanos > of(phase);
    }
}
