package dev.llmsidecar.wire;

import io.vertx.core.buffer.Buffer;

/**
 * One API wire format (OpenAI chat, Anthropic Messages, Ollama NDJSON, ...): how its request body names the
 * model and streaming, and how its response bytes become token events. One implementation per format; the
 * {@link LlmRoutes} table picks it by method and path.
 */
public interface WireFormat {

    /** Label value, e.g. {@code openai_chat}, {@code anthropic_messages}. */
    String name();

    /**
     * OTel {@code gen_ai.provider.name} when the format itself names the provider (Anthropic Messages); null for
     * APIs many servers speak (OpenAI-compatible, Ollama, TGI, llama.cpp), which use
     * {@code sidecar.otel.provider-name}.
     */
    default String providerName() {
        return null;
    }

    /**
     * Reads model and stream from a request body. Only a format that documents an edit (OpenAI include_usage)
     * describes one; the body itself is never changed here.
     */
    InspectedRequest inspect(Buffer body);

    /** True when a response of this content type is a token stream (sets the {@code streaming} label). */
    default boolean streamingResponse(String contentType) {
        return UpstreamResponse.isEventStream(contentType);
    }

    /** The decoder for a successful (2xx) response; never null, never throws on bad bytes later. */
    StreamDecoder decoder(TokenEventSink sink, UpstreamResponse response);
}
