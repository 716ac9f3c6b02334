package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.rewrite.Rewriter;

/**
 * What every exchange of one proxy port needs, given when it is made: the seam it reports to, the rewrite hook, where
 * requests go, the limits, and the server's own bookkeeping. Nothing in an exchange reaches into the server.
 *
 * @param maxRequestBodyBytes sidecar.proxy.max-request-body-bytes
 * @param maxInspectedBodyBytes sidecar.llm.max-inspected-body-bytes
 * @param maxHeldEventBytes sidecar.llm.max-held-event-bytes
 * @param upstreamIdleNanos sidecar.upstream.idle-timeout: the longest silence from upstream before an exchange fails
 * @param rawRelay sidecar.proxy.raw-relay
 * @param requestBodyTimeoutNanos sidecar.limits.request-body-timeout: the longest pause in a request body
 * @param sendTimeoutNanos sidecar.limits.send-timeout: the longest a client may leave the sidecar's writes blocked
 * @param inspectBudget sidecar.limits.inspect-budget: the bytes of request bodies held for inspection, all exchanges
 */
record ExchangeContext(TrafficObserver traffic, Rewriter rewriter, dev.llmsidecar.config.HttpTarget target, boolean preserveHost,
        long maxRequestBodyBytes, int maxInspectedBodyBytes, int maxHeldEventBytes, long upstreamIdleNanos,
        boolean rawRelay, long requestBodyTimeoutNanos, long sendTimeoutNanos, InspectBudget inspectBudget,
        Server server) {

    /** The shortest of the timeouts an exchange watches: its loop checks them a quarter of it apart. */
    long shortestTimeoutNanos() {
        return Math.min(upstreamIdleNanos, Math.min(requestBodyTimeoutNanos, sendTimeoutNanos));
    }

    /** The server's side of an exchange's life. */
    interface Server {
        /** Shutting down: new requests are refused, a response ends its connection. */
        boolean draining();

        /** Memory past its mark ({@link MemoryMark}): new requests are refused with 503, open ones go on. */
        default boolean shedding() {
            return false;
        }

        /** An exchange is in flight from now on. */
        void exchangeStarted();

        /** An exchange is out of flight (its response ended or its connection closed): once per exchange. */
        void exchangeEnded();

        /** Logs {@code message} at WARN the first time {@code kind} happens; later ones are counted, not logged. */
        void warnOnce(String kind, String message);

        /** A bug that cost one request (never the connection or the event loop). */
        void logBug(String message, Throwable t);
    }
}
