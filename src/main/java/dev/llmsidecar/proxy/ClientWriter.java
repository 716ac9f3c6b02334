package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ExchangeObserver;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.impl.ConnectionBase;

/**
 * Writes forwarded bytes to the client and records how long each write took to reach the client's socket
 * ({@code llm_sidecar_chunk_write_delay_seconds}).
 *
 * <p>On HTTP/1.x a forwarded read is written without a completion promise: a promise per write costs Vert.x's
 * future, Netty's channel promise and, because a chunk leaves as three buffers (size line, data, CRLF), a promise
 * combiner with three more promises and their listener arrays, a fifth of the sidecar's garbage per streamed event.
 * Whether the write reached the socket is read off the channel instead: when nothing is left in its outbound buffer
 * after the write, the kernel has every byte. Only when a slow client leaves bytes queued does the writer follow
 * with an empty write that carries a listener; Netty completes writes in order, so that listener runs when the
 * data before it has reached the socket. HTTP/2 (which queues in its flow controller) keeps a promise per write.
 * (While Quarkus's idle timeout is on, Netty's IdleStateHandler turns the void promise back into a real one to
 * watch write completion, so the encoder still combines promises for the data write: the saving is the rest.)
 *
 * <p>Reading "delivered" off an empty outbound buffer assumes the write went straight into the pipeline, which holds
 * because every write to the client's connection is made on its event loop.
 */
final class ClientWriter {

    private final HttpServerResponse response;
    private final ExchangeObserver observer;
    /** The client's Netty channel on HTTP/1.x; null where writes are followed by their promises. */
    private final Channel channel;
    /** The last write's future, on the promise path only. */
    private Future<Void> lastWrite = Future.succeededFuture();

    ClientWriter(HttpServerRequest request, ExchangeObserver observer) {
        this.response = request.response();
        this.observer = observer;
        this.channel = http1Channel(request);
    }

    private static Channel http1Channel(HttpServerRequest request) {
        if (request.version() == HttpVersion.HTTP_2) {
            return null;
        }
        HttpConnection connection = request.connection();
        return connection instanceof ConnectionBase base ? base.channel() : null;
    }

    /** Writes the response head now (a streaming client sees the headers when the engine sends them). */
    void writeHead() {
        writeUntimed(Buffer.buffer(0));
    }

    /** Writes {@code data}; records the delay from {@code arrivedNanos} until it is on the client's socket. */
    void write(Buffer data, long arrivedNanos) {
        writeUntimed(data);
        if (channel == null) {
            if (lastWrite.succeeded()) {
                observer.written(arrivedNanos, System.nanoTime());
            } else {
                lastWrite.onSuccess(v -> observer.written(arrivedNanos, System.nanoTime()));
            }
            return;
        }
        if (!channel.isActive()) {
            return; // the client left: nothing was written, nothing to time
        }
        if (nothingQueued()) {
            observer.written(arrivedNanos, System.nanoTime());
        } else {
            response.write(Buffer.buffer(0), ar -> {
                if (ar.succeeded()) {
                    observer.written(arrivedNanos, System.nanoTime());
                }
            });
        }
    }

    /** Writes {@code data} without timing it (bytes that were held back, whose arrival is not one read's). */
    void writeUntimed(Buffer data) {
        if (channel == null) {
            lastWrite = response.write(data);
        } else {
            response.write(data, null);
        }
    }

    /**
     * Runs {@code action} once everything written so far has reached the client's socket (or failed), e.g. to
     * reset the connection only after the bytes received before an upstream fault are delivered.
     */
    void afterWritten(Handler<Void> action) {
        if (channel == null) {
            lastWrite.onComplete(v -> action.handle(null));
        } else if (!response.headWritten() || nothingQueued()) {
            action.handle(null);
        } else {
            response.write(Buffer.buffer(0), ar -> action.handle(null));
        }
    }

    private boolean nothingQueued() {
        ChannelOutboundBuffer queued = channel.unsafe().outboundBuffer();
        return queued == null || queued.totalPendingWriteBytes() == 0;
    }
}
