package dev.llmsidecar.window;

import java.util.Arrays;
import org.HdrHistogram.AbstractHistogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * The non-empty buckets of one time slice, as parallel arrays. A full histogram over 1 µs .. 1 h at 2 digits is
 * about 25 KB; a slice of real latencies fills a few hundred buckets, so a ring of dozens of slices per series
 * stays small and merging it touches only filled buckets.
 */
final class SliceCounts {

    static final SliceCounts EMPTY = new SliceCounts(new long[0], new long[0]);

    /** A value inside each bucket: re-recording it lands in the same bucket of an identically shaped histogram. */
    private final long[] values;
    private final long[] counts;

    private SliceCounts(long[] values, long[] counts) {
        this.values = values;
        this.counts = counts;
    }

    /** Copies the filled buckets of a histogram that no thread is writing to any more. */
    static SliceCounts of(AbstractHistogram histogram) {
        if (histogram.getTotalCount() == 0) {
            return EMPTY;
        }
        int buckets = 0;
        long[] values = new long[64];
        long[] counts = new long[64];
        for (HistogramIterationValue bucket : histogram.recordedValues()) {
            if (buckets == values.length) {
                values = Arrays.copyOf(values, buckets * 2);
                counts = Arrays.copyOf(counts, buckets * 2);
            }
            values[buckets] = bucket.getValueIteratedTo();
            counts[buckets] = bucket.getCountAtValueIteratedTo();
            buckets++;
        }
        return new SliceCounts(Arrays.copyOf(values, buckets), Arrays.copyOf(counts, buckets));
    }

    void addTo(AbstractHistogram target) {
        for (int i = 0; i < values.length; i++) {
            target.recordValueWithCount(values[i], counts[i]);
        }
    }
}
