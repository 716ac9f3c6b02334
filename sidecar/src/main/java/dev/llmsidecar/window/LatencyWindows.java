package dev.llmsidecar.window;

import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;

/**
 * Live latency percentiles per model and {@link Metric} over a fixed set of sliding windows (for example 1, 5 and
 * 15 minutes), backed by one {@link SlidingWindowHistogram} per (model, metric) created on first use. Model
 * labels must already be bounded (see {@code ModelLabels}): every series costs about 50 KB (see
 * {@link SlidingWindowHistogram}); reads share one merge buffer and run one at a time.
 *
 * <p>The slice, the step in which windows move, is the shortest window / 6. A window always includes the
 * current, partly filled slice, so it covers between 5/6 and all of its nominal length; six slices keep that
 * error at one sixth while the ring stays small (90 slices for 1 min .. 15 min) and reads cheap. Finer slices
 * would cost memory and merge work per read for little gain on a dashboard or gauge. The shortest window must
 * therefore split into six whole-nanosecond slices, and every window must be a multiple of the slice.
 *
 * <h2>p99 drift</h2>
 * {@link #drift(String, Metric, Duration, Duration, long)} returns p99(short window) / p99(baseline window) for one
 * series: a ratio above 1 means the recent tail is slower than the baseline, below 1 faster. The baseline window
 * contains the short one, so a slowdown also raises the baseline p99 and the ratio understates it; once recent
 * samples exceed 1 % of the baseline's, the baseline p99 itself comes from them and the ratio drops back towards
 * 1. That damping is the price of one ring instead of a separate "before" window, and makes the ratio best read
 * as a signal of a fresh change. The ratio is NaN when either window holds fewer than {@code minSamples}
 * samples, so a quiet series cannot trip an alert with a handful of requests.
 */
public final class LatencyWindows {

    /** Slices per shortest window; see the class comment. */
    static final int SLICES_PER_SHORTEST_WINDOW = 6;

    private final LongSupplier nanoClock;
    private final List<Duration> windows;
    private final Map<Duration, WindowStats> emptyStats;
    private final Duration slice;
    private final Duration longestWindow;
    private final ConcurrentHashMap<String, ConcurrentHashMap<Metric, SlidingWindowHistogram>> series =
            new ConcurrentHashMap<>();
    /** One merge buffer for all series; reads lock it, so they run one at a time (writers never touch it). */
    private final Histogram mergeBuffer = SlidingWindowHistogram.newHistogram();

    /**
     * @param nanoClock monotonic nanosecond clock, e.g. {@code System::nanoTime}
     * @param windows   the windows reported by {@link #snapshot()}; duplicates are ignored
     */
    public LatencyWindows(LongSupplier nanoClock, List<Duration> windows) {
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        Objects.requireNonNull(windows, "windows");
        if (windows.isEmpty()) {
            throw new IllegalArgumentException("at least one window is needed");
        }
        TreeSet<Duration> sorted = new TreeSet<>();
        for (Duration window : windows) {
            Objects.requireNonNull(window, "window");
            if (window.isNegative() || window.isZero()) {
                throw new IllegalArgumentException("window must be positive: " + window);
            }
            sorted.add(window);
        }
        Duration shortest = sorted.first();
        if (shortest.toNanos() % SLICES_PER_SHORTEST_WINDOW != 0) {
            throw new IllegalArgumentException("shortest window " + shortest + " does not split into "
                    + SLICES_PER_SHORTEST_WINDOW + " whole-nanosecond slices");
        }
        this.slice = shortest.dividedBy(SLICES_PER_SHORTEST_WINDOW);
        this.longestWindow = sorted.last();
        for (Duration window : sorted) {
            SlidingWindowHistogram.slicesIn(window, slice, longestWindow, "window");
        }
        this.windows = List.copyOf(sorted);
        this.emptyStats = emptyStats(sorted);
    }

    /** The configured windows, shortest first. */
    public List<Duration> windows() {
        return windows;
    }

    /** The step in which windows move: the shortest window / 6. */
    public Duration slice() {
        return slice;
    }

    public void record(String model, Metric metric, long nanos) {
        histogram(model, metric).record(nanos);
    }

    /** Records {@code count} samples of {@code nanos} (ITL is token-weighted); a non-positive count is ignored. */
    public void record(String model, Metric metric, long nanos, long count) {
        if (count > 0) {
            histogram(model, metric).record(nanos, count);
        }
    }

    /** Models seen so far, sorted; an immutable copy. */
    public Set<String> models() {
        return Collections.unmodifiableSortedSet(new TreeSet<>(series.keySet()));
    }

