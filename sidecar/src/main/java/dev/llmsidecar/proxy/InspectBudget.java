package dev.llmsidecar.proxy;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The one process-wide budget for request bodies held for inspection (sidecar.limits.inspect-budget): every byte
 * gathered, from its arrival until the exchange lets go of its last copy. Past it a body is piped to the engine
 * uninspected, as one over the inspection limit is: three clients that each send 15 MiB of a body and stop can no
 * longer hold what every other large request needs. Shared by all event loops.
 */
final class InspectBudget {

    private final long limit;
    private final AtomicLong used = new AtomicLong();

    InspectBudget(long limit) {
        this.limit = limit;
    }

    /** Takes {@code bytes} from the budget if they fit; false (nothing taken) if not. */
    boolean tryReserve(long bytes) {
        for (long u = used.get();; u = used.get()) {
            if (u + bytes > limit) {
                return false;
            }
            if (used.compareAndSet(u, u + bytes)) {
                return true;
            }
        }
    }

    void release(long bytes) {
        if (bytes > 0) {
            used.addAndGet(-bytes);
        }
    }

    long used() {
        return used.get();
    }

    long limit() {
        return limit;
    }
}
