package dev.llmsidecar.load;

import io.vertx.core.Context;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Open loop: requests at the times a schedule gives ({@link PoissonArrivals}), whether or not earlier ones finished,
 * so a target past its capacity builds a queue as under real traffic. A thread of its own sleeps until each arrival
 * (about 0.1 ms accurate, finer than Vert.x's millisecond timers) and hands it to the load client's context.
 */
public final class OpenLoop {

    private final Thread thread;
    private volatile boolean stopped;

    private OpenLoop(Context context, LongSupplier nextOffsetNanos, long startNanos, long durationNanos,
            Runnable onArrival, String name) {
        thread = new Thread(() -> {
            while (!stopped) {
                long offset = nextOffsetNanos.getAsLong();
                if (offset >= durationNanos) {
                    return;
                }
                long at = startNanos + offset;
                long wait;
                while ((wait = at - System.nanoTime()) > 0 && !stopped) {
                    LockSupport.parkNanos(Math.min(wait, 50_000_000L));
                }
                if (!stopped) {
                    context.runOnContext(v -> onArrival.run());
                }
            }
        }, name);
        thread.setDaemon(true);
    }

    /**
     * Starts the arrivals.
     *
     * @param nextOffsetNanos the next arrival's offset from {@code startNanos} (a {@link System#nanoTime()}),
     *     increasing
     * @param durationNanos no arrival at or after this offset ({@link Long#MAX_VALUE}: until {@link #stop})
     * @param onArrival runs on {@code context} at each arrival
     */
    public static OpenLoop start(Context context, LongSupplier nextOffsetNanos, long startNanos, long durationNanos,
            Runnable onArrival, String name) {
        OpenLoop loop = new OpenLoop(context, nextOffsetNanos, startNanos, durationNanos, onArrival, name);
        loop.thread.start();
        return loop;
    }

    /** No arrival after this call returns (one already handed to the context still runs). */
    public void stop() {
        stopped = true;
        thread.interrupt();
    }

    public void join(long millis) throws InterruptedException {
        thread.join(millis);
    }
}
