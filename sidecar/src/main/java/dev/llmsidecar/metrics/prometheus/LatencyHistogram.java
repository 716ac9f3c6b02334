package dev.llmsidecar.metrics.prometheus;

import dev.llmsidecar.metrics.ExemplarSource;
import dev.llmsidecar.metrics.HistogramMode;
import dev.llmsidecar.timeline.ItlGrid;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.Exemplar;
import io.prometheus.metrics.model.snapshots.Exemplars;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.NativeHistogramBuckets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/**
 * One label set of a histogram of the contract, as Prometheus exposes it: classic buckets at the contract's bounds,
 * a native (base-2 exponential) histogram, or both ({@link HistogramMode}).
 *
 * <p>Native buckets are counted at schema {@value #SCHEMA} (bucket i holds (2^((i-1)/32), 2^(i/32)]: about 2.2 %
 * wide, so a quantile read from them is within about 1 % of the exact one), one page of 32 counters per power of two
 * from 2^{@value #MIN_EXP} s to 2^{@value #MAX_EXP} s, made on its first observation; at or below 2^{@value #MIN_EXP}
 * s (about 1 ns) an observation is in the zero bucket, above 2^21 s in the top bucket. Recording is a binary search,
 * two atomic increments and two adders, and allocates nothing once a page exists: it runs per token chunk. A
 * snapshot halves the resolution (schema 4, 3, ...) until at most {@code maxNativeBuckets} buckets are populated, so
 * what a scrape carries stays bounded however wide the latencies spread (Prometheus's own bucket limit does the same
 * on its side).
 *
 * <p>Exemplars: one per classic bucket (the bounds choose the slot also when only native buckets are exported),
 * taken from the current sampled span and replaced at most every {@value #EXEMPLAR_MIN_AGE_MILLIS} ms.
 */
public final class LatencyHistogram {

    /** The native resolution recorded: 2^5 buckets per power of two. */
    public static final int SCHEMA = 5;
    static final int MIN_EXP = ItlGrid.MIN_EXP;
    static final int MAX_EXP = ItlGrid.MAX_EXP;
    /** Observations at or below it are in the zero bucket (durations are never negative). */
    public static final double ZERO_THRESHOLD = Math.scalb(1.0, MIN_EXP);
    private static final int PER_OCTAVE = 1 << SCHEMA;
    private static final int LOWEST_SCHEMA = -4;
    private static final long EXEMPLAR_MIN_AGE_MILLIS = 100;
    private static final int SNAPSHOT_ATTEMPTS = 10_000;
    private final double[] bounds;
    private final AtomicLongArray classic; // null: not exported
    private final AtomicReferenceArray<AtomicLongArray> octaves; // null: not exported
    private final LongAdder zero = new LongAdder();
    private final DoubleAdder sum = new DoubleAdder();
    private final LongAdder count = new LongAdder();
    private final int maxNativeBuckets;
    private final ExemplarSource exemplarSource;
    // racy on purpose: an exemplar is immutable, and losing one of two racing updates loses nothing that matters
    private final Exemplar[] exemplars;
    private final long createdMillis = System.currentTimeMillis();

    /**
     * @param bounds the classic finite upper bounds, increasing (also the exemplar slots)
     * @param maxNativeBuckets at most this many native buckets per snapshot (at least 1)
     */
    public LatencyHistogram(List<Double> bounds, HistogramMode mode, int maxNativeBuckets,
            ExemplarSource exemplarSource) {
        this.bounds = bounds.stream().mapToDouble(Double::doubleValue).toArray();
        this.classic = mode.classic() ? new AtomicLongArray(this.bounds.length + 1) : null;
        this.octaves = mode.nativeBuckets() ? new AtomicReferenceArray<>(MAX_EXP - MIN_EXP + 1) : null;
        if (maxNativeBuckets < 1) {
            throw new IllegalArgumentException("sidecar.metrics.native-max-buckets must be at least 1: "
                    + maxNativeBuckets);
        }
        this.maxNativeBuckets = maxNativeBuckets;
        this.exemplarSource = exemplarSource;
        this.exemplars = exemplarSource == ExemplarSource.NONE ? null : new Exemplar[this.bounds.length + 1];
    }

    /** Records one observation (NaN is ignored). */
    public void observe(double value) {
        observe(value, 1);
    }

    /** Records {@code n} observations of {@code value} at once (NaN, or n below 1, is ignored). */
    public void observe(double value, long n) {
        if (Double.isNaN(value) || n < 1) {
            return;
        }
        int slot = Arrays.binarySearch(bounds, value);
        slot = slot >= 0 ? slot : -slot - 1; // le is inclusive; past the last bound: +Inf
        if (classic != null) {
            classic.addAndGet(slot, n);
        }
        if (octaves != null) {
            observeNative(value, n);
        }
        sum.add(n == 1 ? value : value * n);
        count.add(n); // last: a snapshot checks against it that it saw whole observations
        if (exemplars != null && exemplarSource.sampled()) {
            exemplar(slot, value);
        }
    }

    private void observeNative(double value, long n) {
        // the placement every stream's ITL buckets use too (they must nest inside these)
        int index = ItlGrid.nativeIndex(value, SCHEMA);
        if (index == 0) {
            zero.add(n);
            return;
        }
        int page = (index - 1) >> SCHEMA;
        int k = (index - 1) & (PER_OCTAVE - 1);
        AtomicLongArray counts = octaves.get(page);
        if (counts == null) {
            octaves.compareAndSet(page, null, new AtomicLongArray(PER_OCTAVE));
            counts = octaves.get(page);
        }
        counts.addAndGet(k, n);
    }

