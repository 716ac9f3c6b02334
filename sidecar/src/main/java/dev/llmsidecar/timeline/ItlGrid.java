package dev.llmsidecar.timeline;

import java.util.Arrays;
import java.util.List;

/**
 * The bucket layout of every stream's {@link ItlHistogram}: the boundaries of Prometheus native buckets at schema 6
 * (2^(1/64) apart, 1.09 % wide) intersected with the exported classic bounds (which hold every SLO threshold). A
 * per-stream bucket therefore lies inside one classic bucket and, from 2^-12 s (244 us) up, inside one native bucket of
 * the exported schema 5 (whose boundaries are every other schema-6 boundary), so a stream's samples can be replayed at
 * the end of the request as (value, count) pairs without moving a single sample across a classic bucket boundary, nor
 * across a native one above 244 us. Immutable, shared by all streams.
 *
 * <p>A bucket is identified by a key: {@code nativeIndex * (classic bounds + 1) + classicSlot}. Native index 0 is the
 * zero bucket (samples at or below {@link #ZERO_THRESHOLD}); index {@code 1 + page * 2^schema + k} is the k-th bucket
 * of the power of two {@code 2^(MIN_EXP + page)}, as the exported native histogram numbers them.
 */
public final class ItlGrid {

    /** The finest schema kept (buckets per power of two: 2^6). */
    public static final int MAX_SCHEMA = 6;
    /** The coarsest schema a stream is reduced to (one bucket per power of two). */
    static final int MIN_SCHEMA = 0;
    /** As the exported native histogram: powers of two from 2^-30 s to 2^20 s. */
    public static final int MIN_EXP = -30;
    public static final int MAX_EXP = 20;
    /** Samples at or below it are in the zero bucket (as the exported native histogram's zero bucket). */
    public static final double ZERO_THRESHOLD = Math.scalb(1.0, MIN_EXP);
    /**
     * Below 2^-12 s (244 us) one bucket per power of two: no engine generates a token that fast, such gaps are tokens
     * of one batch read apart, and at full resolution they would take a stream's memory (a few hundred buckets).
     */
    static final int FINE_EXP = -12;
    /** Larger samples are recorded as this (2^21 s, 24 days): the native histogram's last bucket ends here. */
    public static final double LARGEST_SECONDS = Math.scalb(1.0, MAX_EXP + 1);
    private static final int PER_OCTAVE = 1 << MAX_SCHEMA;
    /** 2^(k/64) for k = 1 .. 64: the upper bounds within one power of two at schema 6. */
    private static final double[] OCTAVE_BOUNDS = new double[PER_OCTAVE];

    static {
        for (int k = 1; k <= PER_OCTAVE; k++) {
            // k/64 as the exported histogram computes j/32 for k = 2j: the same double, so the same bound
            OCTAVE_BOUNDS[k - 1] = Math.pow(2, (double) k / PER_OCTAVE);
        }
        OCTAVE_BOUNDS[PER_OCTAVE - 1] = 2.0;
    }

    /** The grid with no classic bounds: native buckets only. */
    public static final ItlGrid NATIVE_ONLY = new ItlGrid(new double[0]);

    private final double[] classic;
    private final int slots;

    private ItlGrid(double[] classic) {
        this.classic = classic;
        this.slots = classic.length + 1;
    }

    /** A grid whose buckets nest inside these classic upper bounds (seconds, any order; the SLO thresholds in them). */
    public static ItlGrid of(List<Double> classicBounds) {
        double[] b = classicBounds.stream().mapToDouble(Double::doubleValue).filter(v -> v > 0 && Double.isFinite(v))
                .sorted().distinct().toArray();
        return new ItlGrid(b);
    }

    /**
     * The most buckets a stream can occupy at {@link #MIN_SCHEMA}: the zero bucket, one per power of two from
     * 2^{@value #MIN_EXP} to 2^{@value #MAX_EXP}, and one more for each classic bound that splits one.
     */
    int coarsestBuckets() {
        return 1 + (MAX_EXP - MIN_EXP + 1) + classic.length;
    }

