package dev.llmsidecar.support;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/** Bounded waits of the scraper tests: for a Vert.x future, and for a condition on a registry's series. */
public final class Waits {

    private Waits() {
    }

    /** The future's result within {@code timeout}. */
    public static <T> T await(Future<T> future, Duration timeout) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Polls {@code condition} every 10 ms for up to {@code timeout}; on timeout fails with the registry's series whose
     * names start with {@code prefix}, so the failure says what was there instead.
     */
    public static void eventually(PrometheusMeterRegistry registry, String prefix, Duration timeout, String what,
            BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what + "; " + prefix + " series now:\n"
                        + registry.scrape().lines().filter(l -> l.startsWith(prefix))
                                .collect(Collectors.joining("\n")));
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
