package dev.llmsidecar.slo;

import java.util.List;

/**
 * The SLO judgement of one finished request.
 *
 * @param good completed successfully and met every applicable objective
 * @param objectives one entry per applicable objective
 * @param excludedReason why the request does not count toward the SLO at all (neither good nor bad: a client that
 *     cancelled before any objective was broken, a client error), or null when it counts
 */
public record SloVerdict(boolean good, List<ObjectiveResult> objectives, String excludedReason) {

    public static final String CLIENT_CANCELLED = "client_cancelled";
    public static final String CLIENT_ERROR = "client_error";
    public static final String NO_OBJECTIVE = "no_objective";

    public SloVerdict(boolean good, List<ObjectiveResult> objectives) {
        this(good, objectives, null);
    }

    static SloVerdict excluded(String reason) {
        return new SloVerdict(false, List.of(), reason);
    }

    /** True when the request counts toward the SLO (good or bad). */
    public boolean counted() {
        return excludedReason == null;
    }

    /** @param violated empty when met */
    public record ObjectiveResult(Objective objective, List<Criterion> violated) {
        public boolean met() {
            return violated.isEmpty();
        }
    }
}
