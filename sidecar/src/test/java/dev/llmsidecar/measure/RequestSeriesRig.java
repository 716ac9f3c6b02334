package dev.llmsidecar.measure;

import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.StallThresholds;
import dev.llmsidecar.timeline.StallWatch;
import dev.llmsidecar.wire.LlmOperation;

/**
 * The series of LLM requests (in flight, live, at the end, and every proxied request's) driven as
 * {@link RequestReporter} drives them, without SLOs or windows: for tests of the series themselves.
 */
public final class RequestSeriesRig {

    public final TrafficMetrics traffic;
    public final InFlight inFlight;
    public final LiveSeries live;
    public final EndSeries end;

    public RequestSeriesRig(Recorders recorders, Upstream upstream) {
        StallThresholds stall = StallThresholds.DEFAULTS;
        this.traffic = new TrafficMetrics(recorders);
        this.inFlight = new InFlight(recorders, new StallWatch(stall, System::nanoTime));
        this.live = new LiveSeries(recorders, upstream, inFlight);
        this.end = new EndSeries(recorders, upstream, stall);
    }

    /** A chat request's labels as an OpenAI-format request gets them (provider openai), SLO class default. */
    public static RequestLabels labels(String model, String tenant, String priority) {
        return labels(model, tenant, priority, "chat", "openai_chat");
    }

    public static RequestLabels labels(String model, String tenant, String priority, String operation,
            String format) {
        return new RequestLabels(model, operation, "openai", format, tenant, priority, "default");
    }

    /** The labels {@link ExchangeRecorder} gives a request for {@code operation} while the priority label is off. */
    public static RequestLabels labels(LabelSources sources, String model, LlmOperation operation, String tenant,
            String sloClass) {
        return new RequestLabels(model, operation.label(), sources.provider(operation), operation.format().name(),
                tenant, PriorityLabels.OFF, sloClass);
    }

    public LiveRequest started(RequestLabels labels, boolean streaming) {
        return live.started(labels, streaming);
    }

    /** As {@link RequestReporter#finished} records the series: out of flight, then the end-of-request series. */
    public void finished(LiveRequest request, RequestResult result) {
        request.ended(result);
        end.record(request.labels(), result);
    }

    /** A request shed before its body was read, as the model {@code model}. */
    public void shed(String model, String operation, String format) {
        end.shed(RequestLabels.shed(model, operation, "openai", format));
    }
}
