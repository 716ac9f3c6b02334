package dev.llmsidecar.wire.llamacpp;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.RequestFields;
import dev.llmsidecar.wire.SseDecoder;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.WireFormat;
import dev.llmsidecar.wire.openai.InspectedRequest;
import io.vertx.core.buffer.Buffer;

/**
 * llama.cpp server's native {@code POST /completion} ({@code /completions}): SSE events with {@code content}
 * (one token each), the last with {@code stop: true}, {@code tokens_predicted}, {@code tokens_evaluated} and
 * {@code timings} ({@code prompt_ms}: engine-side time to first token; {@code predicted_ms}: decode).
 */
public final class LlamaCppFormat implements WireFormat {

    private final JsonFactory json;
    private final RequestFields fields;

    public LlamaCppFormat(JsonFactory json) {
        this.json = json;
        this.fields = new RequestFields(json);
    }

    @Override
    public String name() {
        return "llamacpp";
    }

    @Override
    public InspectedRequest inspect(Buffer body, boolean injectUsage) {
        return fields.inspect(body, false);
    }

    @Override
    public StreamDecoder decoder(TokenEventSink sink, UpstreamResponse response) {
        if (response.eventStream()) {
            return new SseDecoder(sink, (data, length, eventType, nanos) -> {
                LlamaCppChunk c = LlamaCppChunk.parse(json, data, 0, length);
                if ("error".equals(eventType)) {
                    sink.onStreamError();
                    return c != null;
                }
                if (c == null) {
                    return false;
                }
                if (!c.error()) {
                    sink.onDataChunk(nanos);
                }
                if (c.token()) {
                    sink.onTokenChunk(nanos, false, -1);
                }
                c.reportTo(sink);
                return true;
            }, response.maxHeldEventBytes());
        }
        return new JsonBodyDecoder(sink, (bytes, nanos) -> {
            LlamaCppChunk c = LlamaCppChunk.parse(json, bytes, 0, bytes.length);
            if (c == null) {
                return false;
            }
            c.reportTo(sink);
            return true;
        }, response.maxBodyBytes());
    }
}
