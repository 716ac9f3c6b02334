package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.TrafficObserver;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * Connection failures outside an exchange's own handling (a peer resetting a keep-alive connection, a broken pipe):
 * counted per peer, never logged as ERROR (unhandled, Netty logs every one, "recvAddress(..) failed:
 * Connection reset by peer", which an SRE would page on). The first is logged at WARN with its cause, then at most
 * one WARN summary a minute while they keep coming.
 */
final class ConnectionErrors {

    private static final Logger LOG = Logger.getLogger(ConnectionErrors.class);
    private static final long SUMMARY_NANOS = 60_000_000_000L;

    private final TrafficObserver traffic;
    private final AtomicLong sinceSummary = new AtomicLong();
    private final AtomicLong lastSummaryNanos = new AtomicLong(System.nanoTime() - SUMMARY_NANOS);

    ConnectionErrors(TrafficObserver traffic) {
        this.traffic = traffic;
    }

    /** A connection of {@code peer} failed with {@code t}, outside an exchange's own handling. */
    void record(Peer peer, Throwable t) {
        traffic.count(peer.connectionError);
        long pending = sinceSummary.incrementAndGet();
        long now = System.nanoTime();
        long last = lastSummaryNanos.get();
        if (now - last >= SUMMARY_NANOS && lastSummaryNanos.compareAndSet(last, now)) {
            sinceSummary.addAndGet(-pending);
            LOG.warnf("%d connection error(s) in the last minute, the latest from the %s: %s (counted in "
                    + "llm_sidecar_connection_errors_total)", pending, peer.label, t.toString());
        }
    }
}