    /** The key of a sample of {@code seconds} at {@code schema}. */
    int key(double seconds, int schema) {
        return index(seconds, schema, true) * slots + classicSlot(seconds);
    }

    /** The bucket of samples of 0 (a sample at or below {@link #ZERO_THRESHOLD} is 0 in nanoseconds). */
    boolean isZero(int key) {
        return key < slots;
    }

    /** The key {@code key} has at the next coarser schema (two neighbouring native buckets become one). */
    int coarser(int key) {
        int nat = key / slots;
        int slot = key % slots;
        return (nat == 0 ? 0 : ((nat - 1) >> 1) + 1) * slots + slot;
    }

    /** Lower bound (exclusive) of the bucket, seconds. */
    double lower(int key, int schema) {
        int nat = key / slots;
        int slot = key % slots;
        double nativeLower = nat == 0 ? 0 : nativeBound(nat - 1, schema, false);
        return slot == 0 ? nativeLower : Math.max(nativeLower, classic[slot - 1]);
    }

    /** Upper bound (inclusive) of the bucket, seconds. */
    double upper(int key, int schema) {
        int nat = key / slots;
        int slot = key % slots;
        double nativeUpper = nat == 0 ? ZERO_THRESHOLD : nativeBound(nat - 1, schema, true);
        return slot == classic.length ? nativeUpper : Math.min(nativeUpper, classic[slot]);
    }

    private static double nativeBound(int index, int schema, boolean upper) {
        int perOctave = 1 << schema;
        int exp = MIN_EXP + (index >> schema);
        int k = index & (perOctave - 1);
        int step = PER_OCTAVE >> schema;
        if (upper) {
            return Math.scalb(OCTAVE_BOUNDS[(k + 1) * step - 1], exp);
        }
        return k == 0 || exp < FINE_EXP ? Math.scalb(1.0, exp) : Math.scalb(OCTAVE_BOUNDS[k * step - 1], exp);
    }

    /**
     * The native bucket of a value at {@code schema} (at most 6), as Prometheus numbers them from 2^{@value #MIN_EXP}:
     * 0 for the zero bucket (at or below {@link #ZERO_THRESHOLD}), else 1 + the bucket's place from there. The one
     * placement both the exported native histogram and every stream's ITL buckets use, so that the two agree.
     */
    public static int nativeIndex(double seconds, int schema) {
        return index(seconds, schema, false);
    }

    /** As {@link #nativeIndex}; {@code coarse}: below 2^{@value #FINE_EXP} s one bucket per power of two. */
    private static int index(double seconds, int schema, boolean coarse) {
        if (!(seconds > ZERO_THRESHOLD)) {
            return 0;
        }
        int exp = Math.getExponent(seconds);
        int k;
        if (exp > MAX_EXP) {
            exp = MAX_EXP;
            k = PER_OCTAVE - 1;
        } else {
            double m = Double.longBitsToDouble(
                    (Double.doubleToRawLongBits(seconds) & 0x000FFFFFFFFFFFFFL) | 0x3FF0000000000000L);
            if (m == 1.0) {
                exp--; // 2^e is the upper bound of the previous power's last bucket
                k = PER_OCTAVE - 1;
            } else {
                k = Arrays.binarySearch(OCTAVE_BOUNDS, m);
                k = k >= 0 ? k : -k - 1;
            }
            if (coarse && exp < FINE_EXP) {
                k = PER_OCTAVE - 1; // the whole power of two, as its last bucket
            }
        }
        int index = (exp - MIN_EXP) * PER_OCTAVE + k;
        return (index >> (MAX_SCHEMA - schema)) + 1;
    }

    private int classicSlot(double seconds) {
        int slot = Arrays.binarySearch(classic, seconds);
        return slot >= 0 ? slot : -slot - 1; // le is inclusive; past the last bound: +Inf
    }
}
