package dev.llmsidecar.engine;

import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.WriteStream;
import io.vertx.ext.web.codec.BodyCodec;
import io.vertx.ext.web.codec.spi.BodyStream;
import java.nio.charset.StandardCharsets;

/**
 * A UTF-8 string body codec for one response that refuses to buffer more than {@code maxBytes}, and that can
 * be abandoned. Either makes the next write fail, which fails the WebClient request and resets its connection,
 * so a huge or endlessly dripping body costs at most {@code maxBytes} of memory and one more chunk of time.
 *
 * <p>Used from the scrape's event-loop context only.
 */
final class LimitedBodyCodec implements BodyCodec<String> {

    /** Why a body was refused; a message, never the body itself. */
    static final class BodyRefusedException extends RuntimeException {
        BodyRefusedException(String message) {
            super(message, null, false, false);
        }
    }

    private final int maxBytes;
    private boolean abandoned;

    LimitedBodyCodec(int maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** Stops accepting data: the scrape already gave up (deadline or stop). */
    void abandon() {
        abandoned = true;
    }

    @Override
    public void create(Handler<AsyncResult<BodyStream<String>>> handler) {
        handler.handle(Future.succeededFuture(new Stream()));
    }

    private final class Stream implements BodyStream<String> {
        private final Buffer body = Buffer.buffer();
        private final Promise<String> result = Promise.promise();

        @Override
        public Future<String> result() {
            return result.future();
        }

        @Override
        public void handle(Throwable failure) {
            result.tryFail(failure);
        }

        @Override
        public Future<Void> write(Buffer data) {
            if (abandoned) {
                return refuse("scrape abandoned");
            }
            if ((long) body.length() + data.length() > maxBytes) {
                return refuse("metrics body larger than " + maxBytes + " bytes");
            }
            body.appendBuffer(data);
            return Future.succeededFuture();
        }

        private Future<Void> refuse(String why) {
            BodyRefusedException failure = new BodyRefusedException(why);
            result.tryFail(failure); // first, so the end() that follows a failed pipe cannot complete it
            return Future.failedFuture(failure);
        }

        @Override
        public void write(Buffer data, Handler<AsyncResult<Void>> handler) {
            Future<Void> written = write(data);
            if (handler != null) {
                written.onComplete(handler);
            }
        }

        @Override
        public void end(Handler<AsyncResult<Void>> handler) {
            result.tryComplete(body.toString(StandardCharsets.UTF_8)); // malformed bytes decode to U+FFFD
            if (handler != null) {
                handler.handle(Future.succeededFuture());
            }
        }

        @Override
        public WriteStream<Buffer> exceptionHandler(Handler<Throwable> handler) {
            return this;
        }

        @Override
        public WriteStream<Buffer> setWriteQueueMaxSize(int maxSize) {
            return this;
        }

        @Override
        public boolean writeQueueFull() {
            return false;
        }

        @Override
        public WriteStream<Buffer> drainHandler(Handler<Void> handler) {
            return this;
        }
    }
}
