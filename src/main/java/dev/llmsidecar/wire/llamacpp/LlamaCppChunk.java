package dev.llmsidecar.wire.llamacpp;

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
 * One llama.cpp native {@code /completion} object: a stream event or the whole response.
 *
 * @param token non-empty {@code content}, or a non-empty {@code tokens} array (a token that is not yet a
 *     whole UTF-8 character has empty content)
 * @param stop {@code stop} is true (the last event)
 * @param error an {@code error} member
 * @param finishReason from {@code stop_type} (or the older {@code stopped_*} flags)
 * @param usage {@code tokens_evaluated} / {@code tokens_predicted} (else {@code timings}), or null
 * @param timings {@code timings.prompt_ms} and {@code predicted_ms}, or null
 */
record LlamaCppChunk(boolean token, boolean stop, boolean error, String finishReason, Usage usage,
        ServerTimings timings) {

    void reportTo(TokenEventSink sink) {
        if (error) {
            sink.onStreamError();
        }
        if (usage != null) {
            sink.onUsage(usage);
        }
        if (timings != null) {
            sink.onServerTimings(timings);
        }
        if (finishReason != null) {
            sink.onFinishReason(finishReason);
        }
    }

    static LlamaCppChunk parse(JsonFactory json, byte[] bytes, int offset, int length) {
        try (JsonParser p = json.createParser(bytes, offset, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            Reader r = new Reader();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                switch (name) {
                    case "content" -> r.token |= JsonReads.nonEmptyString(p, v);
                    case "tokens" -> r.token |= JsonReads.nonEmptyContainer(p, v);
                    case "stop" -> r.stop = v == JsonToken.VALUE_TRUE;
                    case "error" -> {
                        r.error = v != JsonToken.VALUE_NULL;
                        p.skipChildren();
                    }
                    case "stop_type" -> r.stopType = JsonReads.string(p, v);
                    case "stopped_eos", "stopped_word" -> r.stoppedStop |= v == JsonToken.VALUE_TRUE;
                    case "stopped_limit" -> r.stoppedLimit |= v == JsonToken.VALUE_TRUE;
                    case "tokens_predicted" -> r.predicted = JsonReads.longValue(p, v);
                    case "tokens_evaluated" -> r.evaluated = JsonReads.longValue(p, v);
                    case "timings" -> readTimings(p, v, r);
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT) {
                return null;
            }
            return r.build();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static final class Reader {
        boolean token;
        boolean stop;
        boolean error;
        String stopType;
        boolean stoppedStop;
        boolean stoppedLimit;
        long predicted = -1;
        long evaluated = -1;
        long promptN = -1;
        long predictedN = -1;
        long cacheN = -1;
        double promptMs = -1;
        double predictedMs = -1;
        boolean timings;

        LlamaCppChunk build() {
            String finish = FinishReason.llamaCpp(stopType);
            if (finish == null && stop) {
                finish = stoppedLimit ? FinishReason.LENGTH : stoppedStop ? FinishReason.STOP : null;
            }
            long output = predicted >= 0 ? predicted : predictedN;
            // prompt_n counts only the prompt tokens processed now; the cached ones add up to the prompt
            long input = evaluated >= 0 ? evaluated : promptN < 0 ? -1 : promptN + Math.max(0, cacheN);
            Usage usage = stop && (output >= 0 || input >= 0) ? new Usage(input, output, cacheN) : null;
            ServerTimings t = timings && (promptMs >= 0 || predictedMs >= 0)
                    ? new ServerTimings(-1, -1, JsonReads.msToNanos(promptMs), JsonReads.msToNanos(predictedMs))
                    : null;
            return new LlamaCppChunk(token, stop, error, finish, usage, t);
        }
    }

    private static void readTimings(JsonParser p, JsonToken v, Reader r) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return;
        }
        r.timings = true;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            switch (name) {
                case "prompt_n" -> r.promptN = JsonReads.longValue(p, t);
                case "predicted_n" -> r.predictedN = JsonReads.longValue(p, t);
                case "cache_n" -> r.cacheN = JsonReads.longValue(p, t);
                case "prompt_ms" -> r.promptMs = JsonReads.doubleValue(p, t);
                case "predicted_ms" -> r.predictedMs = JsonReads.doubleValue(p, t);
                default -> p.skipChildren();
            }
        }
    }
}
