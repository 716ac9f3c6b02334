package dev.llmsidecar.wire.openai;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.RequestFields;
import dev.llmsidecar.wire.SseDecoder;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.WireFormat;
import io.vertx.core.buffer.Buffer;

/**
 * OpenAI Responses API ({@code POST /v1/responses}): typed SSE events. Tokens are the {@code response.*.delta}
 * events with text: {@code output_text}, {@code refusal}, {@code function_call_arguments} (answer) and
 * {@code reasoning_text} / {@code reasoning_summary_text} (reasoning). Usage and status come with
 * {@code response.completed} / {@code incomplete} / {@code failed}.
 */
public final class OpenAiResponsesFormat implements WireFormat {

    private final JsonFactory json;
    private final RequestFields fields;

    public OpenAiResponsesFormat(JsonFactory json) {
        this.json = json;
        this.fields = new RequestFields(json);
    }

    @Override
    public String name() {
        return "openai_responses";
    }

    @Override
    public InspectedRequest inspect(Buffer body, boolean injectUsage) {
        return fields.inspect(body, false);
    }

    @Override
    public StreamDecoder decoder(TokenEventSink sink, UpstreamResponse response) {
        if (response.eventStream()) {
            return new SseDecoder(sink, new Events(sink), response.maxHeldEventBytes());
        }
        return new JsonBodyDecoder(sink, (bytes, nanos) -> {
            ResponsesEvent body = ResponsesEvent.parse(json, bytes, 0, bytes.length);
            if (body == null || body.response() == null) {
                return false;
            }
            body.response().reportTo(sink, false);
            return true;
        }, response.maxBodyBytes());
    }

    /** The streaming side: one instance per response. */
    private final class Events implements SseDecoder.EventHandler {
        private final TokenEventSink sink;
        private boolean toolCallSeen;

        Events(TokenEventSink sink) {
            this.sink = sink;
        }

        @Override
        public boolean onEvent(byte[] data, int length, String eventType, long nanos) {
            if (SseDecoder.isDone(data, length)) {
                return true;
            }
            ResponsesEvent e = ResponsesEvent.parse(json, data, 0, length);
            if (e == null) {
                return false;
            }
            String type = e.type() != null ? e.type() : eventType;
            if ("error".equals(type)) {
                sink.onStreamError();
                return true;
            }
            sink.onDataChunk(nanos);
            if (e.isOutputDelta()) {
                toolCallSeen |= e.isToolCallDelta();
                sink.onTokenChunk(nanos, e.isReasoning(), -1);
            }
            if (e.response() != null) {
                e.response().reportTo(sink, toolCallSeen);
            }
            return true;
        }
    }
}
