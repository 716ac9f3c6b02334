package dev.llmsidecar.sweep;

/**
 * What the sweep's client saw of one streaming request, on its own clock ({@link System#nanoTime()}, one timestamp
 * per network read, as the sidecar and vllm bench serve stamp them). Kept so that one step can be compared with
 * {@code vllm bench serve}'s definitions; the sweep's results come from the sidecar's own metrics.
 *
 * @param sentNanos just before the request was written (vllm bench serve's {@code st})
 * @param firstChoicesNanos first SSE message with a non-empty {@code choices} (vllm bench serve's TTFT stop; a
 *     role-only chunk counts), or -1
 * @param firstTokenNanos first token-bearing chunk (content, reasoning or tool call: the sidecar's TTFT stop), or -1
 * @param lastTokenNanos last token-bearing chunk (the sidecar's E2E stop), or -1
 * @param lastMessageNanos last SSE data message before {@code [DONE]}, usage chunk included (vllm bench serve's E2EL
 *     stop), or -1
 * @param benchItl vllm bench serve's ITL list: the gaps between successive data messages after its first token
 * @param tokenChunkGaps gaps between successive token-bearing chunks (the sidecar's chunk gaps)
 * @param tokenChunks token-bearing chunks
 * @param completionTokens {@code usage.completion_tokens}, or -1 when not reported
 * @param promptTokens {@code usage.prompt_tokens}, or -1
 * @param endNanos when the response ended (or failed)
 * @param error null when the stream completed with {@code [DONE]}; else what went wrong ({@code http_503},
 *     {@code connection}, {@code timeout}, {@code incomplete}, {@code stream_error}, {@code cancelled})
 * @param measured sent after the step's warm-up (counts toward the step's client figures)
 */
public record RequestRecord(long sentNanos, long firstChoicesNanos, long firstTokenNanos, long lastTokenNanos,
        long lastMessageNanos, double[] benchItl, double[] tokenChunkGaps, int tokenChunks, int completionTokens,
        int promptTokens, long endNanos, String error, boolean measured) {

    public boolean ok() {
        return error == null;
    }

    /** Output tokens as vllm bench serve counts them: usage, else (it re-tokenizes) the token-bearing chunks. */
    public int outputTokens() {
        return completionTokens >= 0 ? completionTokens : tokenChunks;
    }

    /** vllm bench serve's TTFT, seconds (NaN when none). */
    public double benchTtft() {
        return firstChoicesNanos < 0 ? Double.NaN : (firstChoicesNanos - sentNanos) / 1e9;
    }

    /** vllm bench serve's E2EL, seconds. */
    public double benchE2el() {
        return lastMessageNanos < 0 ? Double.NaN : (lastMessageNanos - sentNanos) / 1e9;
    }

    /** vllm bench serve's TPOT: (E2EL - TTFT) / (output - 1) when output > 1, else 0 (it counts 0). */
    public double benchTpot() {
        int n = outputTokens();
        return n > 1 ? (benchE2el() - benchTtft()) / (n - 1) : 0;
    }

    /** The sidecar's TTFT definition on the client's clock, seconds. */
    public double ttft() {
        return firstTokenNanos < 0 ? Double.NaN : (firstTokenNanos - sentNanos) / 1e9;
    }

    /** The sidecar's E2E definition (last token-bearing chunk) on the client's clock, seconds. */
    public double e2e() {
        return lastTokenNanos < 0 ? Double.NaN : (lastTokenNanos - sentNanos) / 1e9;
    }

    /** The sidecar's TPOT definition on the client's clock: (last - first token chunk) / (N - 1), N >= 2; else NaN. */
    public double tpot() {
        int n = outputTokens();
        return n > 1 && firstTokenNanos >= 0 ? (lastTokenNanos - firstTokenNanos) / 1e9 / (n - 1) : Double.NaN;
    }
}
