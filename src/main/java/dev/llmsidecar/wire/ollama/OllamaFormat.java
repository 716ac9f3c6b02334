package dev.llmsidecar.wire.ollama;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.NdjsonDecoder;
import dev.llmsidecar.wire.RequestFields;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.WireFormat;
import dev.llmsidecar.wire.openai.InspectedRequest;
import io.vertx.core.buffer.Buffer;

/**
 * Ollama's native API ({@code /api/chat}, {@code /api/generate}): one JSON object per line
 * ({@code application/x-ndjson}), streaming unless the request says {@code "stream": false}. Output tokens
 * from {@code eval_count}, input from {@code prompt_eval_count}; the final object's nanosecond durations
 * ({@code load_duration}, {@code prompt_eval_duration}, {@code eval_duration}) become server timings.
 */
public final class OllamaFormat implements WireFormat {

    private final JsonFactory json;
    private final RequestFields fields;

    public OllamaFormat(JsonFactory json) {
        this.json = json;
        this.fields = new RequestFields(json);
    }

    @Override
    public String name() {
        return "ollama";
    }

    @Override
    public InspectedRequest inspect(Buffer body, boolean injectUsage) {
        return fields.inspect(body, true);
    }

    @Override
    public boolean streamingResponse(String contentType) {
        return UpstreamResponse.isNdjson(contentType);
    }

    @Override
    public StreamDecoder decoder(TokenEventSink sink, UpstreamResponse response) {
        if (streamingResponse(response.contentType())) {
            return new NdjsonDecoder(sink, new Lines(sink), response.maxBodyBytes());
        }
        return new JsonBodyDecoder(sink, (bytes, nanos) -> {
            OllamaChunk c = OllamaChunk.parse(json, bytes, 0, bytes.length);
            if (c == null) {
                return false;
            }
            c.reportTo(sink, false);
            return true;
        }, response.maxBodyBytes());
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
