package dev.llmsidecar.load;

import org.HdrHistogram.Histogram;

/**
 * Latency samples, and the one percentile rule of every client-side figure of the tools (the sweep's client columns,
 * the benchmark's report): an HdrHistogram of nanoseconds with 3 significant digits, so each value is kept within
 * 0.1 %; percentile p is the nearest rank — the smallest recorded value with at least p % of the samples at or below
 * it — reported at the top of its 0.1 % bucket (HdrHistogram's {@code getValueAtPercentile}, no interpolation between
 * samples). Memory does not grow with the samples. The mean is exact. Not thread-safe.
 */
public final class Latencies {

    /** Auto-resizing: any latency fits. */
    private final Histogram histogram = new Histogram(3);
    private double sum;

    /** One sample; a negative one (clocks of two processes a tick apart) counts as 0. */
    public void record(long nanos) {
        record(nanos, 1);
    }

    /** {@code count} samples of the same value (a weight). */
    public void record(long nanos, long count) {
        if (count <= 0) {
            return;
        }
        long v = Math.max(0, nanos);
        histogram.recordValueWithCount(v, count);
        sum += (double) v * count;
    }

    /** Adds every sample of {@code other}. */
    public void add(Latencies other) {
        histogram.add(other.histogram);
        sum += other.sum;
    }

    public long count() {
        return histogram.getTotalCount();
    }

    /** Percentile {@code p} (0-100) in nanoseconds; NaN when there is no sample. */
    public double percentile(double p) {
        return count() == 0 ? Double.NaN : histogram.getValueAtPercentile(p);
    }

    /** Mean in nanoseconds; NaN when there is no sample. */
    public double mean() {
        return count() == 0 ? Double.NaN : sum / count();
    }

    /** Largest sample in nanoseconds (to 0.1 %); NaN when there is none. */
    public double max() {
        return count() == 0 ? Double.NaN : histogram.getMaxValue();
    }
}
