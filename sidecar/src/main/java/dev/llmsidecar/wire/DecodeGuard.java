package dev.llmsidecar.wire;

import java.util.function.BooleanSupplier;

/**
 * How every decoder calls its format's handler: the handler reads bytes it may not understand, so a false
 * result or anything it throws counts as undecodable and never escapes to the event loop.
 */
final class DecodeGuard {

    private DecodeGuard() {
    }

    static void run(TokenEventSink sink, BooleanSupplier handler) {
        boolean decoded;
        try {
            decoded = handler.getAsBoolean();
        } catch (RuntimeException e) {
            decoded = false;
        }
        if (!decoded) {
            sink.onUndecodable();
        }
    }
}
