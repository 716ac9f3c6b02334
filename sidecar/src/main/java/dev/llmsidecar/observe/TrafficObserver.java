package dev.llmsidecar.observe;

import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy.Resend;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy.UsageKept;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy.UsageSkip;

/**
 * The one interface through which the data path reports what it sees and does: the seam between the proxy and
 * everything that measures it (timelines, SLO verdicts, metrics, spans). The proxy knows nothing of how what it
 * reports is recorded; an implementation knows nothing of sockets. One per sidecar, called from every event loop.
 */
public interface TrafficObserver {

    /**
     * A request arrived at {@code receivedNanos} ({@link System#nanoTime()}).
     *
     * @param operation the LLM call it is, or null for a path that is not an LLM API (forwarded, only counted)
     */
    ExchangeObserver exchangeStarted(RequestHead head, LlmOperation operation, long receivedNanos);

    /** A request answered by the sidecar itself before any exchange started (shutting down). */
    void refused(boolean llmRoute, int status);

    // ---- what the proxy did to keep traffic flowing and bytes exact ----

    /** An LLM request body was not read for its model (reason: {@code not_json}, {@code too_large}). */
    void bodyNotInspected(String reason);

    /** The sidecar turned stream_options.include_usage on for a request. */
    void usageInjected();

    /** A streaming request without include_usage was left as it was. */
    void usageSkipped(UsageSkip reason);

    /** What was removed from an injected stream. */
    void usageRemoved(int chunks, int members);

    /** A Content-Length stream from which usage was removed went to the client chunked. */
    void usageReframed();

    /** Usage the sidecar asked for reached the client. */
    void usageNotRemoved(UsageKept reason);

    /** A request was sent once more on a new upstream connection: the reused one closed before responding. */
    void retriedClosedBeforeResponse();

    /** The client's own request was sent in place of the one with include_usage turned on. */
    void retriedWithoutInjection(Resend why);

    /** A pooled upstream connection was closed when taken, idle for the keep-alive timeout or longer. */
    void idleConnectionRetired();

    /** A request body over the cap: declared by Content-Length, or grown past it while streaming. */
    void bodyTooLarge(boolean declared);

    /** A connection failed outside an exchange's own handling. */
    void connectionError(Peer peer);

    /** A successful LLM response was forwarded without decoding: a content coding the sidecar does not read. */
    void notDecodedForEncoding();
}
