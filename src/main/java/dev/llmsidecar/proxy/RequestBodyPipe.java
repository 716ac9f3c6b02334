package dev.llmsidecar.proxy;

import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpServerRequest;

/**
 * Streams the rest of a client's request body to the upstream request with backpressure (the client's read pauses
 * while the upstream write queue is full), counting bytes against the body cap: a body that grows past it stops
 * being read and forwarded, and the exchange answers 413. Vert.x's own {@code pipeTo} cannot count or stop midway.
 */
final class RequestBodyPipe {

    private RequestBodyPipe() {
    }

    /**
     * @param alreadySent bytes of the body already written upstream
     * @param cap largest body allowed
     * @param onTooLarge called (once, on the event loop) when the body passes the cap
     */
    static void start(HttpServerRequest from, HttpClientRequest to, long alreadySent, long cap, Runnable onTooLarge) {
        long[] sent = {alreadySent};
        from.handler(chunk -> {
            sent[0] += chunk.length();
            if (sent[0] > cap) {
                from.handler(null);
                from.endHandler(null);
                from.pause();
                onTooLarge.run();
                return;
            }
            to.write(chunk);
            if (to.writeQueueFull()) {
                from.pause();
                to.drainHandler(v -> from.resume());
            }
        });
        from.endHandler(v -> to.end());
        from.resume();
    }
}
