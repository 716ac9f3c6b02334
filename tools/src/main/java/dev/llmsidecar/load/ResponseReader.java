package dev.llmsidecar.load;

import io.vertx.core.buffer.Buffer;

/**
 * What one request's response is read into ({@link LoadClient#send}); every call comes on the client's context, in
 * this order: {@link #sent}, {@link #status}, {@link #data} per network read, then {@link #end} exactly once (also
 * when the request never got a connection).
 */
public interface ResponseReader<R> {

    /** Just before the request is written (a connection was obtained). */
    default void sent(long nanos) {
    }

    /** The response head arrived. */
    default void status(int status) {
    }

    /** One read of the body, stamped when it was read. */
    void data(Buffer chunk, long nanos);

    /**
     * The exchange is over.
     *
     * @param failure null when the response ended; else {@code connection}, {@code timeout} or {@code cancelled}
     * @return what the send completes with
     */
    R end(String failure, long nanos);

    /** Reads nothing; completes with the outcome: {@code null} for a response with a 2xx status, else why not. */
    static ResponseReader<String> discarding() {
        return new AbstractResponseReader<>() {
            @Override
            public void data(Buffer chunk, long nanos) {
            }

            @Override
            public String end(String failure, long nanos) {
                return failure != null ? failure : statusCode() / 100 == 2 ? null : "http_" + statusCode();
            }
        };
    }
}
