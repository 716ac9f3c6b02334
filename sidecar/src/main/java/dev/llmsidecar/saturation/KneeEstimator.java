package dev.llmsidecar.saturation;

import dev.llmsidecar.window.LatencyWindows;
import dev.llmsidecar.window.Metric;
import dev.llmsidecar.window.WindowStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Where latency starts to rise faster than load: the saturation knee, estimated live from the TTFT and TPOT medians
 * per {@link LoadBand} over a sliding window. See docs/slo-guide.md, "7. The saturation knee".
 *
 * <p>Method: take the bands with at least {@code minSamples} requests in the window, lightest first. Between two
 * neighbouring bands a and b, the elasticity of latency to load is ln(L_b / L_a) / ln(x_b / x_a), with L the band's
 * median and x its representative load. Below saturation an engine batches more requests at little cost per request,
 * so the elasticity is well under 1; past it, requests queue for a slot and latency grows at least in proportion to
 * load. The knee is the upper bound of band a for the first neighbouring pair whose elasticity exceeds 1, whose
 * median rose by at least {@link #MIN_RISE_NANOS} (sub-millisecond noise on a fast engine is not a knee), and after
 * which no heavier band falls back below halfway between L_a and L_b (a rise that does not hold is a change in the
 * request mix, not a queue); the lower of the TTFT and TPOT knees.
 *
 * <p>An estimate is kept for {@code hold} after the window last showed it, so a pod that was past its knee once and
 * now runs just below it still has one (the point of the "approaching saturation" alert). A window whose neighbouring
 * bands at or above the kept knee are flat drops it: the engine now does better than it did.
 *
 * <p>Thread-safe: records come from event loops; {@link #estimate()} reads under the windows' own lock, is cached for
 * a second (one scrape reads it through several gauges) and is synchronized, since it updates the kept knee.
 */
public final class KneeEstimator {

    /** Smallest rise of a band median over its lighter neighbour's that can make a knee. */
    static final long MIN_RISE_NANOS = 2_000_000;

    private static final long CACHE_NANOS = 1_000_000_000L;

    /** One band's medians over the window; NaN where the band had too few samples. */
    public record BandStats(LoadBand band, long ttftCount, double ttftP50, double ttftP90, long tpotCount,
            double tpotP50, double tpotP90) {
    }

    /**
     * @param kneeRequests the knee in requests in flight (the upper bound of the last band before the rise); NaN
     *     when none was seen within the hold time
     * @param inWindow whether the current window shows the knee (false: kept from an earlier window)
     * @param bands every band with at least one sample in the window, lightest first
     */
    public record Estimate(double kneeRequests, boolean inWindow, List<BandStats> bands) {
    }

    /** What one metric's medians say about the knee. */
    private record Finding(double knee, double highestFlatUpper) {
    }

    private final LatencyWindows windows;
    private final Duration window;
    private final int minSamples;
    private final long holdNanos;
    private final LongSupplier clock;
    private Estimate cached;
    private long cachedAt;
    private double heldKnee = Double.NaN;
    private long heldAt;

    public KneeEstimator(LongSupplier nanoClock, Duration window, int minSamples, Duration hold) {
        if (minSamples < 1) {
            throw new IllegalArgumentException("sidecar.saturation.min-samples must be at least 1: " + minSamples);
        }
        this.windows = new LatencyWindows(nanoClock, List.of(window));
        this.window = window;
        this.minSamples = minSamples;
        this.holdNanos = hold.toNanos();
        this.clock = nanoClock;
    }

    /** One successful streaming request that arrived into {@code band}; a negative time was not measured. */
    public void record(LoadBand band, long ttftNanos, long tpotNanos) {
        if (ttftNanos >= 0) {
            windows.record(band.label(), Metric.TTFT, ttftNanos);
        }
        if (tpotNanos >= 0) {
            windows.record(band.label(), Metric.TPOT, tpotNanos);
        }
    }

    /** The current estimate (recomputed at most once a second). */
    public synchronized Estimate estimate() {
        long now = clock.getAsLong();
        if (cached == null || now - cachedAt > CACHE_NANOS) {
            cached = compute(now);
            cachedAt = now;
        }
        return cached;
    }

    private Estimate compute(long now) {
        Map<String, Map<Metric, Map<Duration, WindowStats>>> snapshot = windows.snapshot();
        List<BandStats> bands = new ArrayList<>();
        for (LoadBand band : LoadBand.all()) {
            Map<Metric, Map<Duration, WindowStats>> perMetric = snapshot.get(band.label());
            if (perMetric == null) {
                continue;
            }
            WindowStats ttft = perMetric.get(Metric.TTFT).get(window);
            WindowStats tpot = perMetric.get(Metric.TPOT).get(window);
            if (ttft.count() + tpot.count() > 0) {
                bands.add(new BandStats(band, ttft.count(), ttft.p50(), ttft.p90(), tpot.count(), tpot.p50(),
                        tpot.p90()));
            }
        }
        Finding ttft = knee(bands, true);
        Finding tpot = knee(bands, false);
        double knee = Double.isNaN(ttft.knee()) ? tpot.knee() : Double.isNaN(tpot.knee()) ? ttft.knee()
                : Math.min(ttft.knee(), tpot.knee());
        if (!Double.isNaN(knee)) {
            heldKnee = knee;
            heldAt = now;
            return new Estimate(knee, true, List.copyOf(bands));
        }
        double flat = Math.max(ttft.highestFlatUpper(), tpot.highestFlatUpper());
        if (now - heldAt > holdNanos || flat >= heldKnee) {
            heldKnee = Double.NaN; // too old, or the window shows flat latency past it
        }
        return new Estimate(heldKnee, false, List.copyOf(bands));
    }

    /** The knee by one metric (seconds medians), or NaN; and the upper bound of the heaviest flat pair's heavier band. */
    Finding knee(List<BandStats> bands, boolean ttft) {
        List<BandStats> usable = new ArrayList<>();
        for (BandStats b : bands) {
            long count = ttft ? b.ttftCount() : b.tpotCount();
            if (count >= minSamples && median(b, ttft) > 0) {
                usable.add(b);
            }
        }
        double highestFlat = Double.NEGATIVE_INFINITY;
        for (int i = 1; i < usable.size(); i++) {
            BandStats a = usable.get(i - 1);
            BandStats b = usable.get(i);
            if (b.band().index() != a.band().index() + 1) {
                continue; // not neighbours: a thin band in between could hide where the rise started
            }
            double before = median(a, ttft);
            double after = median(b, ttft);
            double elasticity = Math.log(after / before)
                    / Math.log(b.band().representativeLoad() / a.band().representativeLoad());
            if (elasticity > 1 && (after - before) * 1e9 >= MIN_RISE_NANOS && holds(usable, i, (before + after) / 2,
                    ttft)) {
                return new Finding(a.band().upper(), highestFlat);
            }
            highestFlat = b.band().upper();
        }
        return new Finding(Double.NaN, highestFlat);
    }

    /** Whether every band heavier than {@code usable[from]} stays at or above {@code floor}. */
    private static boolean holds(List<BandStats> usable, int from, double floor, boolean ttft) {
        for (int j = from + 1; j < usable.size(); j++) {
            if (median(usable.get(j), ttft) < floor) {
                return false;
            }
        }
        return true;
    }

    private static double median(BandStats b, boolean ttft) {
        return ttft ? b.ttftP50() : b.tpotP50();
    }
}
