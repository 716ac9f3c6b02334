package dev.llmsidecar.window;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Latency percentiles over sliding time windows, recorded from many threads at once.
 *
 * <p>Time is cut into slices of fixed length, counted from the clock reading at construction. Finished slices
 * live in a ring of {@code longestWindow / slice} entries; samples of the current slice go into an HdrHistogram
 * {@link Recorder}, whose recording path is wait-free for any number of writers. Nothing runs on a timer: the
 * first recording or read that sees the clock past the current slice's end rotates the ring, emptying every
 * slice skipped by an idle gap, so tests can drive time with a fake clock.
 *
 * <p>A window of {@code k} slices is the current, partly filled slice plus the {@code k - 1} before it, so it
 * covers between {@code k - 1} and {@code k} slices of history: a sample leaves a window at the first slice
 * boundary at least one window length after it was recorded.
 *
 * <p>Values are nanoseconds, tracked from {@value #LOWEST_NANOS} ns (1 µs) to {@value #HIGHEST_NANOS} ns (1 h)
 * with 2 significant digits: a reported percentile is within 1 % of the true value (HdrHistogram reports the
 * top of the bucket, so it errs high, by at most 1/128 of the value from about 65 µs up; below, the resolution is
 * 512 ns). Three digits would cost 8x the memory (see below) for precision no dashboard needs; values outside
 * that range are clamped into it, never rejected, since recording runs on event loops where an exception would
 * hurt the request being measured.
 *
 * <p>Concurrency: {@link #record} takes no lock except in the one call per slice that first notices a slice
 * boundary, which rotates under this object's monitor (a drain of the recorder: a fraction of a millisecond).
 * Reads hold that monitor only to drain and copy slice references; they merge the immutable slices outside it,
 * so a writer never waits for a merge. A sample racing a rotation may be counted in the next slice; none is lost
 * or counted twice.
 *
 * <p>Memory: two fixed count arrays of about 25 KB (the recorder's active histogram and the spare one it swaps
 * with), plus 16 bytes per filled bucket per slice in the ring. Each {@link #snapshot(Collection)} allocates one
 * more 25 KB merge buffer; {@link LatencyWindows} shares one across its series instead. (With 3 significant digits
 * each array was 192 KB: about 400 KB per series, 80 MB at 50 models x 4 metrics.)
 */
public final class SlidingWindowHistogram {

    public static final long LOWEST_NANOS = 1_000L;
    public static final long HIGHEST_NANOS = 3_600_000_000_000L;
    public static final int SIGNIFICANT_DIGITS = 2;

    private final LongSupplier nanoClock;
    private final long sliceNanos;
    private final Duration slice;
    private final Duration longestWindow;
    private final long origin;
    private final Recorder recorder = new Recorder(LOWEST_NANOS, HIGHEST_NANOS, SIGNIFICANT_DIGITS);

    /** Clock reading at which the current slice ends; read without the lock by writers. */
    private volatile long currentSliceEnd;

    // Guarded by this.
    private final SliceCounts[] ring;
    private long currentIndex;
    /** The histogram outside the recorder, handed back to it at every drain so drains allocate nothing. */
    private Histogram spare;

    /**
     * @param nanoClock     monotonic nanosecond clock, e.g. {@code System::nanoTime}
     * @param slice         granularity of window movement
     * @param longestWindow longest window that can be read; a positive multiple of {@code slice}
     */
    public SlidingWindowHistogram(LongSupplier nanoClock, Duration slice, Duration longestWindow) {
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.sliceNanos = positiveNanos(slice, "slice");
        long slices = slicesIn(longestWindow, slice, longestWindow, "longestWindow");
        if (slices > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("too many slices in " + longestWindow + ": " + slices);
        }
        this.slice = slice;
        this.longestWindow = longestWindow;
        this.ring = new SliceCounts[(int) slices];
        Arrays.fill(ring, SliceCounts.EMPTY);
        this.origin = nanoClock.getAsLong();
        this.currentIndex = 0;
        this.currentSliceEnd = origin + sliceNanos;
    }

    public Duration slice() {
        return slice;
    }

    public Duration longestWindow() {
        return longestWindow;
    }

    /** Records one latency sample. */
    public void record(long nanos) {
        record(nanos, 1);
    }

    /** Records {@code count} samples of the same latency; a non-positive count records nothing. */
    public void record(long nanos, long count) {
        if (count <= 0) {
            return;
        }
        long now = nanoClock.getAsLong();
        // subtraction, not comparison, so the check survives nanoTime wrapping
        if (now - currentSliceEnd >= 0) {
            synchronized (this) {
                advanceTo(now);
            }
        }
        recorder.recordValueWithCount(clamp(nanos), count);
    }

    /** Stats of the last {@code window}, which must be a positive multiple of the slice, at most the longest. */
    public WindowStats snapshot(Duration window) {
        return snapshot(List.of(window)).get(window);
    }

    /**
     * Stats of several windows read at one instant; the result is unmodifiable and ordered by window length. Every
     * window must be a positive multiple of the slice, at most the longest.
     */
    public Map<Duration, WindowStats> snapshot(Collection<Duration> windows) {
        return snapshot(windows, newHistogram());
    }

    /**
     * As {@link #snapshot(Collection)}, merging in {@code buffer} (reset first; the caller keeps other threads off
     * it), so a caller reading many series needs one 25 KB buffer rather than one per read.
     */
    Map<Duration, WindowStats> snapshot(Collection<Duration> windows, Histogram buffer) {
        Objects.requireNonNull(windows, "windows");
        // shortest first, so one growing merge passes each window's length in turn
        TreeMap<Long, Duration> bySlices = new TreeMap<>();
        for (Duration window : new TreeSet<>(windows)) {
            bySlices.put(slicesIn(window, slice, longestWindow, "window"), window);
        }
        int longest = bySlices.isEmpty() ? 0 : bySlices.lastKey().intValue();
        SliceCounts[] newestFirst = new SliceCounts[longest];
        synchronized (this) {
            advanceTo(nanoClock.getAsLong());
            drainIntoCurrentSlice();
            for (int i = 0; i < longest; i++) {
                newestFirst[i] = ring[slot(currentIndex - i)];
            }
        }
        // slices are immutable: merge outside the lock, so a writer crossing a boundary never waits for it
        buffer.reset();
        TreeMap<Duration, WindowStats> result = new TreeMap<>();
        int merged = 0;
        for (Map.Entry<Long, Duration> wanted : bySlices.entrySet()) {
            for (; merged < wanted.getKey(); merged++) {
                newestFirst[merged].addTo(buffer);
            }
            result.put(wanted.getValue(), WindowStats.of(buffer));
        }
        return Collections.unmodifiableMap(result);
    }

    /** A histogram shaped like the recorded ones, for merging slices. */
    static Histogram newHistogram() {
        return new Histogram(LOWEST_NANOS, HIGHEST_NANOS, SIGNIFICANT_DIGITS);
    }

    /**
     * Checks a window against a slicing and returns its length in slices.
     *
     * @throws IllegalArgumentException unless the window is a positive multiple of the slice, at most the longest
     */
    static long slicesIn(Duration window, Duration slice, Duration longestWindow, String what) {
        long windowNanos = positiveNanos(window, what);
        if (window.compareTo(longestWindow) > 0) {
            throw new IllegalArgumentException(what + " " + window + " is longer than the longest window "
                    + longestWindow);
        }
        long sliceNanos = positiveNanos(slice, "slice");
        if (windowNanos % sliceNanos != 0) {
            throw new IllegalArgumentException(what + " " + window + " is not a multiple of the slice " + slice);
        }
        return windowNanos / sliceNanos;
    }

    private static long positiveNanos(Duration duration, String what) {
        Objects.requireNonNull(duration, what);
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(what + " must be positive: " + duration);
        }
        try {
            return duration.toNanos();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(what + " is too long: " + duration, e);
        }
    }

    /** Moves the ring to the slice holding {@code now}; caller holds the monitor. */
    private void advanceTo(long now) {
        long index = Math.floorDiv(now - origin, sliceNanos);
        if (index <= currentIndex) {
            return;
        }
        // samples recorded since the last drain belong to the slice being closed
        drainIntoCurrentSlice();
        long emptied = Math.min(index - currentIndex, ring.length);
        for (long i = 1; i <= emptied; i++) {
            ring[slot(currentIndex + i)] = SliceCounts.EMPTY;
        }
        currentIndex = index;
        currentSliceEnd = origin + (index + 1) * sliceNanos;
    }

    /** Moves the recorder's samples into the current slice; caller holds the monitor. */
    private void drainIntoCurrentSlice() {
        Histogram interval = recorder.getIntervalHistogram(spare);
        spare = interval;
        if (interval.getTotalCount() == 0) {
            return;
        }
        int slot = slot(currentIndex);
        ring[slot].addTo(interval);
        ring[slot] = SliceCounts.of(interval);
    }

    private int slot(long index) {
        return (int) Math.floorMod(index, (long) ring.length);
    }

    private static long clamp(long nanos) {
        return Math.max(LOWEST_NANOS, Math.min(HIGHEST_NANOS, nanos));
    }
}
