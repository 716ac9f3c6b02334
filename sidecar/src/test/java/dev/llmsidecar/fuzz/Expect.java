package dev.llmsidecar.fuzz;

import java.util.function.Supplier;

/** A check for the hot path of a fuzz target: no assertion objects built unless it fails (AssertJ costs executions). */
final class Expect {

    private Expect() {
    }

    static void that(boolean condition, Supplier<String> what) {
        if (!condition) {
            throw new AssertionError(what.get());
        }
    }
}
