package dev.llmsidecar.wire;

/**
 * Token usage as reported by the server. A count the server did not report is -1.
 *
 * @param promptTokens input tokens
 * @param completionTokens output tokens (reasoning and tool-call tokens included, as servers count them)
 * @param cachedTokens prompt tokens served from the prefix cache
 * @param reasoningTokens output tokens spent on reasoning (OpenAI {@code completion_tokens_details.reasoning_tokens},
 *     Responses {@code output_tokens_details.reasoning_tokens}); part of {@code completionTokens}
 */
public record Usage(long promptTokens, long completionTokens, long cachedTokens, long reasoningTokens) {
    public static final Usage NONE = new Usage(-1, -1, -1, -1);

    /** Usage from a server that reports no reasoning tokens. */
    public Usage(long promptTokens, long completionTokens, long cachedTokens) {
        this(promptTokens, completionTokens, cachedTokens, -1);
    }
}
