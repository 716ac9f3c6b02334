package dev.llmsidecar.timeline;

import java.util.HashMap;
import java.util.Map;

/**
 * One reading of the open streams' silences, taken when the metrics are read (a scrape, an OTLP collection, the live
 * page) rather than by a timer per stream: each open stream is added with how long it has been silent, and the scan
 * tells, per model and phase, how many are past their threshold and the longest silence. Plain Java, no clock of its
 * own; confined to the thread that reads.
 */
public final class StallScan {

    private final StallThresholds thresholds;
    private final long atNanos;
    private final Map<String, long[]> byModel = new HashMap<>();
    private int stalled;

    /** @param atNanos when the scan was taken (the caller's clock) */
    public StallScan(StallThresholds thresholds, long atNanos) {
        this.thresholds = thresholds;
        this.atNanos = atNanos;
    }

    public long atNanos() {
        return atNanos;
    }

    /**
     * @param sinceNanos the stream's arrival, or its last token-bearing chunk once it has one (or the end of its
     *     client's last pause, if later)
     * @param tokenSeen it has had a token-bearing chunk
     * @param pausedByClient its client is not taking bytes now: the engine is paused by it, its silence is not a
     *     stall (counted apart, {@link #pausedByClient})
     */
    public void add(String model, boolean tokenSeen, long sinceNanos, boolean pausedByClient) {
        long[] v = byModel.computeIfAbsent(model, m -> new long[5]);
        if (pausedByClient) {
            v[4]++;
            return;
        }
        StreamPhase phase = StreamPhase.of(tokenSeen);
        long silence = Math.max(0, atNanos - sinceNanos);
        int i = phase.ordinal();
        if (thresholds.stalled(phase, silence)) {
            v[i]++;
            stalled++;
        }
        v[2 + i] = Math.max(v[2 + i], silence);
    }

    /** Open streams of {@code model} silent past their phase's threshold. */
    public long stalled(String model, StreamPhase phase) {
        long[] v = byModel.get(model);
        return v == null ? 0 : v[phase.ordinal()];
    }

    /** Open streams of {@code model} whose client is not taking bytes (in no stall count, no silence). */
    public long pausedByClient(String model) {
        long[] v = byModel.get(model);
        return v == null ? 0 : v[4];
    }

    /** Open streams silent past their threshold, every model and phase. */
    public int stalled() {
        return stalled;
    }

    /** The longest current silence of an open stream of {@code model} in {@code phase}, 0 when none is open. */
    public long longestSilenceNanos(String model, StreamPhase phase) {
        long[] v = byModel.get(model);
        return v == null ? 0 : v[2 + phase.ordinal()];
    }

    /** The longest current silence of any open stream in {@code phase}. */
    public long longestSilenceNanos(StreamPhase phase) {
        long longest = 0;
        for (long[] v : byModel.values()) {
            longest = Math.max(longest, v[2 + phase.ordinal()]);
        }
        return longest;
    }
}
