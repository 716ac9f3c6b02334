package dev.llmsidecar.slo;

import dev.llmsidecar.timeline.ItlSamples;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Judges a finished request against its objectives. Which outcomes burn error budget:
 * <ul>
 * <li>a server-side failure (5xx, the sidecar's 502/504, an error inside a stream, a broken stream) violates every
 * applicable objective (criterion ERROR): errors stay in the denominator, so shedding load never looks like
 * compliance;</li>
 * <li>an upstream 4xx is the client's error and does not count, except the statuses configured as bad (429 by
 * default: the engine turned the client away for lack of capacity);</li>
 * <li>a client cancellation does not count (users pressing stop must not page anyone), unless the wait before it
 * already broke an objective (no first token within the TTFT threshold, or the E2E threshold passed): then it is
 * bad for that criterion, since a user who gave up after waiting too long was not served.</li>
 * </ul>
 * A stream with a single output token has no TPOT and meets any TPOT objective (as vllm bench serve's goodput
 * does). A response that does not stream is judged only by objectives that can judge it ({@link #judging}).
 */
public final class SloEvaluator {

    private SloEvaluator() {
    }

    public static SloVerdict evaluate(RequestResult r, List<Objective> objectives) {
        return evaluate(r, objectives, Set.of(429));
    }

    /** @param badClientStatuses upstream 4xx statuses that burn error budget (the others do not count) */
    public static SloVerdict evaluate(RequestResult r, List<Objective> applicable, Set<Integer> badClientStatuses) {
        List<Objective> objectives = judging(r, applicable);
        if (objectives.isEmpty()) {
            // reported as such: a request no objective judges is neither good nor bad in joint attainment
            return SloVerdict.excluded(SloVerdict.NO_OBJECTIVE);
        }
        if (r.outcome() == Outcome.CLIENT_CANCELLED) {
            return cancelled(r, objectives);
        }
        if (r.outcome() == Outcome.UPSTREAM_ERROR && r.status() >= 400 && r.status() < 500
                && !badClientStatuses.contains(r.status())) {
            return SloVerdict.excluded(SloVerdict.CLIENT_ERROR);
        }
        boolean completed = r.outcome() == Outcome.OK;
        boolean good = completed;
        List<SloVerdict.ObjectiveResult> results = new ArrayList<>(objectives.size());
        for (Objective o : objectives) {
            List<Criterion> violated = new ArrayList<>(1);
            if (!completed) {
                violated.add(Criterion.ERROR);
            } else {
                if (o.ttftNanos() >= 0 && (r.streaming() || o.ttftNonStreaming())
                        && (r.ttftNanos() < 0 || r.ttftNanos() > o.ttftNanos())) {
                    // a response that does not stream has no first token of its own (its TTFT is its E2E): a TTFT
                    // objective judges it only where the objective says so
                    violated.add(Criterion.TTFT);
                }
                if (o.tpotNanos() >= 0 && r.tpotNanos() > o.tpotNanos()) {
                    violated.add(Criterion.TPOT);
                }
                if (o.e2eNanos() >= 0 && r.e2eNanos() > o.e2eNanos()) {
                    violated.add(Criterion.E2E);
                }
                if (o.itlNanos() >= 0 && itlAbove(r.itl(), o.itlQuantile(), o.itlNanos())) {
                    violated.add(Criterion.ITL);
                }
            }
            good &= violated.isEmpty();
            results.add(new SloVerdict.ObjectiveResult(o, List.copyOf(violated)));
        }
        return new SloVerdict(good, List.copyOf(results));
    }

    /**
     * The objectives that can judge {@code r}: all of them for a stream; for a response that does not stream only
     * those with an E2E threshold, or a TTFT threshold that says it judges such responses (it has no first token of
     * its own, and no per-token timing for TPOT or ITL). An objective that cannot judge a request does not count it
     * at all, neither its success nor its failure: otherwise an unjudged success would flatter attainment.
     */
    static List<Objective> judging(RequestResult r, List<Objective> applicable) {
        if (r.streaming()) {
            return applicable;
        }
        List<Objective> judging = new ArrayList<>(applicable.size());
        for (Objective o : applicable) {
            if (o.e2eNanos() >= 0 || (o.ttftNanos() >= 0 && o.ttftNonStreaming())) {
                judging.add(o);
            }
        }
        return judging;
    }

    /** A cancelled request is bad only for what its wait had already broken; otherwise it does not count. */
    private static SloVerdict cancelled(RequestResult r, List<Objective> objectives) {
        List<SloVerdict.ObjectiveResult> results = new ArrayList<>(objectives.size());
        boolean broken = false;
        for (Objective o : objectives) {
            List<Criterion> violated = new ArrayList<>(1);
            long waited = r.ttftNanos() >= 0 ? r.ttftNanos() : r.e2eNanos();
            if (o.ttftNanos() >= 0 && (r.streaming() || o.ttftNonStreaming()) && waited > o.ttftNanos()) {
                violated.add(Criterion.TTFT);
            }
            if (o.e2eNanos() >= 0 && r.e2eNanos() > o.e2eNanos()) {
                violated.add(Criterion.E2E);
            }
            broken |= !violated.isEmpty();
            results.add(new SloVerdict.ObjectiveResult(o, List.copyOf(violated)));
        }
        return broken ? new SloVerdict(false, List.copyOf(results)) : SloVerdict.excluded(SloVerdict.CLIENT_CANCELLED);
    }

    /**
     * The request's token-weighted q-quantile of ITL (nearest rank) is above {@code nanos}: fewer than ceil(q * n) of
     * its n samples are at or under it. Exact, as the threshold is a bound of every stream's ITL buckets. False without
     * samples.
     */
    static boolean itlAbove(ItlSamples itl, double q, long nanos) {
        long total = itl.sampleCount();
        return total > 0 && itl.atOrUnder(nanos) < Math.max(1, (long) Math.ceil(q * total));
    }
}
