package dev.llmsidecar.timeline;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Which open streams are silent past their thresholds, read when the metrics are read (a scrape, an OTLP collection,
 * the live page) rather than by a timer per stream: each open stream keeps the stamp of its last sign of life
 * ({@link Stream}), and {@link #scan} reads the stamps into a {@link StallScan}.
 */
public final class StallWatch {

    /** Scans older than this are taken again: one scan serves every gauge of one scrape or collection. */
    private static final long SCAN_REUSE_NANOS = 200_000_000L;

    private final StallThresholds thresholds;
    private final LongSupplier clock;
    /** Streams in flight: added when their timeline starts, removed when they end. */
    private final Set<Stream> open = ConcurrentHashMap.newKeySet();
    private volatile StallScan lastScan;

    /**
     * @param thresholds when an open stream counts as stalled ({@code sidecar.stall.*})
     * @param clock the clock of the timelines' stamps ({@link System#nanoTime()} but in tests)
     */
    public StallWatch(StallThresholds thresholds, LongSupplier clock) {
        this.thresholds = thresholds;
        this.clock = clock;
    }

    /**
     * The open streams' silences now, or as of a scan taken less than 200 ms ago (the gauges of one scrape read the
     * same scan). Costs one pass over the open streams.
     */
    public StallScan scan() {
        long now = clock.getAsLong();
        StallScan last = lastScan;
        if (last != null && now - last.atNanos() >= 0 && now - last.atNanos() < SCAN_REUSE_NANOS) {
            return last;
        }
        StallScan scan = new StallScan(thresholds, now);
        for (Stream s : open) {
            boolean paused = s.pausedByClient;
            boolean tokenSeen = s.tokenSeen;
            long since = s.sinceNanos;
            scan.add(s.model, tokenSeen, since, paused);
        }
        lastScan = scan;
        return scan;
    }

    /**
     * A request's stamps for the watch, as its timeline's listener (which extends this) hears them: open from its
     * start to its end when it streams. A token costs one volatile write, nothing else.
     */
    public abstract static class Stream implements RequestTimeline.LiveListener {

        /** Null for a response that does not stream: never open. */
        private final StallWatch watch;
        private final String model;
        private boolean open;
        /** The arrival, then the last token chunk: written on the request's loop, read by the scan. */
        private volatile long sinceNanos;
        /** Written after {@link #sinceNanos}, so a scan that sees it true sees the token's stamp. */
        private volatile boolean tokenSeen;
        /** The client is not taking bytes; cleared after {@link #sinceNanos} moved to the pause's end. */
        private volatile boolean pausedByClient;

        /**
         * @param watch the watch of the open streams, or null when the response does not stream
         * @param model the model label the scan counts the stream under
         */
        protected Stream(StallWatch watch, String model) {
            this.watch = watch;
            this.model = model;
        }

        @Override
        public void onStart(long startNanos) {
            if (watch != null && !open) {
                sinceNanos = startNanos;
                open = true;
                watch.open.add(this);
            }
        }

        @Override
        public void onClientPaused(long nanos) {
            pausedByClient = true;
        }

        @Override
        public void onClientResumed(long nanos) {
            // the engine's silence counts again from here, not from before the pause
            sinceNanos = Math.max(sinceNanos, nanos);
            pausedByClient = false;
        }

        @Override
        public void onToken(long nanos) {
            sinceNanos = nanos;
            if (!tokenSeen) {
                tokenSeen = true;
            }
        }

        @Override
        public void onEnd() {
            if (open) {
                open = false;
                watch.open.remove(this);
            }
        }
    }
}
