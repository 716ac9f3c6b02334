package dev.llmsidecar.metrics;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A classic Prometheus histogram as it stands: cumulative counts at explicit upper bounds, the last one the +Inf
 * bucket (every observation), and the sum of the observations. An engine's own histogram is re-exported as one, with
 * its own bounds; the load sweep reads the sidecar's from two scrapes, takes their difference and reads quantiles
 * from it exactly as PromQL's {@code histogram_quantile} does (promql/quantile.go, bucketQuantile).
 *
 * <p>Counts are kept as read: a scrape racing an observation can show a bucket above the next one. Quantiles and
 * shares lift such a dip to the running maximum, as PromQL's ensureMonotonic does; {@link #evenedOut()} makes a
 * histogram fit to be exported.
 *
 * @param bounds           the finite upper bounds, strictly increasing (the +Inf bucket is implicit)
 * @param cumulativeCounts observations ≤ each bound, then the total (the +Inf bucket): {@code bounds.size() + 1}
 * @param sum              the sum of the observations
 */
public record CumulativeHistogram(List<Double> bounds, List<Long> cumulativeCounts, double sum) {

    /** Nothing read: no bucket, no observation. */
    public static final CumulativeHistogram EMPTY = new CumulativeHistogram(List.of(), List.of(0L), 0);

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
    }

    /** Number of observations (the +Inf bucket). */
    public long count() {
        return cumulativeCounts.get(bounds.size());
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

    /** No bucket and no observation: nothing was read. */
    public boolean isEmpty() {
        return bounds.isEmpty() && count() == 0;
    }

    /** {@code sum / count}: exact, whatever the buckets; NaN without observations. */
    public double mean() {
        return count() > 0 ? sum / count() : Double.NaN;
    }

    /** Whether {@code x} is one of the upper bounds (so a share at x is exact, not interpolated). */
    public boolean hasBound(double x) {
        return bounds.contains(x);
    }

    /**
     * The counts made fit to be exported: each bucket at least the one before it and at most the total, the total at
     * least 0. What an exposition must not hold is evened out rather than exported as an invalid histogram.
     */
    public CumulativeHistogram evenedOut() {
        long total = Math.max(0, count());
        List<Long> counts = new ArrayList<>(cumulativeCounts.size());
        long previous = 0;
        for (int i = 0; i < bounds.size(); i++) {
            previous = Math.max(previous, Math.min(cumulativeCounts.get(i), total));
            counts.add(previous);
        }
        counts.add(total);
        return new CumulativeHistogram(bounds, counts, sum);
    }

    /**
     * This histogram minus an earlier scrape of the same series: what was observed in between. Bounds present only
     * here (a series that appeared in between) count from zero. Fails when the earlier one is not a prefix in time:
     * a bucket that went down means the counters were reset (the sidecar restarted).
     */
    public CumulativeHistogram minus(CumulativeHistogram before) {
        if (before.isEmpty()) {
            return this;
        }
        if (isEmpty()) {
            throw new IllegalStateException("histogram vanished between scrapes (sidecar restarted?)");
        }
        List<Long> delta = new ArrayList<>(cumulativeCounts.size());
        for (int i = 0; i <= bounds.size(); i++) {
            int j = i < bounds.size() ? before.bounds.indexOf(bounds.get(i)) : before.bounds.size();
            long earlier = j >= 0 ? before.cumulativeCounts.get(j) : 0;
            long now = cumulativeCounts.get(i);
            if (now < earlier) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "bucket le=%s went down between scrapes (%d -> %d): counters were reset (sidecar restarted?)",
                        format(upper(i)), earlier, now));
            }
            delta.add(now - earlier);
        }
        for (double b : before.bounds) {
            if (!bounds.contains(b)) {
                throw new IllegalStateException("bucket le=" + format(b) + " vanished between scrapes: the bounds "
                        + "changed (sidecar restarted with other buckets?)");
            }
        }
        return new CumulativeHistogram(bounds, delta, sum - before.sum);
    }

    /**
     * The q-quantile as PromQL's {@code histogram_quantile(q, ...)} computes it from classic buckets: NaN without
     * observations or without a finite bucket; the rank q x count is located in the first bucket whose cumulative
     * count reaches it and interpolated linearly between that bucket's lower and upper bound (0 for the first bucket
     * when its bound is positive); a rank in the +Inf bucket returns the highest finite bound.
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
        int last = bounds.size();
        if (last == 0) {
            return Double.NaN;
        }
        long[] c = monotonic();
        double observations = c[last];
        if (observations == 0) {
            return Double.NaN;
        }
        double rank = q * observations;
        int b = bucketOf(c, rank);
        if (b == last) {
            return bounds.get(last - 1);
        }
        if (b == 0 && bounds.get(0) <= 0) {
            return bounds.get(0);
        }
        double start = 0;
        double end = bounds.get(b);
        double inBucket = c[b];
        if (b > 0) {
            start = bounds.get(b - 1);
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
        if (bounds.isEmpty() || count() == 0) {
            return new double[] {Double.NaN, Double.NaN};
        }
        long[] c = monotonic();
        int b = bucketOf(c, q * c[bounds.size()]);
        return new double[] {b == 0 ? Math.min(0, bounds.get(0)) : bounds.get(b - 1), upper(b)};
    }

    /**
     * Share of observations at or below {@code x}: exact when x is a bucket bound, else interpolated linearly within
     * its bucket (as PromQL's histogram_fraction does; 0 is the first bucket's lower bound). NaN without observations.
     */
    public double shareAtOrBelow(double x) {
        return countAtOrBelow(x) / (count() > 0 ? count() : Double.NaN);
    }

    /** Observations at or below {@code x}, interpolated as {@link #shareAtOrBelow(double)}. */
    public double countAtOrBelow(double x) {
        long[] c = monotonic();
        double lower = 0;
        double below = 0;
        for (int i = 0; i < c.length; i++) {
            double upper = upper(i);
            if (x == upper) {
                return c[i];
            }
            if (x < upper) {
                if (Double.isInfinite(upper)) {
                    return below; // nothing known inside (highest bound, +Inf]: count none of it as met
                }
                double lo = i == 0 ? Math.min(0, upper) : lower;
                double frac = upper > lo ? Math.max(0, (x - lo) / (upper - lo)) : 0;
                return below + (c[i] - below) * frac;
            }
            lower = upper;
            below = c[i];
        }
        return below;
    }

    /** The first bucket whose cumulative count reaches {@code rank}; the +Inf bucket when none before it does. */
    private int bucketOf(long[] c, double rank) {
        int b = 0;
        while (b < bounds.size() && c[b] < rank) {
            b++;
        }
        return b;
    }

    /** The upper bound of bucket {@code i}: +Inf for the last. */
    private double upper(int i) {
        return i < bounds.size() ? bounds.get(i) : Double.POSITIVE_INFINITY;
    }

    /** The cumulative counts with any decrease lifted to the running maximum (PromQL's ensureMonotonic). */
    private long[] monotonic() {
        long[] c = new long[cumulativeCounts.size()];
        long max = Long.MIN_VALUE;
        for (int i = 0; i < c.length; i++) {
            max = Math.max(max, cumulativeCounts.get(i));
            c[i] = max;
        }
        return c;
    }

    private static String format(double v) {
        return Double.isInfinite(v) ? (v > 0 ? "+Inf" : "-Inf") : String.valueOf(v);
    }

    /** An {@code le} label value as a number (Python writes "+Inf", Go-style exponents); NaN when unreadable. */
    static double bound(String le) {
        if (le == null) {
            return Double.NaN;
        }
        String v = le.trim();
        if (v.equals("+Inf") || v.equals("Inf") || v.equals("+inf") || v.equals("inf")) {
            return Double.POSITIVE_INFINITY;
        }
        try {
            double d = Double.parseDouble(v);
            return Double.isInfinite(d) && d < 0 ? Double.NaN : d;
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    /**
     * The label sets of one histogram ({@code name_bucket}, {@code name_sum}, {@code name_count}) as an exposition
     * has them, merged into one: cumulative counts, totals and sums add up (an engine's models or data-parallel
     * ranks, the sidecar's tenants). Bounds are those every label set has; a bound missing from one label set has no
     * exact count there, and dropping it costs resolution, never correctness. A label set without a sum or a total
     * (its +Inf bucket, else its {@code _count}) is left out. Not thread-safe.
     */
    public static final class Merge {

        /** One label set as read: bucket bound to cumulative count, the sum, the count. */
        private static final class LabelSet {
            final TreeMap<Double, Double> buckets = new TreeMap<>();
            double sum = Double.NaN;
            double count = Double.NaN;

            /** The +Inf bucket, else _count; NaN when neither is there. */
            double total() {
                Double inf = buckets.get(Double.POSITIVE_INFINITY);
                return inf != null ? inf : count;
            }

            boolean usable() {
                return !Double.isNaN(sum) && !Double.isNaN(total()) && !buckets.containsValue(Double.NaN);
            }
        }

        private final String bucket;
        private final String sumName;
        private final String countName;
        private final Map<Map<String, String>, LabelSet> sets = new LinkedHashMap<>(); // summed in the order read

        public Merge(String name) {
            this.bucket = name + "_bucket";
            this.sumName = name + "_sum";
            this.countName = name + "_count";
        }

        /** Takes one sample when it is one of the histogram's series; any other is ignored. */
        public void add(String sampleName, Map<String, String> labels, double value) {
            if (sampleName.equals(bucket)) {
                double le = bound(labels.get("le"));
                if (!Double.isNaN(le)) {
                    Map<String, String> key = new HashMap<>(labels);
                    key.remove("le");
                    sets.computeIfAbsent(key, k -> new LabelSet()).buckets.put(le, value);
                }
            } else if (sampleName.equals(sumName)) {
                sets.computeIfAbsent(labels, k -> new LabelSet()).sum = value;
            } else if (sampleName.equals(countName)) {
                sets.computeIfAbsent(labels, k -> new LabelSet()).count = value;
            }
        }

        /** The merged histogram, its counts as read (see {@link #evenedOut()}); null when no label set is usable. */
        public CumulativeHistogram result() {
            List<LabelSet> usable = new ArrayList<>();
            Set<Double> common = null;
            for (LabelSet set : sets.values()) {
                if (!set.usable()) {
                    continue;
                }
                usable.add(set);
                Set<Double> finite = new HashSet<>(set.buckets.headMap(Double.POSITIVE_INFINITY).keySet());
                if (common == null) {
                    common = finite;
                } else {
                    common.retainAll(finite);
                }
            }
            if (usable.isEmpty()) {
                return null;
            }
            List<Double> bounds = new ArrayList<>(new TreeSet<>(common));
            long[] cumulative = new long[bounds.size() + 1];
            double sum = 0;
            for (LabelSet set : usable) {
                for (int i = 0; i < bounds.size(); i++) {
                    cumulative[i] += Math.round(set.buckets.get(bounds.get(i)));
                }
                cumulative[bounds.size()] += Math.round(set.total());
                sum += set.sum;
            }
            List<Long> counts = new ArrayList<>(cumulative.length);
            for (long c : cumulative) {
                counts.add(c);
            }
            return new CumulativeHistogram(bounds, counts, sum);
        }
    }
}
