package dev.llmsidecar.timeline;

/**
 * Everything measured about one LLM request, computed once when it ended. Durations are nanoseconds from the
 * moment the sidecar received the request; -1 means "did not happen / not applicable".
 *
 * @param streaming the response was an event stream
 * @param ttftNanos time to first token-bearing chunk; for non-streaming responses, equal to e2e (labelled
 *     streaming="false")
 * @param firstResponseChunkNanos time to the first chunk of any kind (a role-only prelude counts), streaming only
 * @param firstReasoningNanos time to the first reasoning chunk
 * @param firstContentNanos time to the first content / tool-call chunk
 * @param e2eNanos to the last token chunk (successful streams with tokens), else to the end of the response
 * @param tpotNanos (e2e - ttft) / (outputTokens - 1), streaming with at least 2 tokens
 * @param upstreamHeadersNanos time until the upstream's response headers arrived
 * @param tokenChunks token-bearing chunks seen
 * @param serverTimings what the engine reported about its own queue and first-token time, or null
 * @param responseModel the model the response named (OTel {@code gen_ai.response.model}), or null
 * @param reasoningTokens output tokens the engine reported as reasoning (part of outputTokens), or -1
 * @param terminated the stream's end-of-stream marker arrived ([DONE], message_stop)
 * @param endSilenceNanos streaming: the engine's silence at the end, from the last token-bearing chunk (or, without
 *     one, from the arrival; or from the end of a client's pause after it) to the end, or to the pause when the client
 *     was pausing the stream as it ended; else -1
 * @param longestGapNanos streaming with a token: the longest silence after the first token, between two token chunks
 *     or, for a stream that did not complete, from the last one to the end; else -1
 * @param clamped the engine's numbers that were capped before use (none, nearly always)
 * @param clientStoppedReading cut because the client read nothing for the send timeout
 * @param clientPausedAtEnd the client was not taking bytes when the stream ended (the sidecar's writes were blocked)
 */
