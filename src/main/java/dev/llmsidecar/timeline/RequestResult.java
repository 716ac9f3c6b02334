package dev.llmsidecar.timeline;

/**
 * Everything measured about one LLM request, computed once when it ended. Durations are nanoseconds from the
 * moment the sidecar received the request; -1 means "did not happen / not applicable".
 *
 * @param streaming the response was an event stream
 * @param ttftNanos time to first token-bearing chunk; for non-streaming responses, equal to e2e (labelled
 *     streaming="false")
 * @param ttfcNanos time to the first chunk of any kind (a role-only prelude counts), streaming only
 * @param firstReasoningNanos time to the first reasoning chunk
 * @param firstContentNanos time to the first content / tool-call chunk
 * @param e2eNanos to the last token chunk (successful streams with tokens), else to the end of the response
 * @param tpotNanos (e2e - ttft) / (outputTokens - 1), streaming with at least 2 tokens
 * @param upstreamHeadersNanos time until the upstream's response headers arrived
 * @param tokenChunks token-bearing chunks seen
 * @param serverTimings what the engine reported about its own queue and first-token time, or null
 */
public record RequestResult(
        boolean streaming,
        Outcome outcome,
        int status,
        long ttftNanos,
        long ttfcNanos,
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
        dev.llmsidecar.wire.ServerTimings serverTimings) {
}
