package dev.llmsidecar.timeline;

/**
 * Why an LLM request ended, one bounded value per way (docs/metrics.md, "How a request ended"): the
 * {@code end_reason} label of {@code llm_sidecar_requests_total}. Finer than {@link Outcome}, which the latency
 * histograms keep as it is.
 */
public enum EndReason {
    /** Ended with its finish reason or its end-of-stream marker (every non-streaming success). */
    COMPLETED("completed"),
    /** A 200 stream that ended cleanly without its end-of-stream marker and without a finish reason. */
    TRUNCATED("truncated"),
    /** The engine put an error object inside a 200 stream. */
    STREAM_ERROR("stream_error"),
    /** The engine answered with an error status (4xx/5xx head). */
    ERROR_STATUS("error_status"),
    /** No response head from upstream: unreachable, refused, reset or timed out before it (the sidecar's 502/504). */
    UPSTREAM_ERROR_BEFORE_HEAD("upstream_error_before_head"),
    /** The upstream connection broke or was cut after the head (mid-body). */
    UPSTREAM_ERROR_AFTER_HEAD("upstream_error_after_head"),
    /** The client went away before the first token-bearing chunk. */
    CLIENT_GONE_BEFORE_FIRST_TOKEN("client_gone_before_first_token"),
    /** The client went away after at least one token-bearing chunk. */
    CLIENT_GONE_MID_STREAM("client_gone_mid_stream"),
    /**
     * The client read nothing for sidecar.limits.send-timeout while the sidecar's writes to it were blocked: the
     * sidecar cut the stream (outcome client_cancelled). The engine was paused by the client, not stalled.
     */
    CLIENT_SEND_TIMEOUT("client_send_timeout"),
    /**
     * A stream that ended, without completing, while the engine had been silent past its phase's stall threshold (the
     * client gave up, or the idle timeout cut it). Never a stream its client was pausing: the silence the sidecar
     * measures is the engine's only while the client takes bytes.
     */
    STALLED("stalled"),
    /** Refused with 503 before it reached the engine: the sidecar's memory was past its mark (outcome shed). */
    SHED("shed");

    private final String label;

    EndReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** How {@code r} ended, its silence at the end judged by {@code stall}. */
    public static EndReason of(RequestResult r, StallThresholds stall) {
        boolean tokens = r.tokenChunks() > 0;
        if (r.outcome() == Outcome.OK) {
            return !r.streaming() || r.finishReason() != null || r.terminated() ? COMPLETED : TRUNCATED;
        }
        if (r.outcome() == Outcome.UPSTREAM_ERROR) {
            if (r.status() < 400) {
                return STREAM_ERROR; // the head said 200, the stream said error
            }
            if (r.upstreamHeadersNanos() >= 0) {
                return ERROR_STATUS;
            }
        }
        if (r.clientStoppedReading()) {
            return CLIENT_SEND_TIMEOUT; // silent because the client held the stream, not the engine
        }
        if (r.clientPausedAtEnd() && r.outcome() == Outcome.CLIENT_CANCELLED) {
            // it left while it was not reading: the client's ending, whatever the silence (never the engine's stall)
            return tokens ? CLIENT_GONE_MID_STREAM : CLIENT_GONE_BEFORE_FIRST_TOKEN;
        }
        // it did not complete: if it had been silent past its threshold, that is why
        if (r.streaming() && r.endSilenceNanos() >= 0
                && stall.stalled(StreamPhase.of(tokens), r.endSilenceNanos())) {
            return STALLED;
        }
        return switch (r.outcome()) {
            case CLIENT_CANCELLED -> tokens ? CLIENT_GONE_MID_STREAM : CLIENT_GONE_BEFORE_FIRST_TOKEN;
            case UPSTREAM_BROKEN -> UPSTREAM_ERROR_AFTER_HEAD;
            default -> UPSTREAM_ERROR_BEFORE_HEAD;
        };
    }
}
