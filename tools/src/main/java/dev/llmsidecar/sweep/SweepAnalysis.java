package dev.llmsidecar.sweep;

import java.util.ArrayList;
import java.util.List;

/**
 * What a sweep's steps say: the knee and goodput at the SLO.
 *
 * <p><b>Knee</b>: the criterion of docs/slo-guide.md section 7, applied to the steps instead of the sidecar's load
 * bands. Between two neighbouring steps a and b (in load order), the elasticity of latency to load is
 * ln(L_b / L_a) / ln(x_b / x_a), with L the step's median (from the sidecar's histogram difference) and x its offered
 * load. The knee is the load of step a for the first pair, lightest first, whose elasticity exceeds 1, whose median
 * rose by at least 2 ms, and after which no heavier step's median falls back below halfway between L_a and L_b; the
 * lower of the TTFT and TPOT answers. Steps with fewer than {@link #MIN_SAMPLES} samples are left out.
 *
 * <p><b>Goodput</b>: the highest offered load at which the share of good requests is at least the target, reading
 * the steps lightest first and stopping at the first that misses it (a heavier step that passes again after a miss is
 * noise or a changed mix, and is reported, not used).
 */
public final class SweepAnalysis {

    static final int MIN_SAMPLES = 10;
    static final double MIN_RISE_SECONDS = 0.002;

    /** A knee by one metric: the step index (0-based in load order) and its load, or -1 / NaN. */
    public record Knee(int step, double load, double elasticity, String metric) {
        static final Knee NONE = new Knee(-1, Double.NaN, Double.NaN, null);

        public boolean found() {
            return step >= 0;
        }
    }

    /**
     * @param step index (0-based in load order) of the highest passing step, -1 when even the lightest missed
     * @param load its offered load
     * @param throughput its achieved requests/s
     * @param goodThroughput its good requests/s
     * @param laterPassing loads of heavier steps that passed again after a miss
     */
    public record Goodput(int step, double load, double throughput, double goodThroughput, List<Double> laterPassing) {
        public boolean found() {
            return step >= 0;
        }
    }

    private SweepAnalysis() {
    }

    /** The lower of the TTFT and TPOT knees over {@code steps} (any order). */
    public static Knee knee(List<StepResult> steps) {
        List<StepResult> sorted = sorted(steps);
        Knee ttft = knee(sorted, "ttft");
        Knee tpot = knee(sorted, "tpot");
        if (!ttft.found()) {
            return tpot;
        }
        if (!tpot.found()) {
            return ttft;
        }
        return tpot.load() < ttft.load() ? tpot : ttft;
    }

    /** The knee by one metric's step medians. */
    public static Knee knee(List<StepResult> sorted, String metric) {
        List<double[]> points = new ArrayList<>(); // {load, median, original position}
        for (int i = 0; i < sorted.size(); i++) {
            StepResult.Latency l = sorted.get(i).latency(metric);
            if (l.count() >= MIN_SAMPLES && l.p50() > 0 && !Double.isNaN(l.p50())) {
                points.add(new double[] {sorted.get(i).load(), l.p50(), i});
            }
        }
        return kneeOf(points, metric);
    }

    /** The criterion on (load, median, position) points in load order. */
    static Knee kneeOf(List<double[]> points, String metric) {
        for (int i = 1; i < points.size(); i++) {
            double[] a = points.get(i - 1);
            double[] b = points.get(i);
            if (b[0] <= a[0]) {
                continue;
            }
            double elasticity = Math.log(b[1] / a[1]) / Math.log(b[0] / a[0]);
            if (elasticity > 1 && b[1] - a[1] >= MIN_RISE_SECONDS && holds(points, i, (a[1] + b[1]) / 2)) {
                return new Knee((int) a[2], a[0], elasticity, metric);
            }
        }
        return Knee.NONE;
    }

    private static boolean holds(List<double[]> points, int from, double floor) {
        for (int j = from + 1; j < points.size(); j++) {
            if (points.get(j)[1] < floor) {
                return false;
            }
        }
        return true;
    }

    /** Goodput at the SLO's target, over {@code steps} (any order); not found without SLO shares. */
    public static Goodput goodput(List<StepResult> steps, double target) {
        List<StepResult> sorted = sorted(steps);
        int best = -1;
        List<Double> later = new ArrayList<>();
        boolean missed = false;
        for (int i = 0; i < sorted.size(); i++) {
            StepResult s = sorted.get(i);
            boolean pass = s.slo() != null && s.slo().share() >= target;
            if (!missed && pass) {
                best = i;
            } else if (!pass) {
                missed = true;
            } else {
                later.add(s.load());
            }
        }
        if (best < 0) {
            return new Goodput(-1, Double.NaN, Double.NaN, Double.NaN, later);
        }
        StepResult s = sorted.get(best);
        return new Goodput(best, s.load(), s.throughput(), s.goodThroughput(), later);
    }

    static List<StepResult> sorted(List<StepResult> steps) {
        List<StepResult> sorted = new ArrayList<>(steps);
        sorted.sort((a, b) -> Double.compare(a.load(), b.load()));
        return sorted;
    }
}
