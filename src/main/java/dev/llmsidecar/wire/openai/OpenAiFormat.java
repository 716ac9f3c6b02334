package dev.llmsidecar.wire.openai;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.WireFormat;
import io.vertx.core.buffer.Buffer;

/**
 * OpenAI chat completions and text completions (also what vLLM, SGLang, llama.cpp and Ollama serve under
 * /v1): SSE chunks with {@code choices[].delta}, or one JSON body. The only format with a request edit
 * (include_usage injection) and a response edit (removal of the injected usage chunk).
 */
public final class OpenAiFormat implements WireFormat {

    private final String name;
    private final OpenAiRequestInspector inspector;
    private final OpenAiChunkParser parser;

    public OpenAiFormat(String name, JsonFactory json) {
        this.name = name;
        this.inspector = new OpenAiRequestInspector(json);
        this.parser = new OpenAiChunkParser(json);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public InspectedRequest inspect(Buffer body, boolean injectUsage) {
        return inspector.inspect(body, injectUsage);
    }

    @Override
    public StreamDecoder decoder(TokenEventSink sink, UpstreamResponse response) {
        if (response.eventStream()) {
            return new OpenAiSseDecoder(sink, parser, response.usageInjected() && !response.hasLength(),
                    response.maxHeldEventBytes());
        }
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
