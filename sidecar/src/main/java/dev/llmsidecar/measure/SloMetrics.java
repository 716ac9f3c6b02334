package dev.llmsidecar.measure;

import static dev.llmsidecar.metrics.Contract.SLO_DECLARED_VALUES;
import static dev.llmsidecar.metrics.Contract.SLO_EXCLUDED;
import static dev.llmsidecar.metrics.Contract.SLO_GOOD_OUTPUT_TOKENS;
import static dev.llmsidecar.metrics.Contract.SLO_GOOD_REQUESTS;
import static dev.llmsidecar.metrics.Contract.SLO_OBJECTIVE_GOOD_REQUESTS;
import static dev.llmsidecar.metrics.Contract.SLO_OBJECTIVE_REQUESTS;
import static dev.llmsidecar.metrics.Contract.SLO_OUTPUT_TOKENS;
import static dev.llmsidecar.metrics.Contract.SLO_REQUESTS;
import static dev.llmsidecar.metrics.Contract.SLO_TARGET;
import static dev.llmsidecar.metrics.Contract.SLO_VIOLATIONS;
import static dev.llmsidecar.metrics.Label.CRITERION;
import static dev.llmsidecar.metrics.Label.HANDLING;
import static dev.llmsidecar.metrics.Label.OBJECTIVE;
import static dev.llmsidecar.metrics.Label.REASON;

import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.slo.Criterion;
import dev.llmsidecar.slo.DeclaredTargets;
import dev.llmsidecar.slo.Objective;
import dev.llmsidecar.slo.SloVerdict;
import java.util.List;

/**
 * Goodput and SLO attainment as plain counters, so that Prometheus computes them exactly (independent of histogram
 * buckets): goodput = rate(good) / rate(requests), attainment per objective likewise. Declared in the metrics contract;
 * defined in docs/slo.md.
 */
public final class SloMetrics implements DeclaredTargets.Counter {

    private final Recorders recorders;

    public SloMetrics(Recorders recorders, List<Objective> objectives) {
        this.recorders = recorders;
        for (Objective o : objectives) {
            recorders.observe(SLO_TARGET, o::target, LabelValues.of(OBJECTIVE, o.name()));
        }
    }

    /** Also exports the declared values' counter at 0 for each criterion and handling, when targets are declared. */
    public SloMetrics(Recorders recorders, List<Objective> objectives, boolean declared) {
        this(recorders, objectives);
        if (declared) {
            for (Criterion c : List.of(Criterion.TTFT, Criterion.TPOT)) {
                for (DeclaredTargets.Handling h : DeclaredTargets.Handling.values()) {
                    recorders.touch(SLO_DECLARED_VALUES, LabelValues.of(CRITERION, c.label()).and(HANDLING, h.label()));
                }
            }
        }
    }

    @Override
    public void declared(Criterion criterion, DeclaredTargets.Handling handling) {
        recorders.count(SLO_DECLARED_VALUES, 1, LabelValues.of(CRITERION, criterion.label())
                .and(HANDLING, handling.label()));
    }

    /** One finished request, with its labels and SLO verdict. */
    public void record(RequestLabels labels, long outputTokens, SloVerdict verdict) {
        if (!verdict.counted()) {
            recorders.count(SLO_EXCLUDED, 1, labels.of(SLO_EXCLUDED).and(REASON, verdict.excludedReason()));
            return;
        }
        long tokens = Math.max(0, outputTokens);
        // the four request counters share their labels, as do the objective counters but for the criterion
        LabelValues request = labels.of(SLO_REQUESTS);
        // good before all: a scrape between the two increments (event loop vs scrape thread) then sees one good
        // request too many for a moment, never one bad request too many, which over a new objective's first dozen
        // requests is enough for a burn-rate alert to go pending (measured under the demo: BurnRateSlow at 0.99)
        if (verdict.good()) {
            recorders.count(SLO_GOOD_REQUESTS, 1, request);
            recorders.count(SLO_GOOD_OUTPUT_TOKENS, tokens, request);
        }
        recorders.count(SLO_REQUESTS, 1, request);
        recorders.count(SLO_OUTPUT_TOKENS, tokens, request);
        LabelValues perObjective = labels.of(SLO_OBJECTIVE_REQUESTS);
        for (SloVerdict.ObjectiveResult r : verdict.objectives()) {
            LabelValues objective = perObjective.and(OBJECTIVE, r.objective().name());
            if (r.met()) {
                recorders.count(SLO_OBJECTIVE_GOOD_REQUESTS, 1, objective);
            }
            recorders.count(SLO_OBJECTIVE_REQUESTS, 1, objective);
            for (Criterion c : r.violated()) {
                recorders.count(SLO_VIOLATIONS, 1, objective.and(CRITERION, c.label()));
            }
        }
    }
}
