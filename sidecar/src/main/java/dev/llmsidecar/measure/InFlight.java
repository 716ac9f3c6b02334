package dev.llmsidecar.measure;

import static dev.llmsidecar.metrics.Contract.CLIENT_PAUSED_STREAMS;
import static dev.llmsidecar.metrics.Contract.IN_FLIGHT;
import static dev.llmsidecar.metrics.Contract.IN_FLIGHT_MAX;
import static dev.llmsidecar.metrics.Contract.LONGEST_SILENCE;
import static dev.llmsidecar.metrics.Contract.STALLED_STREAMS;
import static dev.llmsidecar.metrics.Contract.WAITING_DEPTH;
import static dev.llmsidecar.metrics.Contract.WAITING_FIRST_TOKEN;
import static dev.llmsidecar.metrics.Label.MODEL;
import static dev.llmsidecar.metrics.Label.STREAM_PHASE;

import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.timeline.StallScan;
import dev.llmsidecar.timeline.StallWatch;
import dev.llmsidecar.timeline.StreamPhase;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The LLM requests in flight, as gauges read when the metrics are read: how many, the most at once, how many wait for
 * their first token (and the time-weighted depth of that wait), and how many open streams are stalled or paused by
 * their client ({@link StallWatch}).
 */
public final class InFlight {

    private static final double NS = 1e9;

    private final Recorders recorders;
    private final AtomicInteger count = new AtomicInteger();
    private final AtomicInteger max = new AtomicInteger();
    private final DepthSampler waitingFirstToken;
    private volatile long lastEndNanos = System.nanoTime();
    private final StallWatch stalls;
    /** Models whose stall gauges are registered (at their first stream). */
    private final Set<String> stallModels = ConcurrentHashMap.newKeySet();

    public InFlight(Recorders recorders, StallWatch stalls) {
        this.recorders = recorders;
        this.stalls = stalls;
        recorders.observe(IN_FLIGHT, count::get);
        this.waitingFirstToken = new DepthSampler(recorders.live(WAITING_DEPTH, LabelValues.NONE), System::nanoTime);
        recorders.observe(WAITING_FIRST_TOKEN, waitingFirstToken::depth);
        recorders.observe(IN_FLIGHT_MAX, max::get);
    }

    /** A request started: in flight and waiting for its first token. Returns the requests in flight, itself included. */
    int arrived(String model, boolean streaming) {
        int load = count.incrementAndGet();
        max.accumulateAndGet(load, Math::max);
        waitingFirstToken.change(1);
        if (streaming && !stallModels.contains(model) && stallModels.add(model)) {
            registerStallGauges(model);
        }
        return load;
    }

    /** A request has its first token, or ended without one: once per request. */
    void stoppedWaiting() {
        waitingFirstToken.change(-1);
    }

    /** A request ended. */
    void left() {
        count.decrementAndGet();
        lastEndNanos = System.nanoTime();
    }

    /** The watch of the open streams, which each streaming request's listener stamps. */
    StallWatch stalls() {
        return stalls;
    }

    private void registerStallGauges(String model) {
        for (StreamPhase phase : StreamPhase.values()) {
            LabelValues v = LabelValues.of(MODEL, model).and(STREAM_PHASE, phase.label());
            recorders.observe(STALLED_STREAMS, () -> scan().stalled(model, phase), v);
            recorders.observe(LONGEST_SILENCE, () -> scan().longestSilenceNanos(model, phase) / NS, v);
        }
        recorders.observe(CLIENT_PAUSED_STREAMS, () -> scan().pausedByClient(model), LabelValues.of(MODEL, model));
    }

    /** The open streams' silences now, or as of a scan taken less than 200 ms ago ({@link StallWatch#scan}). */
    public StallScan scan() {
        return stalls.scan();
    }

    /**
     * Brings the waiting-depth histogram up to now (its fixed-period samples are recorded as the depth changes and
     * when read): before a scrape, and on the history tick, so that an exporter that reads on its own sees idle time.
     */
    public void sampleQueueDepth() {
        waitingFirstToken.catchUp();
    }

    /** LLM requests currently in flight. */
    public int count() {
        return count.get();
    }

    /** The most LLM requests in flight at once since start. */
    public int max() {
        return max.get();
    }

    /** LLM requests in flight that have no token yet. */
    public int waitingFirstToken() {
        return waitingFirstToken.depth();
    }

    /** When the last LLM request ended (or these gauges were made): what the live windows last changed by. */
    public long lastEndNanos() {
        return lastEndNanos;
    }
}
