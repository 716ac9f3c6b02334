package dev.llmsidecar.sweep;

import io.vertx.core.Vertx;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code --search}: the highest load at which the SLO's attainment is shown to be above its target, by bisection
 * on the request rate (open loop, Poisson) or, for a recorded trace, on the replay's speed-up.
 *
 * <p><b>A probe</b> is one sweep step at a load: --warmup-seconds, then --probe-seconds measured, then drained.
 * Its attainment is good ÷ judged requests from the sidecar (its SLO objective's counters, or the histogram estimate),
 * and its verdict the 95 % {@link Wilson} interval's place: {@link Verdict#ABOVE} the target (lower bound at or above
 * it), {@link Verdict#BELOW} (upper bound under it) or {@link Verdict#INCONCLUSIVE} (it straddles the target). An
 * inconclusive probe keeps its load running and is measured --probe-seconds longer, up to --probe-max-seconds; still
 * inconclusive then, it counts as not above (the found load must be shown above the target).
 *
 * <p><b>The search</b>: probe --search-start; while no probe is above, halve; while none is not above, double (within
 * --search-min and --search-max). Then, with lo the highest load above and hi the lowest load not above it, probe
 * √(lo·hi) and replace lo or hi by it, until hi ≤ (1 + --resolution) · lo. At most --max-probes probes. The found
 * load is lo; the next step up is hi, below the target or inconclusive, as its probe says.
 */
final class Search {

    /** Where a probe's attainment interval lies against the target. */
    enum Verdict {
        ABOVE, BELOW, INCONCLUSIVE;

        String text() {
            return switch (this) {
                case ABOVE -> "above the target";
                case BELOW -> "below the target";
                case INCONCLUSIVE -> "inconclusive";
            };
        }
    }

    /**
     * One probe.
     *
     * @param step the sweep step it ran (the sidecar's figures)
     * @param judged requests the SLO judged
     * @param good of them, good
     * @param interval the 95 % Wilson interval of good ÷ judged
     * @param extensions how many times it was measured --probe-seconds longer
     */
    record Probe(StepResult step, double judged, double good, double[] interval, Verdict verdict, int extensions) {
        double load() {
            return step.load();
        }

        double attainment() {
            return judged > 0 ? good / judged : Double.NaN;
        }

        /** Good output tokens per second: the sidecar's good token share, else the request share, × output tok/s. */
        double goodTokensPerSecond() {
            double t = step.goodTokensPerSecond();
            return Double.isNaN(t) && step.slo() != null ? step.slo().share() * step.outputTokensPerSecond() : t;
        }
    }

    /**
     * A finished search.
     *
     * @param probes in run order
     * @param found the probe of the highest load above the target, or null
     * @param next the probe of the lowest load above it not shown above, or null
     * @param stop why the search stopped
     * @param sweep the probes as sweep steps (for the sweep's own report)
     */
    record Result(SweepOptions options, List<Probe> probes, Probe found, Probe next, String stop, SweepResult sweep) {
    }

    private final SweepOptions o;
    private final Sweep sweep;
    private final List<Probe> probes = new ArrayList<>();
    private final List<StepResult> steps = new ArrayList<>();
    private final PrintStream log;

    private Search(SweepOptions o, Sweep sweep, PrintStream log) {
        this.o = o;
        this.sweep = sweep;
        this.log = log;
    }

    static Result run(SweepOptions o, Vertx vertx, PrintStream log) throws Exception {
        Sweep sweep = new Sweep(o, vertx, log);
        try {
            sweep.open();
            return new Search(o, sweep, log).search();
        } finally {
            sweep.close();
        }
    }

    /** The verdict of {@code good} of {@code judged} against {@code target}. */
    static Verdict verdict(double good, double judged, double target) {
        double[] w = Wilson.interval95(good, judged);
        if (Double.isNaN(w[0])) {
            return Verdict.INCONCLUSIVE;
        }
        return w[0] >= target ? Verdict.ABOVE : w[1] < target ? Verdict.BELOW : Verdict.INCONCLUSIVE;
    }

    private Result search() throws Exception {
        double start = o.loads[0];
        double min = Double.isNaN(o.searchMin) ? start / 1024 : o.searchMin;
        double max = Double.isNaN(o.searchMax) ? start * 1024 : o.searchMax;
        double lo = Double.NaN;
        double hi = Double.NaN;
        double x = Math.max(min, Math.min(max, start));
        String stop;
        while (true) {
            if (probes.size() >= o.maxProbes) {
                stop = "--max-probes " + o.maxProbes + " reached";
                break;
            }
            Probe p = probe(x);
            if (p.verdict() == Verdict.ABOVE) {
                lo = Double.isNaN(lo) ? x : Math.max(lo, x);
            } else {
                hi = Double.isNaN(hi) ? x : Math.min(hi, x);
            }
            if (!Double.isNaN(lo) && !Double.isNaN(hi)) {
                if (hi <= lo * (1 + o.resolution)) {
                    stop = String.format(Locale.ROOT, "resolution: %s is within %s %% of %s", o.formatLoad(hi),
                            SloSpec.fmt(o.resolution * 100), o.formatLoad(lo));
                    break;
                }
                x = Math.sqrt(lo * hi);
            } else if (p.verdict() == Verdict.ABOVE) {
                if (x >= max) {
                    stop = "every probe up to --search-max " + o.formatLoad(max) + " was above the target";
                    break;
                }
                x = Math.min(max, x * 2);
            } else {
                if (x <= min) {
                    stop = "no probe down to --search-min " + o.formatLoad(min) + " was above the target";
                    break;
                }
                x = Math.max(min, x / 2);
            }
        }
        Probe found = null;
        Probe next = null;
        for (Probe p : probes) {
            if (p.load() == lo && p.verdict() == Verdict.ABOVE) {
                found = p;
            }
            if (p.load() == hi && p.verdict() != Verdict.ABOVE) {
                next = p;
            }
        }
        return new Result(o, List.copyOf(probes), found, next, stop, sweep.result(steps));
    }

    private Probe probe(double load) throws Exception {
        int[] extensions = {0};
        double target = o.slo.target();
        int index = steps.size();
        StepResult s = sweep.step(index, load, new Sweep.Extension() {
            @Override
            public double boundSeconds() {
                return o.probeMaxSeconds;
            }

            @Override
            public boolean extend(SidecarScrape before, SidecarScrape now, double measuredSeconds) {
                StepResult interim = StepResult.compute(index + 1, load, o.model, o.operation(), o.slo,
                        o.sloObjective, before, now, now, measuredSeconds, 0, ClientSummary.of(List.of(), 0));
                boolean more = interim.slo() == null
                        || verdict(interim.slo().good(), interim.slo().requests(), target) == Verdict.INCONCLUSIVE;
                if (more) {
                    extensions[0]++;
                }
                return more;
            }
        });
        steps.add(s);
        double judged = s.slo() == null ? 0 : s.slo().requests();
        double good = s.slo() == null ? 0 : s.slo().good();
        Verdict v = judged > 0 ? verdict(good, judged, target) : Verdict.BELOW;
        Probe p = new Probe(s, judged, good, Wilson.interval95(good, judged), v, extensions[0]);
        probes.add(p);
        if (log != null) {
            log.printf(Locale.ROOT, "sweep: search probe %d at %s %s: attainment %s of %.0f, 95 %% interval [%s, %s]: "
                    + "%s%s%n", probes.size(), o.formatLoad(load), o.loadUnit(), Report.f3(p.attainment()), judged,
                    Report.f3(p.interval()[0]), Report.f3(p.interval()[1]), v.text(),
                    extensions[0] > 0 ? " (extended " + extensions[0] + " times)" : "");
        }
        return p;
    }
}
