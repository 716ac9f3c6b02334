package dev.llmsidecar.wire.openai;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.ConversationShape;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.JsonWireFormat;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import io.vertx.core.buffer.Buffer;

/**
 * OpenAI chat completions and text completions (also what vLLM, SGLang, llama.cpp and Ollama serve under
 * /v1): SSE chunks with {@code choices[].delta}, or one JSON body. Its requests say whether the stream carries usage,
 * and its decoder can remove that usage in its one pass ({@link UsageMode}): what include_usage builds on.
 */
public final class OpenAiFormat extends JsonWireFormat {

    private final OpenAiRequestInspector inspector;
    private final OpenAiChunkParser parser;

    public OpenAiFormat(String name, JsonFactory json) {
        this(name, json, ConversationShape.NONE);
    }

    /** @param conversations MESSAGES for chat completions with sidecar.conversations on; completions have none */
    public OpenAiFormat(String name, JsonFactory json, ConversationShape conversations) {
        super(name, json, false, conversations);
        this.inspector = new OpenAiRequestInspector(json, conversations);
        this.parser = new OpenAiChunkParser(json);
    }

    /** Its own inspector: it also reads stream_options, which a rewrite may edit (include_usage). */
    @Override
    public OpenAiRequest inspect(Buffer body) {
        return inspector.inspect(body);
    }

    @Override
    protected StreamDecoder streamDecoder(TokenEventSink sink, UpstreamResponse response) {
        return sseDecoder(sink, response, UsageMode.PASS);
    }

    /** The stream decoder with what it does about usage in the stream: pass, observe, or remove it. */
    public OpenAiSseDecoder sseDecoder(TokenEventSink sink, UpstreamResponse response, UsageMode usage) {
        return new OpenAiSseDecoder(sink, parser, usage, response.maxHeldEventBytes());
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
