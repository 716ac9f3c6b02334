package dev.llmsidecar.wire.openai;

import dev.llmsidecar.wire.InspectedRequest;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.JsonWireFormat;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import com.fasterxml.jackson.core.JsonFactory;
import io.vertx.core.buffer.Buffer;

/**
 * OpenAI chat completions and text completions (also what vLLM, SGLang, llama.cpp and Ollama serve under
 * /v1): SSE chunks with {@code choices[].delta}, or one JSON body. The only format with a request edit
 * (include_usage injection) and a response edit (removal of the injected usage chunk).
 */
public final class OpenAiFormat extends JsonWireFormat {

    private final OpenAiRequestInspector inspector;
    private final OpenAiChunkParser parser;

    public OpenAiFormat(String name, JsonFactory json) {
        super(name, json, false);
        this.inspector = new OpenAiRequestInspector(json);
        this.parser = new OpenAiChunkParser(json);
    }

    /** Its own inspector: the one format whose request may be edited (include_usage). */
    @Override
    public InspectedRequest inspect(Buffer body) {
        return inspector.inspect(body);
    }

    @Override
    protected StreamDecoder streamDecoder(TokenEventSink sink, UpstreamResponse response) {
        return new OpenAiSseDecoder(sink, parser, response.usage(), response.maxHeldEventBytes());
    }

    @Override
    protected JsonBodyDecoder.BodyHandler bodyHandler(TokenEventSink sink, UpstreamResponse response) {
        return wholeBody(parser, sink);
    }

    /** A non-streaming chat, completions or embeddings body. */
    static JsonBodyDecoder.BodyHandler wholeBody(OpenAiChunkParser parser, TokenEventSink sink) {
        return reading(bytes -> parser.parse(bytes, 0, bytes.length), body -> body.reportTo(sink));
    }
}
