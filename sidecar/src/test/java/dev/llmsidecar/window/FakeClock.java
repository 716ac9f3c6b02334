package dev.llmsidecar.window;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/** A nanosecond clock that only moves when a test says so. */
final class FakeClock implements LongSupplier {

    private final AtomicLong nanos;

    FakeClock() {
        this(1_000_000_000_000L);
    }

    FakeClock(long startNanos) {
        this.nanos = new AtomicLong(startNanos);
    }

    @Override
    public long getAsLong() {
        return nanos.get();
    }

    FakeClock advance(Duration duration) {
        nanos.addAndGet(duration.toNanos());
        return this;
    }
}
