package dev.llmsidecar.window;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * A few counts per key over several sliding windows, rotated lazily against an injected clock. Time is cut into
 * slices of a sixth of the shortest window, counted from construction; a window is its current, partly filled slice
 * plus the ones before it. A count divided by the window's nominal length would understate a rate twice over: while
 * the sidecar has run for less than the window, and by up to a slice once it has. So every read also says how long
 * each window has observed ({@link #observedNanos}): from the start of its oldest slice, or from construction while
 * the window is not yet full.
 */
public final class SlidingCounts {

    private static final int SLICES_PER_SHORTEST = 6;

    private final LongSupplier clock;
    private final long origin;
    private final long sliceNanos;
    private final int slices;
    private final int quantities;
    private final List<Duration> windows;
    private final Map<String, Ring> rings = new ConcurrentHashMap<>();

    /** @param quantities how many counts are kept side by side per key */
    public SlidingCounts(LongSupplier nanoClock, List<Duration> windows, int quantities) {
        if (windows.isEmpty() || quantities < 1) {
            throw new IllegalArgumentException("windows and quantities needed: " + windows + ", " + quantities);
        }
        this.clock = nanoClock;
        this.origin = nanoClock.getAsLong();
        this.windows = windows.stream().sorted().distinct().toList();
        this.sliceNanos = Math.max(1, this.windows.get(0).toNanos() / SLICES_PER_SHORTEST);
        this.slices = (int) slicesIn(this.windows.get(this.windows.size() - 1)) + 1;
        this.quantities = quantities;
    }

    /** The windows, shortest first. */
    public List<Duration> windows() {
        return windows;
    }

    /** The clock reading to pass to the reads, so that several of them describe one instant. */
    public long now() {
        return clock.getAsLong();
    }

    /** Adds {@code deltas} (one per quantity) to {@code key}'s counts now. */
    public void add(String key, long... deltas) {
        if (deltas.length != quantities) {
            throw new IllegalArgumentException(quantities + " deltas expected, got " + deltas.length);
        }
        rings.computeIfAbsent(key, k -> new Ring()).add(index(clock.getAsLong()), deltas);
    }

    /** key -> window -> counts (one per quantity) at {@code now}; keys sorted. */
    public Map<String, Map<Duration, long[]>> counts(long now) {
        long current = index(now);
        Map<String, Map<Duration, long[]>> out = new TreeMap<>();
        rings.forEach((key, ring) -> {
            Map<Duration, long[]> perWindow = new TreeMap<>();
            for (Duration w : windows) {
                perWindow.put(w, ring.sum(current - slicesIn(w) + 1, current));
            }
            out.put(key, perWindow);
        });
        return out;
    }

    /**
     * How much of a window has been observed.
     *
     * @param observedNanos the time its counts were taken over, the divisor of a rate: while the counts are younger
     *     than the window, their age; after that, the window to within one slice
     * @param covers the share of the window the counts have been kept for, 1 once they are older than it
     */
    public record Coverage(long observedNanos, double covers) {
    }

    /** How much of {@code window} has been observed at {@code now}. */
    public Coverage coverage(Duration window, long now) {
        return new Coverage(observedNanos(window, now), Math.min(1, (now - origin) / (double) window.toNanos()));
    }

    /** {@link Coverage#observedNanos()} of {@code window} at {@code now}. */
    public long observedNanos(Duration window, long now) {
        long oldestStart = origin + (index(now) - slicesIn(window) + 1) * sliceNanos;
        return now - Math.max(origin, oldestStart);
    }

    /** {@code count} per second of {@code nanos}; NaN over no time at all. */
    public static double perSecond(long count, long nanos) {
        return nanos <= 0 ? Double.NaN : count * 1e9 / nanos;
    }

    private long slicesIn(Duration window) {
        return Math.max(1, window.toNanos() / sliceNanos);
    }

    private long index(long now) {
        return Math.floorDiv(now - origin, sliceNanos);
    }

    private final class Ring {
        private final long[][] counts = new long[slices][quantities];
        private final long[] sliceIndex = new long[slices];

        Ring() {
            Arrays.fill(sliceIndex, Long.MIN_VALUE);
        }

        synchronized void add(long index, long[] deltas) {
            int i = (int) Math.floorMod(index, (long) slices);
            if (sliceIndex[i] != index) {
                sliceIndex[i] = index;
                Arrays.fill(counts[i], 0);
            }
            for (int q = 0; q < quantities; q++) {
                counts[i][q] += deltas[q];
            }
        }

        synchronized long[] sum(long oldest, long current) {
            long[] total = new long[quantities];
            for (int i = 0; i < slices; i++) {
                if (sliceIndex[i] >= oldest && sliceIndex[i] <= current) {
                    for (int q = 0; q < quantities; q++) {
                        total[q] += counts[i][q];
                    }
                }
            }
            return total;
        }
    }
}
