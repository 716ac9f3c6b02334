package dev.llmsidecar.measure;

import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.observe.RequestHead;
import dev.llmsidecar.observe.TrafficEvent;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.otel.RequestTracing;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.LlmOperation;

/**
 * The sidecar's {@link TrafficObserver}: an LLM exchange is measured by an {@link ExchangeRecorder}, any other is
 * only counted, and what the proxy and the features did to keep traffic flowing goes to {@link ProxyCounters}. An
 * {@link ExchangeFollower}, when there is one, follows every LLM exchange beside the metrics.
 */
public final class TrafficRecorder implements TrafficObserver {

    private final RequestReporter reporter;
    private final RequestTracing tracing;
    private final TrafficMetrics metrics;
    private final ProxyCounters counters;
    /** What follows LLM exchanges beside the metrics (the trace recorder), or null: none. */
    private final ExchangeFollower follower;
    /** An exchange that is not an LLM call: counted by status, its writes timed. Stateless, so shared. */
    private final ExchangeObserver other;

    /** @param tracing the request tracing, naming the upstream ({@link RequestTracing#toUpstream}) */
    public TrafficRecorder(RequestReporter reporter, RequestTracing tracing) {
        this(reporter, tracing, null);
    }

    /** @param follower follows every LLM exchange beside the metrics (the trace recorder); null: none */
    public TrafficRecorder(RequestReporter reporter, RequestTracing tracing, ExchangeFollower follower) {
        this.reporter = reporter;
        this.follower = follower;
        this.tracing = tracing;
        this.metrics = reporter.traffic();
        this.counters = metrics.proxy();
        this.other = new ExchangeObserver() {
            @Override
            public void written(long arrivedNanos, long writtenNanos) {
                metrics.chunkWritten(writtenNanos - arrivedNanos);
            }

            @Override
            public void ended(Outcome outcome, int status, long nanos) {
                metrics.httpRequest("other", statusClass(status));
            }
        };
    }

    @Override
    public ExchangeObserver exchangeStarted(RequestHead head, LlmOperation operation, long receivedNanos) {
        if (operation == null) {
            return other;
        }
        return new ExchangeRecorder(reporter, tracing, head, operation, receivedNanos,
                follower == null ? null : follower.started(head, operation, receivedNanos));
    }

    @Override
    public void refused(boolean llmRoute, int status) {
        metrics.httpRequest(llmRoute ? "llm" : "other", statusClass(status));
    }

    @Override
    public void shed(LlmOperation operation) {
        refused(operation != null, 503);
        counters.count(ProxyEvent.REQUEST_SHED, 1);
        if (operation != null) {
            reporter.shed(operation);
        }
    }

    /** "2xx" … "5xx", or "none" when no response was given. */
    static String statusClass(int status) {
        return status <= 0 ? "none" : (status / 100) + "xx";
    }

    @Override
    public void count(TrafficEvent event, long n) {
        counters.count(event, n);
    }
}
