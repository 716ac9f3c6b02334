package dev.llmsidecar.export;

import dev.llmsidecar.slo.GoodputWindows;
import dev.llmsidecar.slo.SloEvaluator;
import dev.llmsidecar.slo.SloPolicy;
import dev.llmsidecar.slo.SloVerdict;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.RequestTimeline;

/**
 * Where a finished LLM request goes: latency and token series, the SLO verdict (goodput, attainment) and the
 * live windows. One place, so every exporter sees the same result and verdict.
 */
public final class RequestReporter {

    private final LlmMetrics metrics;
    private final SloPolicy policy;
    private final SloMetrics sloMetrics;
    private final GoodputWindows goodput;
    private final LiveWindows windows;

    public RequestReporter(LlmMetrics metrics, SloPolicy policy, SloMetrics sloMetrics, GoodputWindows goodput,
            LiveWindows windows) {
        this.metrics = metrics;
        this.policy = policy;
        this.sloMetrics = sloMetrics;
        this.goodput = goodput;
        this.windows = windows;
    }

    public LlmMetrics metrics() {
        return metrics;
    }

    public SloPolicy policy() {
        return policy;
    }

    /**
     * @param modelName the model as the client named it (objectives match on it)
     * @param modelLabel its bounded label
     */
    public SloVerdict finished(String modelName, String modelLabel, String operation, String sloClass,
            RequestTimeline.LiveListener live, RequestResult result) {
        metrics.requestFinished(modelLabel, operation, live, result);
        SloVerdict verdict = SloEvaluator.evaluate(result, policy.applicable(modelName, sloClass));
        sloMetrics.record(modelLabel, sloClass, result.outputTokens(), verdict);
        goodput.record(modelLabel, sloClass, verdict.good(), result.outputTokens());
        windows.record(modelLabel, result);
        return verdict;
    }
}
