package dev.llmsidecar.wire;

/**
 * Token usage as reported by the server. A count the server did not report is -1.
 *
 * @param promptTokens input tokens
 * @param completionTokens output tokens (reasoning and tool-call tokens included, as servers count them)
 * @param cachedTokens prompt tokens served from the prefix cache
 */
public record Usage(long promptTokens, long completionTokens, long cachedTokens) {
    public static final Usage NONE = new Usage(-1, -1, -1);
}
