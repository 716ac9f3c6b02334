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
        return JsonReads.parseObject(json, bytes, offset, length, false, Reader::new);
    }

    private static final class Reader implements JsonReads.ObjectReader<LlamaCppChunk> {
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

        @Override
        public void member(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "content" -> token |= JsonReads.nonEmptyString(p, v);
                case "tokens" -> token |= JsonReads.nonEmptyContainer(p, v);
                case "stop" -> stop = JsonReads.isTrue(p, v);
                case "error" -> error = JsonReads.nonNull(p, v);
                case "stop_type" -> stopType = JsonReads.string(p, v);
                case "stopped_eos", "stopped_word" -> stoppedStop |= JsonReads.isTrue(p, v);
                case "stopped_limit" -> stoppedLimit |= JsonReads.isTrue(p, v);
                case "tokens_predicted" -> predicted = JsonReads.longValue(p, v);
                case "tokens_evaluated" -> evaluated = JsonReads.longValue(p, v);
                case "timings" -> timings |= JsonReads.members(p, v, this::timingsMember);
                default -> p.skipChildren();
            }
        }

        private void timingsMember(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "prompt_n" -> promptN = JsonReads.longValue(p, v);
                case "predicted_n" -> predictedN = JsonReads.longValue(p, v);
                case "cache_n" -> cacheN = JsonReads.longValue(p, v);
                case "prompt_ms" -> promptMs = JsonReads.doubleValue(p, v);
                case "predicted_ms" -> predictedMs = JsonReads.doubleValue(p, v);
                default -> p.skipChildren();
            }
        }

        @Override
        public LlamaCppChunk build() {
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
}
