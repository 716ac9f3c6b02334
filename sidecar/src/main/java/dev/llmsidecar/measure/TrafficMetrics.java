package dev.llmsidecar.measure;

import static dev.llmsidecar.metrics.Contract.CHUNK_WRITE_DELAY;
import static dev.llmsidecar.metrics.Contract.HTTP_REQUESTS;
import static dev.llmsidecar.metrics.Label.ROUTE;
import static dev.llmsidecar.metrics.Label.STATUS_CLASS;

import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import java.util.List;

/**
 * What is measured of every proxied request, LLM call or not: its count by route and status class, the delay of each
 * write to its client, and what the proxy did to keep traffic flowing and bytes exact ({@link ProxyCounters}).
 */
public final class TrafficMetrics {

    private static final double NS = 1e9;

    private final Recorders recorders;
    private final ProxyCounters proxy;
    private final Bound chunkWriteDelay;

    public TrafficMetrics(Recorders recorders) {
        this.recorders = recorders;
        this.proxy = new ProxyCounters(recorders);
        this.chunkWriteDelay = recorders.live(CHUNK_WRITE_DELAY, LabelValues.NONE);
        // every route and status class from the start: a dashboard shows 0 where nothing happened yet, not "No data"
        for (String route : List.of("llm", "other")) {
            for (String statusClass : List.of("2xx", "3xx", "4xx", "5xx", "none")) {
                recorders.touch(HTTP_REQUESTS, LabelValues.of(ROUTE, route).and(STATUS_CLASS, statusClass));
            }
        }
    }

    /** Counters of what the proxy did to keep traffic flowing and bytes exact. */
    public ProxyCounters proxy() {
        return proxy;
    }

    /** Arrival-to-written delay of one forwarded read. */
    public void chunkWritten(long delayNanos) {
        chunkWriteDelay.record(delayNanos / NS);
    }

    /** Every proxied request, LLM or not, by route kind and status class (e.g. "2xx", or "none" without response). */
    public void httpRequest(String route, String statusClass) {
        recorders.count(HTTP_REQUESTS, 1, LabelValues.of(ROUTE, route).and(STATUS_CLASS, statusClass));
    }
}
