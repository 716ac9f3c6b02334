package dev.llmsidecar.proxy;

import java.util.concurrent.TimeoutException;

/**
 * When a request is sent upstream once more, and that it happens at most once: the keep-alive race (a reused
 * connection that closed before a single response byte: the engine never read the request; llama.cpp's server closes
 * every connection after a streamed response without saying so), only while the sidecar holds the whole body, never
 * after a response byte; and a rewrite's resend of the client's own request, which also spends the one second attempt.
 */
final class RetryRule {

    private boolean spent;

    /**
     * Whether the request goes again after its connection failed before any response: if so, the attempt is spent.
     *
     * @param whole the sidecar holds the whole body (or there is none)
     * @param reused the connection had carried an exchange before this one
     * @param nothingRead not a byte was read from it since this exchange started
     */
    boolean retryAfterClose(boolean whole, boolean reused, boolean nothingRead, Throwable cause) {
        if (spent || !whole || !reused || !nothingRead || cause instanceof TimeoutException) {
            return false;
        }
        spent = true;
        return true;
    }

    /** A rewrite sent the client's own request instead: no retry after it. */
    void resent() {
        spent = true;
    }
}
