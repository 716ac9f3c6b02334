package dev.llmsidecar.wire.ollama;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.ConversationShape;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.JsonWireFormat;
import dev.llmsidecar.wire.NdjsonDecoder;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;

/**
 * Ollama's native API ({@code /api/chat}, {@code /api/generate}): one JSON object per line
 * ({@code application/x-ndjson}), streaming unless the request says {@code "stream": false}. Output tokens
 * from {@code eval_count}, input from {@code prompt_eval_count}; the final object's nanosecond durations
 * ({@code load_duration}, {@code prompt_eval_duration}, {@code eval_duration}) become server timings.
 */
public final class OllamaFormat extends JsonWireFormat {

    public OllamaFormat(JsonFactory json) {
        this(json, ConversationShape.NONE);
    }

    /** @param conversations MESSAGES for /api/chat with sidecar.conversations on; /api/generate has none */
    public OllamaFormat(JsonFactory json, ConversationShape conversations) {
        super("ollama", json, true, conversations);
    }

    @Override
    public boolean streamingResponse(String contentType) {
        return UpstreamResponse.isNdjson(contentType);
    }

    @Override
    protected StreamDecoder streamDecoder(TokenEventSink sink, UpstreamResponse response) {
        return new NdjsonDecoder(sink, new Lines(sink), response.maxBodyBytes(), responseModel());
    }

    @Override
    protected JsonBodyDecoder.BodyHandler bodyHandler(TokenEventSink sink, UpstreamResponse response) {
        return reading(bytes -> OllamaChunk.parse(json, bytes, 0, bytes.length), c -> c.reportTo(sink, false));
    }

    /** The streaming side: one instance per response. */
    private final class Lines implements NdjsonDecoder.LineHandler {
        private final TokenEventSink sink;
        private boolean toolCallSeen;

        Lines(TokenEventSink sink) {
            this.sink = sink;
        }

        @Override
        public boolean onLine(byte[] line, int length, long nanos) {
            OllamaChunk c = OllamaChunk.parse(json, line, 0, length);
            if (c == null) {
                return false;
            }
            if (!c.error()) {
                sink.onDataChunk(nanos);
            }
            if (c.answer() || c.thinking()) {
                toolCallSeen |= c.toolCalls();
                sink.onTokenChunk(nanos, !c.answer(), -1);
            }
            c.reportTo(sink, toolCallSeen);
            return true;
        }
    }
}
