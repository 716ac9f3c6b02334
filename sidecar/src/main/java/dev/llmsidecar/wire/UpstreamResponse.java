package dev.llmsidecar.wire;

import java.util.function.UnaryOperator;

/**
 * What a format needs to know about a response to pick and build its decoder.
 *
 * @param contentType the upstream Content-Type, or null
 * @param headers a header of the upstream response by name, or null (TGI reports its timings there)
 * @param hasLength the response has a Content-Length
 * @param maxHeldEventBytes largest SSE event held while stripping
 * @param maxBodyBytes largest non-streaming body copied aside for decoding
 */
public record UpstreamResponse(String contentType, UnaryOperator<String> headers, boolean hasLength,
        int maxHeldEventBytes, int maxBodyBytes) {

    public boolean eventStream() {
        return isEventStream(contentType);
    }

    public static boolean isEventStream(String contentType) {
        return contentType != null && contentType.regionMatches(true, 0, "text/event-stream", 0, 17);
    }

    /** Ollama streams {@code application/x-ndjson}; some servers say {@code application/jsonl}. */
    public static boolean isNdjson(String contentType) {
        return contentType != null && (contentType.regionMatches(true, 0, "application/x-ndjson", 0, 20)
                || contentType.regionMatches(true, 0, "application/jsonl", 0, 17));
    }

    /** A header value as a long, or -1. */
    public long longHeader(String name) {
        String v = headers == null ? null : headers.apply(name);
        if (v == null) {
            return -1;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
