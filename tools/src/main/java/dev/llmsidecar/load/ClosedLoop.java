package dev.llmsidecar.load;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

/**
 * Closed loop: a fixed number of streams, each sending its next request as soon as its last one ended, until the
 * source stops it. After a failed request a stream can pause, so that a failing target is not hammered. Runs on the
 * load client's context.
 */
public final class ClosedLoop {

    /** A stream's next request: completes with true when it succeeded; null stops the stream. */
    @FunctionalInterface
    public interface Source {
        Future<Boolean> next();
    }

    private final Vertx vertx;
    private final Source source;
    private final long retryDelayMs;
    private final Promise<Void> finished = Promise.promise();
    private int running;

    private ClosedLoop(Vertx vertx, Source source, long retryDelayMs) {
        this.vertx = vertx;
        this.source = source;
        this.retryDelayMs = retryDelayMs;
    }

    /**
     * Starts {@code streams} streams; call on the client's context.
     *
     * @param staggerMs the first requests spread evenly over this time (thousands of connects not in one burst)
     * @param retryDelayMs pause after a failed request (0: none)
     */
    public static ClosedLoop start(Vertx vertx, int streams, long staggerMs, long retryDelayMs, Source source) {
        ClosedLoop loop = new ClosedLoop(vertx, source, retryDelayMs);
        loop.running = streams;
        if (streams <= 0) {
            loop.finished.complete();
        }
        for (int i = 0; i < streams; i++) {
            long delay = staggerMs * i / streams;
            if (delay <= 0) {
                loop.stream();
            } else {
                vertx.setTimer(delay, id -> loop.stream());
            }
        }
        return loop;
    }

    /** Completes when every stream has stopped. */
    public Future<Void> finished() {
        return finished.future();
    }

    private void stream() {
        Future<Boolean> request = source.next();
        if (request == null) {
            if (--running == 0) {
                finished.complete();
            }
            return;
        }
        request.onComplete(ar -> {
            if (retryDelayMs <= 0 || ar.succeeded() && Boolean.TRUE.equals(ar.result())) {
                stream();
            } else {
                vertx.setTimer(retryDelayMs, id -> stream());
            }
        });
    }
}