    private void exemplar(int slot, double value) {
        long now = System.currentTimeMillis();
        Exemplar previous = exemplars[slot];
        if (previous == null || now - previous.getTimestampMillis() >= EXEMPLAR_MIN_AGE_MILLIS) {
            Labels labels = exemplarSource.labels();
            if (!labels.isEmpty()) {
                exemplars[slot] = new Exemplar(value, labels, now);
            }
        }
    }

    /** The Prometheus bucket index of native slot {@code k} of page {@code page}, at {@link #SCHEMA}. */
    private static int nativeIndex(int page, int k) {
        return (page + MIN_EXP) * PER_OCTAVE + k + 1;
    }

    /**
     * A consistent picture: with both representations the classic and the native counts must be of the same
     * observations (the exposition refuses anything else), so an observation caught half-recorded is read again.
     */
    public HistogramDataPointSnapshot snapshot(Labels labels) {
        Exemplars ex = exemplars();
        for (int attempt = 0; ; attempt++) {
            long before = count.sum();
            long[] classicCounts = classic == null ? null : read(classic);
            Native nat = octaves == null ? null : readNative();
            double s = sum.sum();
            boolean consistent = classicCounts == null || nat == null
                    || (count.sum() == before && total(classicCounts) == before && nat.total == before);
            if (consistent) {
                return build(classicCounts, nat, s, labels, ex);
            }
            if (attempt >= SNAPSHOT_ATTEMPTS) {
                // never seen settled: the native buckets alone, rather than two pictures that disagree
                return build(null, nat, s, labels, ex);
            }
            Thread.onSpinWait();
        }
    }

    private HistogramDataPointSnapshot build(long[] classicCounts, Native nat, double s, Labels labels,
            Exemplars ex) {
        ClassicHistogramBuckets cb = classicCounts == null ? ClassicHistogramBuckets.EMPTY
                : ClassicHistogramBuckets.of(upperBounds(), classicCounts);
        if (nat == null) {
            return new HistogramDataPointSnapshot(cb, s, labels, ex, createdMillis);
        }
        nat.fit(maxNativeBuckets);
        return new HistogramDataPointSnapshot(cb, nat.schema, nat.zero, ZERO_THRESHOLD,
                NativeHistogramBuckets.of(nat.indexes, nat.counts), NativeHistogramBuckets.EMPTY, s, labels, ex,
                createdMillis);
    }

    private double[] upperBounds() {
        double[] upper = Arrays.copyOf(bounds, bounds.length + 1);
        upper[bounds.length] = Double.POSITIVE_INFINITY;
        return upper;
    }

    private Exemplars exemplars() {
        if (exemplars == null) {
            return Exemplars.EMPTY;
        }
        List<Exemplar> taken = new ArrayList<>();
        for (Exemplar e : exemplars) {
            if (e != null) {
                taken.add(e);
            }
        }
        return taken.isEmpty() ? Exemplars.EMPTY : Exemplars.of(taken);
    }

    private static long[] read(AtomicLongArray a) {
        long[] out = new long[a.length()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.get(i);
        }
        return out;
    }

    private static long total(long[] counts) {
        long t = 0;
        for (long c : counts) {
            t += c;
        }
        return t;
    }

    private Native readNative() {
        Native n = new Native();
        n.zero = zero.sum();
        int[] indexes = new int[PER_OCTAVE];
        long[] counts = new long[PER_OCTAVE];
        int size = 0;
        long total = n.zero;
        for (int page = 0; page < octaves.length(); page++) {
            AtomicLongArray page32 = octaves.get(page);
            if (page32 == null) {
                continue;
            }
            if (size + PER_OCTAVE > indexes.length) {
                indexes = Arrays.copyOf(indexes, indexes.length * 2);
                counts = Arrays.copyOf(counts, counts.length * 2);
            }
            for (int k = 0; k < PER_OCTAVE; k++) {
                long c = page32.get(k);
                if (c > 0) {
                    indexes[size] = nativeIndex(page, k);
                    counts[size++] = c;
                    total += c;
                }
            }
        }
        n.indexes = Arrays.copyOf(indexes, size);
        n.counts = Arrays.copyOf(counts, size);
        n.total = total;
        return n;
    }

    /** Populated native buckets in index order, at {@link #schema}. */
    private static final class Native {
        int schema = SCHEMA;
        int[] indexes;
        long[] counts;
        long zero;
        long total;

        /** Halves the resolution until at most {@code max} buckets are populated. */
        void fit(int max) {
            while (indexes.length > max && schema > LOWEST_SCHEMA) {
                int n = 0;
                for (int i = 0; i < indexes.length; i++) {
                    int merged = (indexes[i] + 1) >> 1; // bucket i of schema s lies in bucket ceil(i/2) of s-1
                    if (n > 0 && indexes[n - 1] == merged) {
                        counts[n - 1] += counts[i];
                    } else {
                        indexes[n] = merged;
                        counts[n] = counts[i];
                        n++;
                    }
                }
                indexes = Arrays.copyOf(indexes, n);
                counts = Arrays.copyOf(counts, n);
                schema--;
            }
        }
    }
}
