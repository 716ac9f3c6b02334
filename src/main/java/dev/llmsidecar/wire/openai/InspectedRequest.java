package dev.llmsidecar.wire.openai;

import io.vertx.core.buffer.Buffer;

/**
 * What the sidecar learned from an LLM request body, and the body to send upstream.
 *
 * @param decodable the body was a JSON object
 * @param model the {@code model} member, or null
 * @param stream the {@code stream} member is true
 * @param clientAskedUsage the client set stream_options.include_usage=true itself
 * @param usageInjected the sidecar turned include_usage on; the usage-only chunk must be removed again
 * @param upstreamBody the bytes to send upstream (the original bytes unless usageInjected)
 */
public record InspectedRequest(boolean decodable, String model, boolean stream, boolean clientAskedUsage,
        boolean usageInjected, Buffer upstreamBody) {
}