    /**
     * Stats of every model, metric and configured window, read now. Immutable; models sorted by name, metrics in
     * declaration order, windows shortest first. Every metric of a known model is present, with empty stats for a
     * metric never recorded, so consumers see a stable shape.
     */
    public Map<String, Map<Metric, Map<Duration, WindowStats>>> snapshot() {
        return snapshot(windows);
    }

    /**
     * As {@link #snapshot()}, for some of the configured windows only (a read of the shortest merges a few slices,
     * not the longest window's).
     */
    public Map<String, Map<Metric, Map<Duration, WindowStats>>> snapshot(List<Duration> some) {
        if (!windows.containsAll(some)) {
            throw new IllegalArgumentException(some + " are not all among the windows " + windows);
        }
        Map<Duration, WindowStats> empty = some.equals(windows) ? emptyStats : emptyStats(some);
        TreeMap<String, Map<Metric, Map<Duration, WindowStats>>> byModel = new TreeMap<>();
        synchronized (mergeBuffer) {
            for (String model : models()) {
                byModel.put(model, statsOf(series.get(model), some, empty));
            }
        }
        return Collections.unmodifiableSortedMap(byModel);
    }

    private Map<Metric, Map<Duration, WindowStats>> statsOf(Map<Metric, SlidingWindowHistogram> perMetric,
            List<Duration> some, Map<Duration, WindowStats> empty) {
        EnumMap<Metric, Map<Duration, WindowStats>> byMetric = new EnumMap<>(Metric.class);
        for (Metric metric : Metric.values()) {
            SlidingWindowHistogram histogram = perMetric.get(metric);
            byMetric.put(metric, histogram == null ? empty : histogram.snapshot(some, mergeBuffer));
        }
        return Collections.unmodifiableMap(byMetric);
    }

    private static Map<Duration, WindowStats> emptyStats(Collection<Duration> windows) {
        TreeMap<Duration, WindowStats> empty = new TreeMap<>();
        windows.forEach(window -> empty.put(window, WindowStats.empty()));
        return Collections.unmodifiableMap(empty);
    }

    /**
     * p99 of the last {@code shortWindow} divided by p99 of the last {@code baselineWindow} for one series; NaN
     * when either window has fewer than {@code minSamples} samples or the series was never recorded. See the
     * class comment for how to read it. Both windows must be multiples of {@link #slice()}, the short one shorter
     * than the baseline, the baseline at most the longest configured window.
     *
     * @throws IllegalArgumentException for invalid windows or {@code minSamples < 1}
     */
    public double drift(String model, Metric metric, Duration shortWindow, Duration baselineWindow,
            long minSamples) {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(metric, "metric");
        SlidingWindowHistogram.slicesIn(shortWindow, slice, longestWindow, "shortWindow");
        SlidingWindowHistogram.slicesIn(baselineWindow, slice, longestWindow, "baselineWindow");
        if (shortWindow.compareTo(baselineWindow) >= 0) {
            throw new IllegalArgumentException("shortWindow " + shortWindow + " must be shorter than baselineWindow "
                    + baselineWindow);
        }
        if (minSamples < 1) {
            throw new IllegalArgumentException("minSamples must be at least 1: " + minSamples);
        }
        Map<Metric, SlidingWindowHistogram> perMetric = series.get(model);
        SlidingWindowHistogram histogram = perMetric == null ? null : perMetric.get(metric);
        if (histogram == null) {
            return Double.NaN;
        }
        // one read, so both windows end at the same instant
        Map<Duration, WindowStats> stats;
        synchronized (mergeBuffer) {
            stats = histogram.snapshot(List.of(shortWindow, baselineWindow), mergeBuffer);
        }
        WindowStats recent = stats.get(shortWindow);
        WindowStats baseline = stats.get(baselineWindow);
        if (recent.count() < minSamples || baseline.count() < minSamples) {
            return Double.NaN;
        }
        return recent.p99() / baseline.p99();
    }

    private SlidingWindowHistogram histogram(String model, Metric metric) {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(metric, "metric");
        ConcurrentHashMap<Metric, SlidingWindowHistogram> perMetric = series.get(model);
        if (perMetric == null) {
            perMetric = series.computeIfAbsent(model, m -> new ConcurrentHashMap<>());
        }
        SlidingWindowHistogram histogram = perMetric.get(metric);
        if (histogram == null) {
            histogram = perMetric.computeIfAbsent(metric,
                    m -> new SlidingWindowHistogram(nanoClock, slice, longestWindow));
        }
        return histogram;
    }
}
