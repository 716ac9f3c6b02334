package dev.llmsidecar.window;

import org.HdrHistogram.AbstractHistogram;

/**
 * Latency summary of one time window. Latencies are in seconds; with {@code count == 0} every latency is NaN
 * (there is no meaningful zero latency, and NaN cannot be mistaken for a fast window).
 *
 * <p>Percentiles and max carry HdrHistogram's precision: the reported value is the top of the bucket holding the
 * true value, at most 1/128 (0.8 %) above it from about 65 µs up (2 significant digits) and at most 512 ns above
 * it below that (the unit HdrHistogram derives from the 1 µs lowest discernible value).
 */
public record WindowStats(long count, double mean, double p50, double p90, double p95, double p99, double p999,
        double max) {

    private static final double NANOS_PER_SECOND = 1e9;
    private static final WindowStats EMPTY =
            new WindowStats(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);

    public WindowStats {
        if (count < 0) {
            throw new IllegalArgumentException("count must not be negative: " + count);
        }
    }

    /** The stats of a window without samples. */
    public static WindowStats empty() {
        return EMPTY;
    }

    public boolean isEmpty() {
        return count == 0;
    }

    /** Summarises a histogram of nanosecond values. */
    static WindowStats of(AbstractHistogram nanos) {
        long count = nanos.getTotalCount();
        if (count == 0) {
            return EMPTY;
        }
        return new WindowStats(count,
                seconds(nanos.getMean()),
                seconds(nanos.getValueAtPercentile(50)),
                seconds(nanos.getValueAtPercentile(90)),
                seconds(nanos.getValueAtPercentile(95)),
                seconds(nanos.getValueAtPercentile(99)),
                seconds(nanos.getValueAtPercentile(99.9)),
                seconds(nanos.getMaxValue()));
    }

    private static double seconds(double nanos) {
        return nanos / NANOS_PER_SECOND;
    }
}
