package dev.llmsidecar.wire;

import io.vertx.core.buffer.Buffer;

/**
 * What the sidecar learned from an LLM request body. The body itself is never changed here: a format that can ask
 * the engine for usage (OpenAI include_usage) describes the edit, and the proxy decides whether to make it.
 *
 * @param decodable the body was a JSON object
 * @param model the {@code model} member, or null
 * @param stream the request asks for a streamed response ({@code stream}, or the format's default)
 * @param usage what the request says about streamed usage
 * @param usageEdit the edit that turns include_usage on; non-null only when {@code usage} is {@link UsageRequest#ABSENT}
 * @param body the bytes the client sent
 */
public record InspectedRequest(boolean decodable, String model, boolean stream, UsageRequest usage, BodyEdit usageEdit,
        Buffer body) {

    /** A body that is not a JSON object: forwarded untouched, with the format's default for streaming. */
    public static InspectedRequest undecodable(boolean streamDefault, Buffer body) {
        return new InspectedRequest(false, null, streamDefault, UsageRequest.NOT_APPLICABLE, null, body);
    }

    /** The body with stream_options.include_usage turned on (only where {@link #usageEdit} is set). */
    public Buffer bodyWithUsage() {
        if (usageEdit == null) {
            throw new IllegalStateException("this request has no include_usage edit");
        }
        return usageEdit.applyTo(body);
    }
}
