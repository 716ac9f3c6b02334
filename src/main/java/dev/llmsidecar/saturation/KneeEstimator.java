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
 * per {@link LoadBand} over a sliding window. See docs/slo-guide.md "The saturation knee".
 *
 * <p>Method: take the bands with at least {@code minSamples} requests in the window, lightest first. Between two
 * neighbours a and b, the elasticity of latency to load is ln(L_b / L_a) / ln(x_b / x_a), with L the band's median
 * and x its representative load. Below saturation an engine batches more requests at little cost per request, so
 * the elasticity is well under 1; past it, requests queue for a slot and latency grows at least in proportion to
 * load. The knee is the upper bound of band a for the first pair whose elasticity exceeds 1 (and whose median rose
 * by at least {@link #MIN_RISE_NANOS}, so sub-millisecond noise on a fast engine is not a knee), taking the lower of
 * the TTFT and TPOT knees. No such pair: no knee seen yet, which is a statement about the load seen, not the
 * engine; a knee known from a load test can be configured instead.
 *
 * <p>Thread-safe: records come from event loops; {@link #estimate()} reads under the windows' own lock and is
 * cached for a second, since one scrape reads it through several gauges.
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
     *     when none was seen
     * @param bands every band with at least one sample in the window, lightest first
     */
    public record Estimate(double kneeRequests, List<BandStats> bands) {
    }

    private final LatencyWindows windows;
    private final Duration window;
    private final int minSamples;
    private final LongSupplier clock;
    private volatile Estimate cached;
    private volatile long cachedAt;

    public KneeEstimator(LongSupplier nanoClock, Duration window, int minSamples) {
        if (minSamples < 1) {
            throw new IllegalArgumentException("sidecar.saturation.min-samples must be at least 1: " + minSamples);
        }
        this.windows = new LatencyWindows(nanoClock, List.of(window));
        this.window = window;
        this.minSamples = minSamples;
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
    public Estimate estimate() {
        long now = clock.getAsLong();
        Estimate e = cached;
        if (e == null || now - cachedAt > CACHE_NANOS) {
            e = compute();
            cached = e;
            cachedAt = now;
        }
        return e;
    }

    private Estimate compute() {
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
        double ttftKnee = knee(bands, true);
        double tpotKnee = knee(bands, false);
        double knee = Double.isNaN(ttftKnee) ? tpotKnee : Double.isNaN(tpotKnee) ? ttftKnee : Math.min(ttftKnee,
                tpotKnee);
        return new Estimate(knee, List.copyOf(bands));
    }

    /** The knee by one metric (seconds medians), or NaN. */
    double knee(List<BandStats> bands, boolean ttft) {
        BandStats previous = null;
        for (BandStats b : bands) {
            long count = ttft ? b.ttftCount() : b.tpotCount();
            double median = ttft ? b.ttftP50() : b.tpotP50();
            if (count < minSamples || !(median > 0)) {
                continue;
            }
            if (previous != null) {
                double before = ttft ? previous.ttftP50() : previous.tpotP50();
                double elasticity = Math.log(median / before)
                        / Math.log(b.band().representativeLoad() / previous.band().representativeLoad());
                if (elasticity > 1 && (median - before) * 1e9 >= MIN_RISE_NANOS) {
                    return previous.band().upper();
                }
            }
            previous = b;
        }
        return Double.NaN;
    }
}
