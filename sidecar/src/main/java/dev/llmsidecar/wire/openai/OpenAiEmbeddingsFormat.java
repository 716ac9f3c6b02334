package dev.llmsidecar.wire.openai;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.JsonWireFormat;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;

/**
 * OpenAI {@code /v1/embeddings}: never streamed. Timed as a non-streaming request; only input tokens
 * ({@code usage.prompt_tokens}) are counted, the vectors are skipped without being built.
 */
public final class OpenAiEmbeddingsFormat extends JsonWireFormat {

    private final OpenAiChunkParser parser;

    public OpenAiEmbeddingsFormat(JsonFactory json) {
        super("openai_embeddings", json, false);
        this.parser = new OpenAiChunkParser(json);
    }

    @Override
    public boolean streamingResponse(String contentType) {
        return false;
    }

    @Override
    protected JsonBodyDecoder.BodyHandler bodyHandler(TokenEventSink sink, UpstreamResponse response) {
        // the same body as a non-streaming chat completion: usage.prompt_tokens is all there is to read
        return OpenAiFormat.wholeBody(parser, sink);
    }
}
