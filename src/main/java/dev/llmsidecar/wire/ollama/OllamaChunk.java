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
        try (JsonParser p = json.createParser(bytes, offset, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            Reader r = new Reader();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                switch (name) {
                    case "response" -> r.answer |= JsonReads.nonEmptyString(p, v);
                    case "thinking" -> r.thinking |= JsonReads.nonEmptyString(p, v);
                    case "message" -> readMessage(p, v, r);
                    case "done" -> r.done = v == JsonToken.VALUE_TRUE;
                    case "error" -> {
                        r.error = v != JsonToken.VALUE_NULL;
                        p.skipChildren();
                    }
                    case "done_reason" -> r.doneReason = JsonReads.string(p, v);
                    case "prompt_eval_count" -> r.promptEvalCount = JsonReads.longValue(p, v);
                    case "eval_count" -> r.evalCount = JsonReads.longValue(p, v);
                    case "load_duration" -> r.load = JsonReads.longValue(p, v);
                    case "prompt_eval_duration" -> r.promptEval = JsonReads.longValue(p, v);
                    case "eval_duration" -> r.eval = JsonReads.longValue(p, v);
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                return null;
            }
            ServerTimings timings = r.load < 0 && r.promptEval < 0 && r.eval < 0 ? null
                    : new ServerTimings(-1, r.load, r.promptEval, r.eval);
            return new OllamaChunk(r.answer || r.toolCalls, r.thinking, r.toolCalls, r.done, r.error, r.doneReason,
                    r.promptEvalCount, r.evalCount, timings);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static final class Reader {
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
    }

    private static void readMessage(JsonParser p, JsonToken v, Reader r) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return;
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            switch (name) {
                case "content" -> r.answer |= JsonReads.nonEmptyString(p, t);
                case "thinking" -> r.thinking |= JsonReads.nonEmptyString(p, t);
                case "tool_calls" -> r.toolCalls |= JsonReads.nonEmptyContainer(p, t);
                default -> p.skipChildren();
            }
        }
    }
}
