package dev.llmsidecar.testkit;

import java.time.Clock;
import java.time.Instant;

/**
 * The machine's two clocks side by side: {@link System#nanoTime()} (monotonic, shared by every process of the
 * machine) and the wall clock that spans carry. A span's start is the sidecar's monotonic stamp of the request,
 * turned into wall time the same way ({@code now - (nanoTime - stamp)}), so a test turns its own monotonic stamps
 * into wall time with this offset and compares them with a span's to within microseconds.
 */
public final class Clocks {

    private Clocks() {
    }

    /**
     * Wall-clock nanoseconds minus {@link System#nanoTime()}, from the closest-bracketed of 50 readings (a reading
     * preempted between its two monotonic reads is discarded by the next tighter one).
     */
    public static long wallMinusMonotonicNanos() {
        long best = Long.MAX_VALUE;
        long offset = 0;
        Clock utc = Clock.systemUTC();
        for (int i = 0; i < 50; i++) {
            long before = System.nanoTime();
            Instant wall = utc.instant();
            long after = System.nanoTime();
            if (after - before < best) {
                best = after - before;
                offset = wall.getEpochSecond() * 1_000_000_000L + wall.getNano() - (before + (after - before) / 2);
            }
        }
        return offset;
    }
}
