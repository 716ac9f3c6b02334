package dev.llmsidecar.measure;

import dev.llmsidecar.observe.RequestBytes;
import dev.llmsidecar.observe.RequestHead;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.wire.LlmOperation;

/**
 * A feature that follows LLM exchanges beside their metrics (the trace recorder): {@link TrafficRecorder} asks it
 * about every LLM exchange as it arrives, and the exchange's {@link ExchangeRecorder} hands what it returned the
 * request body and, at the end, the request's labels and result. Without one (the default) nothing is asked, kept or
 * allocated for it. Every call comes from the exchange's event loop: an implementation only takes what it needs and
 * leaves the work to its own thread.
 */
public interface ExchangeFollower {

    /**
     * An LLM exchange arrived.
     *
     * @param head valid during this call only
     * @return what follows this exchange, or null to leave it alone
     */
    Followed started(RequestHead head, LlmOperation operation, long receivedNanos);

    /** One followed exchange. */
    interface Followed {

        /**
         * The whole request body (see {@link dev.llmsidecar.observe.ExchangeObserver#requestBody}), valid during this
         * call only, with the bounded model label the request has so far.
         */
        void requestBody(RequestBytes body, String model);

        /**
         * Where the request sits in its conversation (sidecar.conversations), before {@link #finished}; never called
         * while that is off, or for a request with no conversation.
         *
         * @param conversation its conversation's number in this process, the same for each of its turns (not 0)
         * @param turn its turn, 1 for the first; 0 when unknown
         */
        default void conversation(int conversation, int turn) {
        }

        /** The exchange ended: once, after its result was recorded under {@code labels}. */
        void finished(RequestLabels labels, RequestResult result);
    }
}
