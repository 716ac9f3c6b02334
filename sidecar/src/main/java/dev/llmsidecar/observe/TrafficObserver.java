package dev.llmsidecar.observe;

import dev.llmsidecar.wire.LlmOperation;

/**
 * The one interface through which the data path reports what it sees and does: the seam between the proxy and
 * everything that measures it (timelines, SLO verdicts, metrics, spans). The proxy knows nothing of how what it
 * reports is recorded; an implementation knows nothing of sockets. One per sidecar, called from every event loop.
 */
public interface TrafficObserver {

    /**
     * A request arrived at {@code receivedNanos} ({@link System#nanoTime()}).
     *
     * @param operation the LLM call it is, or null for a path that is not an LLM API (forwarded, only counted)
     */
    ExchangeObserver exchangeStarted(RequestHead head, LlmOperation operation, long receivedNanos);

    /** A request answered by the sidecar itself before any exchange started (shutting down). */
    void refused(boolean llmRoute, int status);

    /**
     * A request refused with 503 because the sidecar's memory is past its mark (never seen by the engine).
     *
     * @param operation the LLM call it was, or null for another path
     */
    default void shed(LlmOperation operation) {
        refused(operation != null, 503);
    }

    /**
     * What the proxy ({@link ProxyEvent}) or a feature (its own {@link TrafficEvent} enum) did to keep traffic flowing
     * and bytes exact, {@code n} times.
     */
    void count(TrafficEvent event, long n);

    /** What the proxy or a feature did, once. */
    default void count(TrafficEvent event) {
        count(event, 1);
    }
}