public record RequestResult(
        boolean streaming,
        Outcome outcome,
        int status,
        long ttftNanos,
        long firstResponseChunkNanos,
        long firstReasoningNanos,
        long firstContentNanos,
        long e2eNanos,
        long tpotNanos,
        long upstreamHeadersNanos,
        long outputTokens,
        TokenCountSource outputTokenSource,
        long promptTokens,
        long cachedTokens,
        String finishReason,
        int tokenChunks,
        int undecodableChunks,
        ItlSamples itl,
        dev.llmsidecar.wire.ServerTimings serverTimings,
        String responseModel,
        long reasoningTokens,
        boolean terminated,
        long endSilenceNanos,
        long longestGapNanos,
        java.util.Set<ClampedValue> clamped,
        boolean clientStoppedReading,
        boolean clientPausedAtEnd) {

    /** Builds a result by name: seven durations side by side must not be swappable by position. */
    public static Builder builder(boolean streaming, Outcome outcome, int status) {
        return new Builder(streaming, outcome, status);
    }

    /** Named setters for every component; anything not set is "did not happen" (-1, null, none). */
    public static final class Builder {
        private final boolean streaming;
        private final Outcome outcome;
        private final int status;
        private long ttftNanos = -1;
        private long firstResponseChunkNanos = -1;
        private long firstReasoningNanos = -1;
        private long firstContentNanos = -1;
        private long e2eNanos = -1;
        private long tpotNanos = -1;
        private long upstreamHeadersNanos = -1;
        private long outputTokens;
        private TokenCountSource outputTokenSource = TokenCountSource.NONE;
        private long promptTokens = -1;
        private long cachedTokens = -1;
        private String finishReason;
        private int tokenChunks;
        private int undecodableChunks;
        private ItlSamples itl = ItlSamples.NONE;
        private dev.llmsidecar.wire.ServerTimings serverTimings;
        private String responseModel;
        private long reasoningTokens = -1;
        private boolean terminated;
        private java.util.Set<ClampedValue> clamped = java.util.Set.of();
        private boolean clientStoppedReading;
        private boolean clientPausedAtEnd;
        private long endSilenceNanos = -1;
        private long longestGapNanos = -1;

        private Builder(boolean streaming, Outcome outcome, int status) {
            this.streaming = streaming;
            this.outcome = outcome;
            this.status = status;
        }

        public Builder ttft(long nanos) {
            this.ttftNanos = nanos;
            return this;
        }

        public Builder timeToFirstResponseChunk(long nanos) {
            this.firstResponseChunkNanos = nanos;
            return this;
        }

        public Builder firstReasoning(long nanos) {
            this.firstReasoningNanos = nanos;
            return this;
        }

        public Builder firstContent(long nanos) {
            this.firstContentNanos = nanos;
            return this;
        }

        public Builder e2e(long nanos) {
            this.e2eNanos = nanos;
            return this;
        }

        public Builder tpot(long nanos) {
            this.tpotNanos = nanos;
            return this;
        }

        public Builder upstreamHeaders(long nanos) {
            this.upstreamHeadersNanos = nanos;
            return this;
        }

        public Builder outputTokens(long tokens, TokenCountSource source) {
            this.outputTokens = tokens;
            this.outputTokenSource = source;
            return this;
        }

        public Builder promptTokens(long tokens, long cached) {
            this.promptTokens = tokens;
            this.cachedTokens = cached;
            return this;
        }

        public Builder finishReason(String reason) {
            this.finishReason = reason;
            return this;
        }

        public Builder chunks(int tokenChunks, int undecodableChunks) {
            this.tokenChunks = tokenChunks;
            this.undecodableChunks = undecodableChunks;
            return this;
        }

        public Builder itl(ItlSamples samples) {
            this.itl = samples;
            return this;
        }

        public Builder serverTimings(dev.llmsidecar.wire.ServerTimings timings) {
            this.serverTimings = timings;
            return this;
        }

        public Builder responseModel(String model) {
            this.responseModel = model;
            return this;
        }

        /** Reasoning tokens the engine reported, -1 when it did not. */
        public Builder reasoningTokens(long tokens) {
            this.reasoningTokens = tokens;
            return this;
        }

        /** The stream's end-of-stream marker arrived. */
        public Builder terminated(boolean terminated) {
            this.terminated = terminated;
            return this;
        }

        /** Silence at the end, and the longest silence after the first token (streaming), -1 when not. */
        public Builder silences(long endSilenceNanos, long longestGapNanos) {
            this.endSilenceNanos = endSilenceNanos;
            this.longestGapNanos = longestGapNanos;
            return this;
        }

        /** The engine's numbers capped before use. */
        public Builder clamped(java.util.Set<ClampedValue> clamped) {
            this.clamped = clamped;
            return this;
        }

        /** Cut because the client read nothing for the send timeout. */
        public Builder clientStoppedReading(boolean stopped) {
            this.clientStoppedReading = stopped;
            return this;
        }

        /** The client was not taking bytes when the stream ended. */
        public Builder clientPausedAtEnd(boolean paused) {
            this.clientPausedAtEnd = paused;
            return this;
        }

        public RequestResult build() {
            return new RequestResult(streaming, outcome, status, ttftNanos, firstResponseChunkNanos, firstReasoningNanos,
                    firstContentNanos, e2eNanos, tpotNanos, upstreamHeadersNanos, outputTokens, outputTokenSource,
                    promptTokens, cachedTokens, finishReason, tokenChunks, undecodableChunks, itl, serverTimings,
                    responseModel, reasoningTokens, terminated, endSilenceNanos, longestGapNanos, clamped,
                    clientStoppedReading, clientPausedAtEnd);
        }
    }

    /**
     * OTel {@code error.type} of a failed request: the HTTP error status the client got (the engine's, or the
     * sidecar's own 502/504), else the outcome (an error inside a 200 stream, a broken stream, a cancel).
     */
    public String errorType() {
        return outcome == Outcome.UPSTREAM_ERROR && status >= 400 ? Integer.toString(status) : outcome.label();
    }
}
