package dev.llmsidecar.sweep;

import java.util.Arrays;
import java.util.Locale;

/**
 * A classic Prometheus histogram: ascending upper bounds (the last one +Inf) with cumulative counts, plus
 * {@code _count} and {@code _sum}. The sweep takes the difference of two scrapes of one histogram and reads
 * percentiles from it exactly as PromQL's {@code histogram_quantile} does (promql/quantile.go, bucketQuantile:
 * linear interpolation within the bucket holding the rank, 0 as the lower bound of the first bucket, the highest
 * finite bound when the rank falls into +Inf).
 */
public final class BucketHistogram {

    /** An empty histogram (no buckets, no observations). */
    public static final BucketHistogram EMPTY = new BucketHistogram(new double[0], new double[0], 0, 0);

    private final double[] bounds;
    private final double[] cumulative;
    private final double count;
    private final double sum;

    /**
     * @param bounds upper bounds, ascending (duplicates are merged, as Prometheus coalesces them)
     * @param cumulative cumulative count at each bound
     * @param count the {@code _count} (NaN: taken from the +Inf bucket)
     * @param sum the {@code _sum}
     */
    public BucketHistogram(double[] bounds, double[] cumulative, double count, double sum) {
        if (bounds.length != cumulative.length) {
            throw new IllegalArgumentException("bounds and counts differ in length");
        }
        for (int i = 1; i < bounds.length; i++) {
            if (!(bounds[i] >= bounds[i - 1])) {
                throw new IllegalArgumentException("bounds must be ascending: " + Arrays.toString(bounds));
            }
        }
        this.bounds = bounds.clone();
        this.cumulative = cumulative.clone();
        double inf = bounds.length > 0 && Double.isInfinite(bounds[bounds.length - 1]) ? cumulative[bounds.length - 1]
                : Double.NaN;
        this.count = Double.isNaN(count) ? (Double.isNaN(inf) ? 0 : inf) : count;
        this.sum = sum;
    }

    public double[] bounds() {
        return bounds.clone();
    }

    public double[] cumulative() {
        return cumulative.clone();
    }

    /** Observations ({@code _count}, which equals the +Inf bucket). */
    public double count() {
        return count;
    }

    public double sum() {
        return sum;
    }

    /** {@code _sum / _count}: exact, whatever the buckets; NaN without observations. */
    public double mean() {
        return count > 0 ? sum / count : Double.NaN;
    }

    public boolean isEmpty() {
        return bounds.length == 0;
    }

    /** Whether {@code x} is one of the upper bounds (so a share at x is exact, not interpolated). */
    public boolean hasBound(double x) {
        for (double b : bounds) {
            if (b == x) {
                return true;
            }
        }
        return false;
    }

