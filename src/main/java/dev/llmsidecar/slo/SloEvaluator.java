package dev.llmsidecar.slo;

import dev.llmsidecar.timeline.ItlSamples;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import java.util.ArrayList;
import java.util.List;

/**
 * Judges a finished request against its objectives. A request that did not complete successfully violates every
 * applicable objective (criterion ERROR): errors and cancellations stay in the denominator, as AIPerf counts
 * them, so shedding load can never look like compliance. A request with a single output token has no TPOT and
 * meets any TPOT objective (as vllm bench serve's goodput does).
 */
public final class SloEvaluator {

    private SloEvaluator() {
    }

    public static SloVerdict evaluate(RequestResult r, List<Objective> objectives) {
        boolean completed = r.outcome() == Outcome.OK;
        boolean good = completed;
        List<SloVerdict.ObjectiveResult> results = new ArrayList<>(objectives.size());
        for (Objective o : objectives) {
            List<Criterion> violated = new ArrayList<>(1);
            if (!completed) {
                violated.add(Criterion.ERROR);
            } else {
                if (o.ttftNanos() >= 0 && (r.ttftNanos() < 0 || r.ttftNanos() > o.ttftNanos())) {
                    violated.add(Criterion.TTFT);
                }
                if (o.tpotNanos() >= 0 && r.tpotNanos() > o.tpotNanos()) {
                    violated.add(Criterion.TPOT);
                }
                if (o.e2eNanos() >= 0 && r.e2eNanos() > o.e2eNanos()) {
                    violated.add(Criterion.E2E);
                }
                if (o.itlNanos() >= 0 && itlQuantile(r.itl(), o.itlQuantile()) > o.itlNanos()) {
                    violated.add(Criterion.ITL);
                }
            }
            good &= violated.isEmpty();
            results.add(new SloVerdict.ObjectiveResult(o, List.copyOf(violated)));
        }
        return new SloVerdict(good, List.copyOf(results));
    }

    /** Token-weighted quantile of a request's ITL samples (nearest rank); -1 when it has none. */
    static long itlQuantile(ItlSamples itl, double q) {
        long total = itl.sampleCount();
        if (total == 0) {
            return -1;
        }
        long[] values = new long[itl.gaps()];
        int[] weights = new int[itl.gaps()];
        Integer[] order = new Integer[itl.gaps()];
        for (int i = 0; i < itl.gaps(); i++) {
            values[i] = itl.gapNanos(i) / itl.tokens(i);
            weights[i] = itl.tokens(i);
            order[i] = i;
        }
        java.util.Arrays.sort(order, (a, b) -> Long.compare(values[a], values[b]));
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        for (int i : order) {
            seen += weights[i];
            if (seen >= rank) {
                return values[i];
            }
        }
        return values[order[order.length - 1]];
    }
}
