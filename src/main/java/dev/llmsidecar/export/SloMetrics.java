package dev.llmsidecar.export;

import static dev.llmsidecar.export.contract.Contract.SLO_EXCLUDED;
import static dev.llmsidecar.export.contract.Contract.SLO_GOOD_OUTPUT_TOKENS;
import static dev.llmsidecar.export.contract.Contract.SLO_GOOD_REQUESTS;
import static dev.llmsidecar.export.contract.Contract.SLO_OBJECTIVE_GOOD_REQUESTS;
import static dev.llmsidecar.export.contract.Contract.SLO_OBJECTIVE_REQUESTS;
import static dev.llmsidecar.export.contract.Contract.SLO_OUTPUT_TOKENS;
import static dev.llmsidecar.export.contract.Contract.SLO_REQUESTS;
import static dev.llmsidecar.export.contract.Contract.SLO_TARGET;
import static dev.llmsidecar.export.contract.Contract.SLO_VIOLATIONS;

import dev.llmsidecar.export.contract.Recorders;
import dev.llmsidecar.slo.Criterion;
import dev.llmsidecar.slo.Objective;
import dev.llmsidecar.slo.SloVerdict;
import java.util.List;

/**
 * Goodput and SLO attainment as plain counters, so that Prometheus computes them exactly (independent of histogram
 * buckets): goodput = rate(good) / rate(requests), attainment per objective likewise. Declared in the metrics contract;
 * defined in docs/slo.md.
 */
public final class SloMetrics {

    private final Recorders recorders;

    public SloMetrics(Recorders recorders, List<Objective> objectives) {
        this.recorders = recorders;
        for (Objective o : objectives) {
            recorders.observe(SLO_TARGET, o::target, o.name());
        }
    }

    public void record(String model, String sloClass, String tenant, long outputTokens, SloVerdict verdict) {
        if (!verdict.counted()) {
            recorders.count(SLO_EXCLUDED, 1, model, sloClass, verdict.excludedReason());
            return;
        }
        long tokens = Math.max(0, outputTokens);
        recorders.count(SLO_REQUESTS, 1, model, sloClass, tenant);
        recorders.count(SLO_OUTPUT_TOKENS, tokens, model, sloClass, tenant);
        if (verdict.good()) {
            recorders.count(SLO_GOOD_REQUESTS, 1, model, sloClass, tenant);
            recorders.count(SLO_GOOD_OUTPUT_TOKENS, tokens, model, sloClass, tenant);
        }
        for (SloVerdict.ObjectiveResult r : verdict.objectives()) {
            String name = r.objective().name();
            recorders.count(SLO_OBJECTIVE_REQUESTS, 1, name, model, sloClass);
            if (r.met()) {
                recorders.count(SLO_OBJECTIVE_GOOD_REQUESTS, 1, name, model, sloClass);
            }
            for (Criterion c : r.violated()) {
                recorders.count(SLO_VIOLATIONS, 1, name, model, sloClass, c.label());
            }
        }
    }
}
