package dev.llmsidecar.window;

import java.time.Duration;
import java.util.Arrays;
import java.util.function.LongSupplier;

/**
 * A few running sums over one sliding window, in sixths of it (so the window covers between 5/6 and all of its
 * length, as {@link LatencyWindows}), rotated lazily against an injected clock. Synchronized: one add per finished
 * request, one read per scrape.
 */
public final class SlidingSums {

    private static final int SLICES = 6;

    private final LongSupplier clock;
    private final long sliceNanos;
    private final double[][] sums;
    private final long[] sliceIndex = new long[SLICES + 1];

    /** @param quantities how many sums are kept side by side */
    public SlidingSums(LongSupplier nanoClock, Duration window, int quantities) {
        if (window.toNanos() < SLICES) {
            throw new IllegalArgumentException("window too short: " + window);
        }
        this.clock = nanoClock;
        this.sliceNanos = window.toNanos() / SLICES;
        this.sums = new double[SLICES + 1][quantities];
        Arrays.fill(sliceIndex, Long.MIN_VALUE);
    }

    /** Adds {@code value} to sum {@code quantity} now. */
    public synchronized void add(int quantity, double value) {
        long index = Math.floorDiv(clock.getAsLong(), sliceNanos);
        int i = (int) Math.floorMod(index, (long) sums.length);
        if (sliceIndex[i] != index) {
            sliceIndex[i] = index;
            Arrays.fill(sums[i], 0);
        }
        sums[i][quantity] += value;
    }

    /** How long the window ending now covers: from the start of its oldest slice (5/6 to all of its length). */
    public long spanNanos() {
        long now = clock.getAsLong();
        long oldestStart = (Math.floorDiv(now, sliceNanos) - SLICES + 1) * sliceNanos;
        return now - oldestStart;
    }

    /** Sum {@code quantity} over the window ending now. */
    public synchronized double sum(int quantity) {
        long current = Math.floorDiv(clock.getAsLong(), sliceNanos);
        double total = 0;
        for (int i = 0; i < sums.length; i++) {
            if (sliceIndex[i] > current - SLICES && sliceIndex[i] <= current) {
                total += sums[i][quantity];
            }
        }
        return total;
    }
}
