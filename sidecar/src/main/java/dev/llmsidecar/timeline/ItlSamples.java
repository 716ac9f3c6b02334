package dev.llmsidecar.timeline;

import java.util.Arrays;

/**
 * Inter-token latency of one request, token-weighted as SGLang does: a chunk that carries k tokens after a gap g
 * contributes k samples of g/k. The gaps are between successive token-bearing chunks; the first chunk's tokens belong
 * to TTFT. Held as (value, count) pairs, one per occupied bucket of the stream's {@link ItlHistogram}: each value lies
 * in the same classic and native bucket as the samples it stands for, and the values times their counts sum to the
 * samples' sum.
 */
public final class ItlSamples {

    /** Receives {@code count} samples of {@code seconds} each. */
    @FunctionalInterface
    public interface Consumer {
        void accept(double seconds, long count);
    }

    public static final ItlSamples NONE = new ItlSamples(new double[0], new long[0], 0, 0);

    private final double[] seconds;
    private final long[] counts;
    private final long total;
    private final int gaps;

    ItlSamples(double[] seconds, long[] counts, long total, int gaps) {
        this.seconds = seconds;
        this.counts = counts;
        this.total = total;
        this.gaps = gaps;
    }

    /** Number of chunk gaps (token-bearing chunks minus one). */
    public int gaps() {
        return gaps;
    }

    /** Total ITL samples (the sum of the per-gap token weights). */
    public long sampleCount() {
        return total;
    }

    /** Distinct (value, count) pairs. */
    public int values() {
        return seconds.length;
    }

    public void forEach(Consumer consumer) {
        for (int i = 0; i < seconds.length; i++) {
            consumer.accept(seconds[i], counts[i]);
        }
    }

    /**
     * Samples at or under {@code nanos}: exact when it is a bound of the grid (every SLO threshold is: it is a classic
     * bound), else to the bucket's width.
     */
    public long atOrUnder(long nanos) {
        double limit = nanos / 1e9;
        long n = 0;
        for (int i = 0; i < seconds.length; i++) {
            if (seconds[i] <= limit) {
                n += counts[i];
            }
        }
        return n;
    }

    /**
     * The token-weighted q-quantile (nearest rank), seconds, as the value standing for its bucket; NaN without samples.
     */
    public double quantileSeconds(double q) {
        if (total == 0) {
            return Double.NaN;
        }
        long rank = Math.max(1, (long) Math.ceil(q * total));
        long seen = 0;
        for (int i = 0; i < seconds.length; i++) { // in increasing order: the buckets' order
            seen += counts[i];
            if (seen >= rank) {
                return seconds[i];
            }
        }
        return seconds[seconds.length - 1];
    }

    /**
     * These samples as raw gaps re-weighted evenly: every gap carries {@code weight} tokens (a real number), so each
     * value becomes value / weight, and {@code samples} samples in all are shared over the values by their counts.
     */
    ItlSamples spread(double weight, long samples) {
        double[] values = new double[seconds.length];
        long[] n = new long[seconds.length];
        long before = 0;
        long assigned = 0;
        for (int i = 0; i < seconds.length; i++) {
            values[i] = seconds[i] / weight;
            before += counts[i];
            long upTo = Math.round((double) before * samples / total);
            n[i] = upTo - assigned;
            assigned = upTo;
        }
        return new ItlSamples(values, n, samples, gaps);
    }

    @Override
    public String toString() {
        return "ItlSamples" + Arrays.toString(seconds) + "x" + Arrays.toString(counts);
    }
}
