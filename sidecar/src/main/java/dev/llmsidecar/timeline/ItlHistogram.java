package dev.llmsidecar.timeline;

import java.util.Arrays;

/**
 * The inter-token latency samples of one open stream, in memory that does not grow with the stream: a sparse log
 * histogram on the shared {@link ItlGrid} (sorted bucket keys and their counts) plus the exact sum. It holds one entry
 * per occupied bucket, at most {@value #MAX_BUCKETS} (528 bytes with the arrays' headers): a new bucket past that
 * reduces the stream to the next coarser schema first (two neighbouring native buckets become one), which keeps the
 * classic buckets exact at any schema and the exported native ones down to schema 5. Schema 6 (1.1 % wide) holds a
 * stream whose gaps spread over a factor of 2, schema 5 (2.2 %) over 4, schema 4 (4.4 %) over 16. At the coarsest
 * schema (one bucket per power of two) a stream may occupy more, at most one bucket per power of two and classic
 * bucket of the grid ({@link ItlGrid#coarsestBuckets}): a number the configuration sets, not the stream. Confined to
 * the request's event loop.
 */
final class ItlHistogram {

    /**
     * Occupied buckets kept before the schema is reduced. A held stream's whole live heap is about 6 KB (two channels,
     * the exchange, the decoder): its ITL must not add more than a small part of that, whatever the stream's length
     * (issue 41: streams after 1 and after 100 000 events hold the same within 1 KB).
     */
    static final int MAX_BUCKETS = 64;
    private static final long MAX_SAMPLES = 1L << 30;
    private static final double NANOS = 1e9;
    private static final long LARGEST_NANOS = (long) (ItlGrid.LARGEST_SECONDS * NANOS);

    private final ItlGrid grid;
    private int schema = ItlGrid.MAX_SCHEMA;
    private int[] keys = new int[8];
    private int[] counts = new int[8];
    private int size;
    private long sumNanos;
    private long samples;

    ItlHistogram(ItlGrid grid) {
        this.grid = grid;
    }

    /** Adds {@code count} samples of {@code sampleNanos} each (count at least 1; past 2^30 samples in all, none). */
    void add(long sampleNanos, int count) {
        if (samples + count > MAX_SAMPLES) {
            return; // 2^18 chunks of 4096 tokens: a count that is wrong; the int counts must not wrap
        }
        long v = Math.max(0, Math.min(sampleNanos, LARGEST_NANOS));
        sumNanos += v * count;
        samples += count;
        double seconds = v / NANOS;
        int key = grid.key(seconds, schema);
        int at = Arrays.binarySearch(keys, 0, size, key);
        while (at < 0 && size >= MAX_BUCKETS && schema > ItlGrid.MIN_SCHEMA) {
            reduce(); // full, and the sample needs a bucket of its own: coarser until it fits or shares one
            key = grid.key(seconds, schema);
            at = Arrays.binarySearch(keys, 0, size, key);
        }
        if (at >= 0) {
            counts[at] += count;
            return;
        }
        at = -at - 1;
        if (size == keys.length) {
            // up to the budget by doubling; past it (the coarsest schema only) by what the grid can still hold there
            int capacity = size < MAX_BUCKETS ? Math.min(size * 2, MAX_BUCKETS)
                    : Math.max(size + 1, Math.min(size + 8, grid.coarsestBuckets()));
            keys = Arrays.copyOf(keys, capacity);
            counts = Arrays.copyOf(counts, capacity);
        }
        System.arraycopy(keys, at, keys, at + 1, size - at);
        System.arraycopy(counts, at, counts, at + 1, size - at);
        keys[at] = key;
        counts[at] = count;
        size++;
    }

    /** One schema coarser: keys stay sorted (the native index and the classic slot both grow with the value). */
    private void reduce() {
        schema--;
        int out = 0;
        for (int i = 0; i < size; i++) {
            int key = grid.coarser(keys[i]);
            if (out > 0 && keys[out - 1] == key) {
                counts[out - 1] += counts[i];
            } else {
                keys[out] = key;
                counts[out] = counts[i];
                out++;
            }
        }
        size = out;
    }

    long samples() {
        return samples;
    }

    int schema() {
        return schema;
    }

    int buckets() {
        return size;
    }

    /**
     * The samples as (value, count) pairs, one per occupied bucket, each value inside its bucket and all of them
     * summing to the exact sum: {@code lower + t * (upper - lower)} with one t for every bucket (the exact sum lies
     * between the sums of the lower and of the upper bounds, so such a t exists). The zero bucket's value is 0.
     */
    ItlSamples samples(int gaps) {
        if (size == 0) {
            return ItlSamples.NONE;
        }
        double[] lower = new double[size];
        double[] upper = new double[size];
        double lowerSum = 0;
        double widthSum = 0;
        for (int i = 0; i < size; i++) {
            if (grid.isZero(keys[i])) {
                continue; // the zero bucket: samples of exactly 0
            }
            lower[i] = grid.lower(keys[i], schema);
            upper[i] = grid.upper(keys[i], schema);
            lowerSum += counts[i] * lower[i];
            widthSum += counts[i] * (upper[i] - lower[i]);
        }
        double t = widthSum > 0 ? (sumNanos / NANOS - lowerSum) / widthSum : 1;
        t = Math.max(0, Math.min(1, t));
        double[] values = new double[size];
        long[] n = new long[size];
        for (int i = 0; i < size; i++) {
            n[i] = counts[i];
            if (grid.isZero(keys[i])) {
                continue;
            }
            double v = lower[i] + t * (upper[i] - lower[i]);
            values[i] = v <= lower[i] ? Math.nextUp(lower[i]) : Math.min(v, upper[i]);
        }
        return new ItlSamples(values, n, samples, gaps);
    }
}
