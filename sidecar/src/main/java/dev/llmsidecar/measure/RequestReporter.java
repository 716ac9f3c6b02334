package dev.llmsidecar.measure;

import dev.llmsidecar.conversation.Conversations;
import dev.llmsidecar.slo.DeclaredTargets;
import dev.llmsidecar.slo.DeclaredTrust;
import dev.llmsidecar.slo.GoodputWindows;
import dev.llmsidecar.slo.Objective;
import dev.llmsidecar.slo.SloEvaluator;
import dev.llmsidecar.slo.SloPolicy;
import dev.llmsidecar.slo.SloVerdict;
import dev.llmsidecar.timeline.ItlGrid;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.wire.LlmOperation;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Where an LLM request's measurements go: live and end-of-request series, the SLO verdict (goodput, attainment) and
 * the live windows, each given the request's labels whole. One place, so every exporter sees the same result and
 * verdict; the series themselves go to every backend through the metrics contract.
 */
public final class RequestReporter {

    private final LabelSources labels;
    private final TrafficMetrics traffic;
    private final LiveSeries live;
    private final EndSeries end;
    private final SloPolicy policy;
    private final DeclaredTrust trust;
    private final SloMetrics sloMetrics;
    private final GoodputWindows goodput;
    private final LiveWindows windows;
    private final SaturationMetrics saturation;
    private final WorkMetrics work;
    /** Conversations and agent loops, or null while sidecar.conversations.enabled is off. */
    private final Conversations conversations;

    /** @param conversations null while sidecar.conversations.enabled is off */
    public RequestReporter(LabelSources labels, TrafficMetrics traffic, LiveSeries live, EndSeries end,
            SloPolicy policy, DeclaredTrust trust, SloMetrics sloMetrics, GoodputWindows goodput, LiveWindows windows,
            SaturationMetrics saturation, WorkMetrics work, Conversations conversations) {
        this.conversations = conversations;
        this.labels = labels;
        this.traffic = traffic;
        this.live = live;
        this.end = end;
        this.policy = policy;
        this.trust = trust;
        this.sloMetrics = sloMetrics;
        this.goodput = goodput;
        this.windows = windows;
        this.saturation = saturation;
        this.work = work;
    }

    /** Where a request's label values come from (model, tenant, priority), each bounded. */
    public LabelSources labelSources() {
        return labels;
    }

    /** Conversations and agent loops, or null while they are off. */
    public Conversations conversations() {
        return conversations;
    }

    /** What is measured of every proxied request, LLM call or not. */
    public TrafficMetrics traffic() {
        return traffic;
    }

    /** The bucket layout of every stream's ITL samples. */
    public ItlGrid itlGrid() {
        return end.itlGrid();
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

    public SloPolicy policy() {
        return policy;
    }

    /**
     * Starts the live measurements of a request (in-flight and waiting gauges, TTFT and chunk gaps as they happen).
     * {@link #finished} takes what it returns.
     */
    public LiveRequest started(RequestLabels labels, boolean streaming) {
        return live.started(labels, streaming);
    }

    /**
     * @param request what {@link #started} returned: the request's labels and its load at arrival
     * @param modelName the model as the client named it (objectives match on it; its label is bounded)
     * @param declared the objectives the request declared ({@link #declaredObjectives}), or null: the configured ones
     *     for its model and class judge it
     */
    public SloVerdict finished(LiveRequest request, String modelName, List<Objective> declared,
            RequestResult result) {
        RequestLabels labels = request.labels();
        request.ended(result);
        end.record(labels, result);
        SloVerdict verdict = SloEvaluator.evaluate(result, declared != null ? declared
                : policy.applicable(modelName, labels.sloClass()), policy.badClientStatuses());
        sloMetrics.record(labels, result.outputTokens(), verdict);
        saturation.record(request.loadAtArrival(), result);
        work.record(labels, result, verdict);
        if (verdict.counted()) {
            goodput.record(labels.model(), labels.sloClass(), verdict.good(), result.outputTokens());
        }
        windows.record(labels, result);
        return verdict;
    }

    /** An LLM request shed with 503 before it reached the engine ({@link EndSeries#shed}). */
    public void shed(LlmOperation operation) {
        end.shed(labels.shed(operation));
    }
}
