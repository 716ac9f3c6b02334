package dev.llmsidecar.slo;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Request and token counts (all / good) per model and SLO class over sliding windows, for the JSON endpoint.
 * Time is sliced (1/6 of the shortest window); slices rotate lazily against an injected clock.
 */
public final class GoodputWindows {

    /** Counts over one window. */
    public record Counts(long requests, long goodRequests, long outputTokens, long goodOutputTokens) {
        /** Good share of requests; NaN without requests. */
        public double attainment() {
            return requests == 0 ? Double.NaN : (double) goodRequests / requests;
        }
    }

    private final LongSupplier clock;
    private final long sliceNanos;
    private final int slices;
    private final List<Duration> windows;
    private final Map<String, Ring> rings = new ConcurrentHashMap<>();

    public GoodputWindows(LongSupplier nanoClock, List<Duration> windows) {
        this.clock = nanoClock;
        this.windows = windows.stream().sorted().toList();
        this.sliceNanos = Math.max(1, this.windows.get(0).toNanos() / 6);
        long longest = this.windows.get(this.windows.size() - 1).toNanos();
        this.slices = (int) Math.ceil((double) longest / sliceNanos) + 1;
    }

    public void record(String model, String sloClass, boolean good, long outputTokens) {
        rings.computeIfAbsent(model + '\0' + sloClass, k -> new Ring()).add(clock.getAsLong(), good, outputTokens);
    }

    /** model -> class -> window -> counts. */
    public Map<String, Map<String, Map<Duration, Counts>>> snapshot() {
        long now = clock.getAsLong();
        Map<String, Map<String, Map<Duration, Counts>>> out = new TreeMap<>();
        rings.forEach((key, ring) -> {
            int sep = key.indexOf('\0');
            Map<Duration, Counts> perWindow = new TreeMap<>();
            for (Duration w : windows) {
                perWindow.put(w, ring.sum(now, w.toNanos()));
            }
            out.computeIfAbsent(key.substring(0, sep), k -> new TreeMap<>()).put(key.substring(sep + 1), perWindow);
        });
        return out;
    }

    private final class Ring {
        private final long[][] counts = new long[slices][4];
        private final long[] sliceIndex = new long[slices];

        synchronized void add(long now, boolean good, long tokens) {
            long[] c = slot(now / sliceNanos);
            c[0]++;
            c[2] += tokens;
            if (good) {
                c[1]++;
                c[3] += tokens;
            }
        }

        private long[] slot(long index) {
            int i = (int) Math.floorMod(index, (long) slices);
            if (sliceIndex[i] != index) {
                sliceIndex[i] = index;
                java.util.Arrays.fill(counts[i], 0);
            }
            return counts[i];
        }

        synchronized Counts sum(long now, long windowNanos) {
            long current = now / sliceNanos;
            long oldest = current - windowNanos / sliceNanos + 1;
            long[] t = new long[4];
            for (int i = 0; i < slices; i++) {
                if (sliceIndex[i] >= oldest && sliceIndex[i] <= current) {
                    for (int k = 0; k < 4; k++) {
                        t[k] += counts[i][k];
                    }
                }
            }
            return new Counts(t[0], t[1], t[2], t[3]);
        }
    }
}