    /**
     * This histogram minus an earlier scrape of the same series: what was observed in between. Bounds present only
     * here (a series that appeared in between) count from zero. Fails when the earlier one is not a prefix in time:
     * a bucket that went down means the counters were reset (the sidecar restarted).
     */
    public BucketHistogram minus(BucketHistogram before) {
        if (before.isEmpty()) {
            return this;
        }
        if (isEmpty()) {
            throw new IllegalStateException("histogram vanished between scrapes (sidecar restarted?)");
        }
        double[] delta = new double[bounds.length];
        for (int i = 0; i < bounds.length; i++) {
            int j = Arrays.binarySearch(before.bounds, bounds[i]);
            double earlier = j >= 0 ? before.cumulative[j] : 0;
            delta[i] = cumulative[i] - earlier;
            if (delta[i] < -1e-9) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "bucket le=%s went down between scrapes (%s -> %s): counters were reset (sidecar restarted?)",
                        format(bounds[i]), format(earlier), format(cumulative[i])));
            }
            delta[i] = Math.max(0, delta[i]);
        }
        for (double b : before.bounds) {
            if (Arrays.binarySearch(bounds, b) < 0) {
                throw new IllegalStateException("bucket le=" + format(b) + " vanished between scrapes: the bounds "
                        + "changed (sidecar restarted with other buckets?)");
            }
        }
        double dCount = count - before.count;
        if (dCount < -1e-9) {
            throw new IllegalStateException("_count went down between scrapes: counters were reset");
        }
        return new BucketHistogram(bounds, delta, Math.max(0, dCount), sum - before.sum);
    }

    /**
     * The q-quantile as PromQL's {@code histogram_quantile(q, ...)} computes it from classic buckets: NaN without
     * observations or without a +Inf bucket; the rank q x count is located in the first bucket whose cumulative count
     * reaches it and interpolated linearly between that bucket's lower and upper bound (0 for the first bucket when
     * its bound is positive); a rank in the +Inf bucket returns the highest finite bound.
     */
    public double quantile(double q) {
        if (Double.isNaN(q)) {
            return Double.NaN;
        }
        if (q < 0) {
            return Double.NEGATIVE_INFINITY;
        }
        if (q > 1) {
            return Double.POSITIVE_INFINITY;
        }
        if (bounds.length < 2 || !Double.isInfinite(bounds[bounds.length - 1])) {
            return Double.NaN;
        }
        double[] c = monotonic();
        int last = bounds.length - 1;
        double observations = c[last];
        if (observations == 0) {
            return Double.NaN;
        }
        double rank = q * observations;
        int b = 0;
        while (b < last && c[b] < rank) {
            b++;
        }
        if (b == last) {
            return bounds[last - 1];
        }
        if (b == 0 && bounds[0] <= 0) {
            return bounds[0];
        }
        double start = 0;
        double end = bounds[b];
        double inBucket = c[b];
        if (b > 0) {
            start = bounds[b - 1];
            inBucket -= c[b - 1];
            rank -= c[b - 1];
        }
        return start + (end - start) * (rank / inBucket);
    }

    /**
     * The bucket a quantile falls in, {lower, upper}: how precisely the buckets pin it down. {NaN, NaN} when the
     * quantile is undefined; {highest finite bound, +Inf} when its rank is in the +Inf bucket.
     */
    public double[] quantileBucket(double q) {
        if (bounds.length < 2 || count == 0 || !Double.isInfinite(bounds[bounds.length - 1])) {
            return new double[] {Double.NaN, Double.NaN};
        }
        double[] c = monotonic();
        double rank = q * c[bounds.length - 1];
        int b = 0;
        while (b < bounds.length - 1 && c[b] < rank) {
            b++;
        }
        return new double[] {b == 0 ? Math.min(0, bounds[0]) : bounds[b - 1], bounds[b]};
    }

    /**
     * Share of observations at or below {@code x}: exact when x is a bucket bound, else interpolated linearly within
     * its bucket (as PromQL's histogram_fraction does; 0 is the first bucket's lower bound). NaN without observations.
     */
    public double shareAtOrBelow(double x) {
        return countAtOrBelow(x) / countOrNaN();
    }

    /** Observations at or below {@code x}, interpolated as {@link #shareAtOrBelow(double)}. */
    public double countAtOrBelow(double x) {
        if (bounds.length == 0) {
            return 0;
        }
        double[] c = monotonic();
        double lower = 0;
        double below = 0;
        for (int i = 0; i < bounds.length; i++) {
            if (x == bounds[i]) {
                return c[i];
            }
            if (x < bounds[i]) {
                if (Double.isInfinite(bounds[i])) {
                    return below; // nothing known inside (highest bound, +Inf]: count none of it as met
                }
                double lo = i == 0 ? Math.min(0, bounds[0]) : lower;
                double frac = bounds[i] > lo ? Math.max(0, (x - lo) / (bounds[i] - lo)) : 0;
                return below + (c[i] - below) * frac;
            }
            lower = bounds[i];
            below = c[i];
        }
        return below;
    }

    private double countOrNaN() {
        return count > 0 ? count : Double.NaN;
    }

    /** The cumulative counts with any decrease removed (PromQL's ensureMonotonic). */
    private double[] monotonic() {
        double[] c = cumulative.clone();
        double max = c.length > 0 ? c[0] : 0;
        for (int i = 1; i < c.length; i++) {
            if (c[i] > max) {
                max = c[i];
            } else if (c[i] < max) {
                c[i] = max;
            }
        }
        return c;
    }

    static String format(double v) {
        if (Double.isInfinite(v)) {
            return v > 0 ? "+Inf" : "-Inf";
        }
        return String.format(Locale.ROOT, "%s", v);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("BucketHistogram{count=").append(format(count)).append(", sum=")
                .append(format(sum));
        for (int i = 0; i < bounds.length; i++) {
            sb.append(", ").append(format(bounds[i])).append(':').append(format(cumulative[i]));
        }
        return sb.append('}').toString();
    }
}
