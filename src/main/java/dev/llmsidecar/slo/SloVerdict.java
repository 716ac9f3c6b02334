package dev.llmsidecar.slo;

import java.util.List;

/**
 * The SLO judgement of one finished request.
 *
 * @param good completed successfully and met every applicable objective
 * @param objectives one entry per applicable objective
 */
public record SloVerdict(boolean good, List<ObjectiveResult> objectives) {

    /** @param violated empty when met */
    public record ObjectiveResult(Objective objective, List<Criterion> violated) {
        public boolean met() {
            return violated.isEmpty();
        }
    }
}
