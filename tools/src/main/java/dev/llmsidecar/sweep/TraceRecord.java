package dev.llmsidecar.sweep;

/**
 * One request of a recorded trace (the sidecar's trace recorder, Mooncake's fields as AIPerf reads them): when it
 * arrived, its lengths, the blocks of its prompt, its session. Only what the replay uses is kept; every other field
 * of the line is the recorder's and is left alone (docs/sweep.md, "Trace format").
 *
 * @param timestampMs arrival, milliseconds from the file's first arrival
 * @param inputLength prompt tokens
 * @param outputLength output tokens (0 for a request that produced none; sent as max_tokens 1)
 * @param hashIds one id per 512-token block of the prompt, equal prefixes sharing equal leading ids; null when the
 *     line has none (the prompt is then unique)
 * @param sessionId the conversation it belongs to: its {@code conversation_id} (the sidecar's conversations), else its
 *     {@code session_id} (the session header); null when none
 * @param model the served model name it was recorded for; null when absent
 * @param outcome how it ended in production ({@code ok}, {@code upstream_error} ...); null when absent
 * @param e2eMs its end-to-end latency in production, ms ({@code e2e_ms}); NaN when absent
 * @param line its line number in the file (1-based), for messages
 */
public record TraceRecord(long timestampMs, int inputLength, int outputLength, long[] hashIds, String sessionId,
        String model, String outcome, double e2eMs, int line) {

    /** The block size hash ids stand for, in tokens (Mooncake's, and AIPerf's default --isl-block-size). */
    public static final int BLOCK_TOKENS = 512;

    /** How many block ids a prompt of {@code inputLength} tokens has: ceil(inputLength / 512). */
    public static int blocks(int inputLength) {
        return (inputLength + BLOCK_TOKENS - 1) / BLOCK_TOKENS;
    }

    /** The same request at another arrival time (a sampled window rebased, a thinned sample compressed). */
    TraceRecord at(long newTimestampMs) {
        return new TraceRecord(newTimestampMs, inputLength, outputLength, hashIds, sessionId, model, outcome, e2eMs,
                line);
    }
}
