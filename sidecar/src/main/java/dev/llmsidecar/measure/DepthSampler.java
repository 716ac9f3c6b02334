package dev.llmsidecar.measure;

import dev.llmsidecar.metrics.Recorder.Bound;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The waiting depth as if sampled every {@value #STEP_MILLIS} ms, without a timer: the instants of a fixed grid are
 * recorded when the depth changes (each with the depth it had then) and when a reader asks ({@link #catchUp}: a
 * scrape, the five-second history tick), so the histogram stays time-weighted (a bucket's share is the share of time at
 * most that deep) and an idle sidecar does not wake four times a second to record zeros. Changes come from every event
 * loop, twice a request (it starts waiting; its first token or its end); the lock is taken for those.
 */
final class DepthSampler {

    static final long STEP_MILLIS = 250;
    private static final long STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(STEP_MILLIS);

    private final Bound histogram;
    private final LongSupplier clock;
    private long nextInstant;
    private volatile int depth;

    DepthSampler(Bound histogram, LongSupplier clock) {
        this.histogram = histogram;
        this.clock = clock;
        this.nextInstant = clock.getAsLong() + STEP_NANOS;
    }

    /** The depth now (the gauge). */
    int depth() {
        return depth;
    }

    synchronized void change(int delta) {
        record(clock.getAsLong());
        depth += delta;
    }

    /** Records every grid instant up to now. */
    synchronized void catchUp() {
        record(clock.getAsLong());
    }

    private void record(long now) {
        int d = depth;
        while (nextInstant - now <= 0) {
            histogram.record(d);
            nextInstant += STEP_NANOS;
        }
    }
}
