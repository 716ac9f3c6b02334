package dev.llmsidecar.observe;

import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.ConversationReader;
import dev.llmsidecar.wire.TokenEventSink;

/**
 * What the data path reports about one exchange, from arrival to end, in the order it happens; every call comes from
 * the exchange's event loop. A chunk costs the observer nothing beyond the token events the format's decoder reports
 * into the sink {@link #responseStarted} returned (and one {@link #written} per client write), so an implementation
 * keeps those paths allocation-free.
 */
public interface ExchangeObserver {

    /**
     * An LLM request body was read: the model as the client named it, whether it asked for a stream, and the
     * scheduling priority it asked for (vLLM's integer {@code priority}, null when it names none).
     */
    default void requestInspected(String model, boolean stream, Integer priority) {
    }

    /**
     * Where the request sits in its conversation, as its body says (sidecar.conversations.enabled, a chat format);
     * right after {@link #requestInspected}, never for a request whose body was not read for it.
     */
    default void conversationRead(ConversationReader.Conversation conversation) {
    }

    /**
     * The whole request body of an LLM call, as the client sent it, once it was inspected (bodies up to
     * sidecar.llm.max-inspected-body-bytes; a larger one passes uninspected and is never handed over). Valid only
     * during the call: an observer that keeps anything copies it (the trace recorder), one that does not costs
     * nothing.
     */
    default void requestBody(RequestBytes body) {
    }

    /** The request is on its way upstream: from now on it is in flight (and waiting for its first token). */
    default void requestSent() {
    }

    /** Adds what the upstream request carries for the observer (the trace context). */
    default void propagate(UpstreamHeaders upstream) {
    }

    /**
     * The response head arrived (the first byte from upstream). Returns where the format's decoder reports token
     * events; never null.
     *
     * @param streaming the response is a token stream (its content type says so)
     */
    default TokenEventSink responseStarted(int status, boolean streaming, long nanos) {
        return TokenEventSink.NONE;
    }

    /** A forwarded upstream read reached the client's socket. */
    default void written(long arrivedNanos, long writtenNanos) {
    }

    /**
     * The client's connection stopped taking bytes (the sidecar's writes to it are blocked, so it stopped reading the
     * engine): from {@code nanos} the stream is paused by the client, and its silence is not the engine's.
     */
    default void clientPaused(long nanos) {
    }

    /** The client's connection takes bytes again from {@code nanos} (after {@link #clientPaused}). */
    default void clientResumed(long nanos) {
    }

    /**
     * The client read nothing for sidecar.limits.send-timeout while the sidecar's writes to it were blocked: its
     * stream is being cut ({@link #ended} follows, as a cancel), the client's doing, not the engine's.
     */
    default void clientStoppedReading() {
    }

    /**
     * The exchange ended, whichever way (the response ended, the upstream failed, the client went away): once.
     *
     * @param status the status the client got, or 0 for none
     */
    void ended(Outcome outcome, int status, long nanos);
}
