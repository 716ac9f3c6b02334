package dev.llmsidecar.wire.openai;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.ConversationShape;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.JsonWireFormat;
import dev.llmsidecar.wire.SseDecoder;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;

/**
 * OpenAI Responses API ({@code POST /v1/responses}): typed SSE events. Tokens are the {@code response.*.delta}
 * events with text: {@code output_text}, {@code refusal}, {@code function_call_arguments} (answer) and
 * {@code reasoning_text} / {@code reasoning_summary_text} (reasoning). Usage and status come with
 * {@code response.completed} / {@code incomplete} / {@code failed}.
 */
public final class OpenAiResponsesFormat extends JsonWireFormat {

    public OpenAiResponsesFormat(JsonFactory json) {
        this(json, ConversationShape.NONE);
    }

    /** @param conversations RESPONSES with sidecar.conversations on */
    public OpenAiResponsesFormat(JsonFactory json, ConversationShape conversations) {
        super("openai_responses", json, false, conversations);
    }

    @Override
    protected StreamDecoder streamDecoder(TokenEventSink sink, UpstreamResponse response) {
        return new SseDecoder(sink, new Events(sink), response.maxHeldEventBytes(), responseModel());
    }

    @Override
    protected JsonBodyDecoder.BodyHandler bodyHandler(TokenEventSink sink, UpstreamResponse response) {
        return reading(bytes -> {
            ResponsesEvent body = ResponsesEvent.parse(json, bytes, 0, bytes.length);
            return body == null ? null : body.response();
        }, r -> r.reportTo(sink, false));
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
