package dev.llmsidecar.load;

/**
 * A {@link ResponseReader} that keeps what every timed reader needs from the exchange's first two calls: when the
 * request was sent and the response's status.
 */
public abstract class AbstractResponseReader<R> implements ResponseReader<R> {

    private long sentNanos = -1;
    private int statusCode;

    @Override
    public void sent(long nanos) {
        sentNanos = nanos;
    }

    @Override
    public void status(int code) {
        statusCode = code;
    }

    /** When the request was written; -1 when it never got a connection. */
    protected long sentNanos() {
        return sentNanos;
    }

    /** The response's status; 0 before the head arrived (or when it never did). */
    protected int statusCode() {
        return statusCode;
    }
}
