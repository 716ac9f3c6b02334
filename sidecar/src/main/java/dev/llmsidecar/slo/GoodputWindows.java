package dev.llmsidecar.slo;

import dev.llmsidecar.window.SlidingCounts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * Request and token counts (all / good) per model and SLO class over sliding windows, for the JSON endpoint, with
 * the span each window has observed, so rates divide by the time they counted (see {@link SlidingCounts}).
 */
public final class GoodputWindows {

    /** Counts over one window, taken over {@code observedNanos}. */
    public record Counts(long requests, long goodRequests, long outputTokens, long goodOutputTokens,
            long observedNanos) {
        /** Good share of requests; NaN without requests. */
        public double attainment() {
            return requests == 0 ? Double.NaN : (double) goodRequests / requests;
        }

        public double goodRequestsPerSecond() {
            return SlidingCounts.perSecond(goodRequests, observedNanos);
        }

        public double goodTokensPerSecond() {
            return SlidingCounts.perSecond(goodOutputTokens, observedNanos);
        }
    }

    private final SlidingCounts counts;

    public GoodputWindows(LongSupplier nanoClock, List<Duration> windows) {
        this.counts = new SlidingCounts(nanoClock, windows, 4);
    }

    /** The windows, shortest first. */
    public List<Duration> windows() {
        return counts.windows();
    }

    public void record(String model, String sloClass, boolean good, long outputTokens) {
        counts.add(model + '\0' + sloClass, 1, good ? 1 : 0, outputTokens, good ? outputTokens : 0);
    }

    /** How much of each window has been observed now, shortest first. */
    public Map<Duration, SlidingCounts.Coverage> coverage() {
        long now = counts.now();
        Map<Duration, SlidingCounts.Coverage> out = new TreeMap<>();
        counts.windows().forEach(w -> out.put(w, counts.coverage(w, now)));
        return out;
    }

    /** model -> class -> window -> counts. */
    public Map<String, Map<String, Map<Duration, Counts>>> snapshot() {
        long now = counts.now();
        Map<String, Map<String, Map<Duration, Counts>>> out = new TreeMap<>();
        counts.counts(now).forEach((key, perWindow) -> {
            int sep = key.indexOf('\0');
            Map<Duration, Counts> windows = new TreeMap<>();
            perWindow.forEach((w, c) -> windows.put(w, new Counts(c[0], c[1], c[2], c[3], counts.observedNanos(w, now))));
            out.computeIfAbsent(key.substring(0, sep), k -> new TreeMap<>()).put(key.substring(sep + 1), windows);
        });
        return out;
    }
}
