package dev.llmsidecar.wire.openai;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.llmsidecar.wire.FinishReason;
import dev.llmsidecar.wire.JsonReads;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.Usage;
import java.io.IOException;

/**
 * What one OpenAI Responses API object says about tokens: a stream event ({@code type}, {@code delta}, and
 * for lifecycle events the {@code response} object) or a whole non-streaming response object.
 *
 * @param type the event type, or null (a response object)
 * @param deltaNonEmpty the event has a non-empty string {@code delta}
 * @param response the embedded response object ({@code response.created}, {@code response.completed} ...), or
 *     for a non-streaming body the body itself; null when absent
 */
record ResponsesEvent(String type, boolean deltaNonEmpty, Response response) {

    /**
     * @param id the response's id ({@code resp_...}), or null
     * @param status completed, incomplete, failed, cancelled, in_progress, queued
     * @param incompleteReason {@code incomplete_details.reason}
     * @param error the {@code error} member is a non-null object
     * @param functionCall some output item is a function / custom tool call
     * @param usage {@code usage}, or null
     */
    record Response(String id, String status, String incompleteReason, boolean error, boolean functionCall,
            Usage usage) {

        /** Its id, usage, finish reason and failure, for both modes. */
        void reportTo(TokenEventSink sink, boolean toolCallSeen) {
            if (id != null) {
                sink.onResponseId(id);
            }
            if (error || "failed".equals(status)) {
                sink.onStreamError();
            }
            if (usage != null) {
                sink.onUsage(usage);
            }
            String finish = finishReason(toolCallSeen || functionCall);
            if (finish != null) {
                sink.onFinishReason(finish);
            }
        }

        private String finishReason(boolean toolCall) {
            if (status == null) {
                return null;
            }
            return switch (status) {
                case "completed" -> toolCall ? FinishReason.TOOL_CALLS : FinishReason.STOP;
                case "incomplete" -> "max_output_tokens".equals(incompleteReason) ? FinishReason.LENGTH
                        : "content_filter".equals(incompleteReason) ? FinishReason.CONTENT_FILTER : "incomplete";
                case "failed" -> FinishReason.ERROR;
                case "cancelled" -> FinishReason.ABORT;
                default -> null;
            };
        }
    }

    /** True for an output delta: {@code response.*.delta} with text (output, reasoning, tool arguments). */
    boolean isOutputDelta() {
        return deltaNonEmpty && type != null && type.startsWith("response.") && type.endsWith(".delta");
    }

    boolean isReasoning() {
        return type != null && type.startsWith("response.reasoning");
    }

    boolean isToolCallDelta() {
        return type != null && (type.equals("response.function_call_arguments.delta")
                || type.equals("response.custom_tool_call_input.delta")
                || type.equals("response.mcp_call_arguments.delta"));
    }

    /** Parses one event or response body; null when it is not a JSON object. */
    static ResponsesEvent parse(JsonFactory json, byte[] bytes, int offset, int length) {
        return JsonReads.parseObject(json, bytes, offset, length, false, EventReader::new);
    }

    /** An event's own members; the others may be those of a non-streaming response body. */
    private static final class EventReader implements JsonReads.ObjectReader<ResponsesEvent> {
        String type;
        boolean delta;
        Response response;
        final ResponseReader body = new ResponseReader();

        @Override
        public void member(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "type" -> type = JsonReads.string(p, v);
                case "delta" -> delta = JsonReads.nonEmptyString(p, v);
                case "response" -> response = JsonReads.object(p, v, new ResponseReader());
                default -> body.member(p, name, v);
            }
        }

        @Override
        public ResponsesEvent build() {
            if (response == null && "response".equals(body.object)) {
                response = body.build(); // a non-streaming response body
            }
            return new ResponsesEvent(type, delta, response);
        }
    }

    /** Collects the members of a response object that matter. */
    private static final class ResponseReader implements JsonReads.ObjectReader<Response> {
        String object;
        String id;
        String status;
        String incompleteReason;
        boolean error;
        boolean functionCall;
        Usage usage;

        @Override
        public void member(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "object" -> object = JsonReads.string(p, v);
                case "id" -> id = JsonReads.string(p, v);
                case "status" -> status = JsonReads.string(p, v);
                case "error" -> error = JsonReads.isObject(p, v);
                case "incomplete_details" ->
                        incompleteReason = JsonReads.member(p, v, "reason", null, JsonReads::string);
                case "output" -> {
                    functionCall = false;
                    JsonReads.elementMembers(p, v, this::outputItemMember);
                }
                case "usage" -> usage = JsonReads.object(p, v, new UsageReader());
                default -> p.skipChildren();
            }
        }

        private void outputItemMember(JsonParser p, String name, JsonToken v) throws IOException {
            if ("type".equals(name)) {
                String type = JsonReads.string(p, v);
                functionCall |= "function_call".equals(type) || "custom_tool_call".equals(type);
            } else {
                p.skipChildren();
            }
        }

        @Override
        public Response build() {
            return new Response(id, status, incompleteReason, error, functionCall, usage);
        }
    }

    private static final class UsageReader implements JsonReads.ObjectReader<Usage> {
        long input = -1;
        long output = -1;
        long cached = -1;
        long reasoning = -1;

        @Override
        public void member(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "input_tokens" -> input = JsonReads.longValue(p, v);
                case "output_tokens" -> output = JsonReads.longValue(p, v);
                case "input_tokens_details" ->
                        cached = JsonReads.member(p, v, "cached_tokens", -1L, JsonReads::longValue);
                case "output_tokens_details" ->
                        reasoning = JsonReads.member(p, v, "reasoning_tokens", -1L, JsonReads::longValue);
                default -> p.skipChildren();
            }
        }

        @Override
        public Usage build() {
            return new Usage(input, output, cached, reasoning);
        }
    }
}
