package dev.llmsidecar.measure;

import dev.llmsidecar.slo.DeclaredTargets;
import dev.llmsidecar.slo.DeclaredTrust;
import dev.llmsidecar.slo.GoodputWindows;
import dev.llmsidecar.slo.Objective;
import dev.llmsidecar.slo.SloEvaluator;
import dev.llmsidecar.slo.SloPolicy;
import dev.llmsidecar.slo.SloVerdict;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.wire.LlmOperation;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Where an LLM request's measurements go: latency and token series, the SLO verdict (goodput, attainment) and the
 * live windows. One place, so every exporter sees the same result and verdict; the series themselves go to every
 * backend through the metrics contract.
 */
public final class RequestReporter {

    private final LlmMetrics metrics;
    private final SloPolicy policy;
    private final DeclaredTrust trust;
    private final SloMetrics sloMetrics;
    private final GoodputWindows goodput;
    private final LiveWindows windows;
    private final TenantLabels tenants;
    private final PriorityLabels priorities;
    private final SaturationMetrics saturation;
    private final WorkMetrics work;

    public RequestReporter(LlmMetrics metrics, SloPolicy policy, DeclaredTrust trust, SloMetrics sloMetrics,
            GoodputWindows goodput, LiveWindows windows, TenantLabels tenants, PriorityLabels priorities,
            SaturationMetrics saturation, WorkMetrics work) {
        this.metrics = metrics;
        this.trust = trust;
        this.policy = policy;
        this.sloMetrics = sloMetrics;
        this.goodput = goodput;
        this.windows = windows;
        this.tenants = tenants;
        this.priorities = priorities;
        this.saturation = saturation;
        this.work = work;
    }

    /** Who a request is from, as its bounded tenant label. */
    public TenantLabels tenants() {
        return tenants;
    }

    /** A request's scheduling priority, as its bounded priority label. */
    public PriorityLabels priorities() {
        return priorities;
    }

    /**
     * The SLO targets a request declared in its headers (each value's handling counted), or null when it declared
     * none, or its caller may not declare (counted as refused): the configured objectives judge it.
     */
    public List<Objective> declaredObjectives(UnaryOperator<String> headers) {
        DeclaredTargets declared = policy.declared();
        if (!declared.declaresAny(headers)) {
            return null;
        }
        if (!trust.trusted(headers)) {
            declared.refuse(headers, sloMetrics);
            return null;
        }
        return declared.of(headers, sloMetrics);
    }

    /** Whose declarations count; its header never goes upstream. */
    public DeclaredTrust declaredTrust() {
        return trust;
    }

    public LlmMetrics metrics() {
        return metrics;
    }

    public SloPolicy policy() {
        return policy;
    }

    /**
     * Starts the live measurements of a request (in-flight and waiting gauges, TTFT and chunk gaps as they happen).
     * The listener also knows the request's load at arrival, which {@link #finished} takes.
     */
    public LlmMetrics.LiveRequest started(String modelLabel, String tenant, String priority, LlmOperation operation,
            boolean streaming) {
        return metrics.requestStarted(modelLabel, tenant, priority, operation.label(),
                operation.format().providerName(), streaming);
    }

    /**
     * @param modelName the model as the client named it (objectives match on it)
     * @param modelLabel its bounded label
     * @param declared the objectives the request declared ({@link #declaredObjectives}), or null: the configured ones
     *     for its model and class judge it
     * @param loadAtArrival LLM requests in flight when it started, itself included ({@link LlmMetrics.LiveRequest})
     */
    public SloVerdict finished(String modelName, String modelLabel, String tenant, String priority,
            LlmOperation operation, String sloClass, List<Objective> declared, int loadAtArrival,
            RequestResult result) {
        metrics.requestFinished(modelLabel, tenant, priority, operation.label(), operation.format().providerName(),
                operation.format().name(), result);
        SloVerdict verdict = SloEvaluator.evaluate(result, declared != null ? declared
                : policy.applicable(modelName, sloClass), policy.badClientStatuses());
        sloMetrics.record(modelLabel, sloClass, tenant, priority, result.outputTokens(), verdict);
        saturation.record(loadAtArrival, result);
        work.record(modelLabel, tenant, result, verdict);
        if (verdict.counted()) {
            goodput.record(modelLabel, sloClass, verdict.good(), result.outputTokens());
        }
        windows.record(modelLabel, result);
        return verdict;
    }
}
