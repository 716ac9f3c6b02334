package dev.llmsidecar.wire.openai;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.RequestFields;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.WireFormat;
import io.vertx.core.buffer.Buffer;

/**
 * OpenAI {@code /v1/embeddings}: never streamed. Timed as a non-streaming request; only input tokens
 * ({@code usage.prompt_tokens}) are counted, the vectors are skipped without being built.
 */
public final class OpenAiEmbeddingsFormat implements WireFormat {

    private final RequestFields fields;
    private final OpenAiChunkParser parser;

    public OpenAiEmbeddingsFormat(JsonFactory json) {
        this.fields = new RequestFields(json);
        this.parser = new OpenAiChunkParser(json);
    }

    @Override
    public String name() {
        return "openai_embeddings";
    }

    @Override
    public InspectedRequest inspect(Buffer body, boolean injectUsage) {
        return fields.inspect(body, false);
    }

    @Override
    public boolean streamingResponse(String contentType) {
        return false;
    }

    @Override
    public StreamDecoder decoder(TokenEventSink sink, UpstreamResponse response) {
        return new JsonBodyDecoder(sink, (bytes, nanos) -> {
            OpenAiChunk body = parser.parse(bytes, 0, bytes.length);
            if (body == null) {
                return false;
            }
            body.reportTo(sink);
            return true;
        }, response.maxBodyBytes());
    }
}
