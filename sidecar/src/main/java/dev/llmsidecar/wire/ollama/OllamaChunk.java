package dev.llmsidecar.wire.ollama;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.llmsidecar.wire.FinishReason;
import dev.llmsidecar.wire.JsonReads;
import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.Usage;
import java.io.IOException;

/**
 * One Ollama native object ({@code /api/chat} or {@code /api/generate}): a stream line or a whole response.
 *
 * @param answer non-empty {@code response} / {@code message.content}, or non-empty {@code message.tool_calls}
 * @param thinking non-empty {@code thinking} / {@code message.thinking}
 * @param toolCalls non-empty {@code message.tool_calls}
 * @param done the final object
 * @param error an {@code error} member
 * @param doneReason {@code done_reason}
 * @param promptEvalCount {@code prompt_eval_count}, -1 when absent
 * @param evalCount {@code eval_count}, -1 when absent
 * @param timings the nanosecond durations of the final object, or null
 */
record OllamaChunk(boolean answer, boolean thinking, boolean toolCalls, boolean done, boolean error,
        String doneReason, long promptEvalCount, long evalCount, ServerTimings timings) {

    /** Usage, finish reason, server timings and errors, for both modes. */
    void reportTo(TokenEventSink sink, boolean toolCallSeen) {
        if (error) {
            sink.onStreamError();
        }
        if (!done) {
            return;
        }
        if (promptEvalCount >= 0 || evalCount >= 0) {
            sink.onUsage(new Usage(promptEvalCount, evalCount, -1));
        }
        if (timings != null) {
            sink.onServerTimings(timings);
        }
        if (toolCallSeen || toolCalls) {
            sink.onFinishReason(FinishReason.TOOL_CALLS);
        } else if (doneReason != null) {
            sink.onFinishReason(doneReason);
        }
    }

    static OllamaChunk parse(JsonFactory json, byte[] bytes, int offset, int length) {
        return JsonReads.parseObject(json, bytes, offset, length, true, Reader::new);
    }

    private static final class Reader implements JsonReads.ObjectReader<OllamaChunk> {
        boolean answer;
        boolean thinking;
        boolean toolCalls;
        boolean done;
        boolean error;
        String doneReason;
        long promptEvalCount = -1;
        long evalCount = -1;
        long load = -1;
        long promptEval = -1;
        long eval = -1;

        @Override
        public void member(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "response" -> answer |= JsonReads.nonEmptyString(p, v);
                case "thinking" -> thinking |= JsonReads.nonEmptyString(p, v);
                case "message" -> JsonReads.members(p, v, this::messageMember);
                case "done" -> done = JsonReads.isTrue(p, v);
                case "error" -> error = JsonReads.nonNull(p, v);
                case "done_reason" -> doneReason = JsonReads.string(p, v);
                case "prompt_eval_count" -> promptEvalCount = JsonReads.longValue(p, v);
                case "eval_count" -> evalCount = JsonReads.longValue(p, v);
                case "load_duration" -> load = JsonReads.longValue(p, v);
                case "prompt_eval_duration" -> promptEval = JsonReads.longValue(p, v);
                case "eval_duration" -> eval = JsonReads.longValue(p, v);
                default -> p.skipChildren();
            }
        }

        private void messageMember(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "content" -> answer |= JsonReads.nonEmptyString(p, v);
                case "thinking" -> thinking |= JsonReads.nonEmptyString(p, v);
                case "tool_calls" -> toolCalls |= JsonReads.nonEmptyContainer(p, v);
                default -> p.skipChildren();
            }
        }

        @Override
        public OllamaChunk build() {
            ServerTimings timings = load < 0 && promptEval < 0 && eval < 0 ? null
                    : new ServerTimings(-1, load, promptEval, eval);
            return new OllamaChunk(answer || toolCalls, thinking, toolCalls, done, error, doneReason,
                    promptEvalCount, evalCount, timings);
        }
    }
}
