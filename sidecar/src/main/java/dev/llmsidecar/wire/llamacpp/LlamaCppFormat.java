package dev.llmsidecar.wire.llamacpp;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.JsonWireFormat;
import dev.llmsidecar.wire.SseDecoder;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;

/**
 * llama.cpp server's native {@code POST /completion} ({@code /completions}): SSE events with {@code content}
 * (one token each), the last with {@code stop: true}, {@code tokens_predicted}, {@code tokens_evaluated} and
 * {@code timings} ({@code prompt_ms}: engine-side time to first token; {@code predicted_ms}: decode).
 */
public final class LlamaCppFormat extends JsonWireFormat {

    public LlamaCppFormat(JsonFactory json) {
        super("llamacpp", json, false);
    }

    @Override
    protected StreamDecoder streamDecoder(TokenEventSink sink, UpstreamResponse response) {
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

    @Override
    protected JsonBodyDecoder.BodyHandler bodyHandler(TokenEventSink sink, UpstreamResponse response) {
        return reading(bytes -> LlamaCppChunk.parse(json, bytes, 0, bytes.length), c -> c.reportTo(sink));
    }
}
