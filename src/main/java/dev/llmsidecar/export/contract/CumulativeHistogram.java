package dev.llmsidecar.export.contract;

import java.util.ArrayList;
import java.util.List;

/**
 * A histogram aggregated somewhere else (an engine's own), as it stands: cumulative counts at explicit upper bounds,
 * as Prometheus writes them, and the sum of the observations. Exported as it is, with its own bounds.
 *
 * @param bounds           the finite upper bounds, strictly increasing (the +Inf bucket is implicit)
 * @param cumulativeCounts observations ≤ each bound, then the total (the +Inf bucket): {@code bounds.size() + 1}
 *     non-decreasing counts
 * @param sum              the sum of the observations
 */
public record CumulativeHistogram(List<Double> bounds, List<Long> cumulativeCounts, double sum) {

    public CumulativeHistogram {
        bounds = List.copyOf(bounds);
        cumulativeCounts = List.copyOf(cumulativeCounts);
        if (cumulativeCounts.size() != bounds.size() + 1) {
            throw new IllegalArgumentException(bounds.size() + " bounds need " + (bounds.size() + 1) + " counts, got "
                    + cumulativeCounts.size());
        }
        for (int i = 0; i < bounds.size(); i++) {
            if (!Double.isFinite(bounds.get(i)) || (i > 0 && bounds.get(i) <= bounds.get(i - 1))) {
                throw new IllegalArgumentException("bounds must be finite and strictly increasing: " + bounds);
            }
        }
        long previous = 0;
        for (long c : cumulativeCounts) {
            if (c < previous) {
                throw new IllegalArgumentException("cumulative counts must be non-negative and non-decreasing: "
                        + cumulativeCounts);
            }
            previous = c;
        }
    }

    /** Number of observations (the +Inf bucket). */
    public long count() {
        return cumulativeCounts.get(cumulativeCounts.size() - 1);
    }

    /** Observations per bucket, not cumulative (OpenTelemetry's form): {@code bounds.size() + 1} counts. */
    public List<Long> bucketCounts() {
        List<Long> counts = new ArrayList<>(cumulativeCounts.size());
        long previous = 0;
        for (long c : cumulativeCounts) {
            counts.add(c - previous);
            previous = c;
        }
        return counts;
    }
}
