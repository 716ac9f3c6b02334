package dev.llmsidecar.wire.openai;

import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.Usage;

/**
 * What one OpenAI-format JSON object (a stream chunk or a whole non-streaming response) says about tokens.
 *
 * @param choicesPresent the object has a {@code choices} array
 * @param choicesEmpty that array is empty (with usage: the include_usage chunk)
 * @param carriesContent some choice carries non-empty content / text / tool-call deltas
 * @param carriesReasoning some choice carries non-empty reasoning_content / reasoning
 * @param finishReason the last non-null finish_reason seen, or null
 * @param usage the usage object, or null when absent or null
 * @param error the object has an {@code error} member
 * @param serverTimings vLLM {@code metrics} / llama.cpp {@code timings}, or null
 * @param usageMember the object has a top-level {@code usage} member, of any value ({@code "usage":null} too)
 */
public record OpenAiChunk(boolean choicesPresent, boolean choicesEmpty, boolean carriesContent,
        boolean carriesReasoning, String finishReason, Usage usage, boolean error, ServerTimings serverTimings,
        boolean usageMember) {

    /** The first-token predicate: content, reasoning or tool-call text. Role-only and empty deltas are not tokens. */
    public boolean carriesToken() {
        return carriesContent || carriesReasoning;
    }

    /** The chunk include_usage adds at the end of a stream: no choices, only usage. */
    public boolean isUsageOnly() {
        return choicesPresent && choicesEmpty && usage != null;
    }

    /** Reports what does not depend on arrival time (error, usage, server timings, finish reason), in both modes. */
    void reportTo(TokenEventSink sink) {
        if (error) {
            sink.onStreamError();
        }
        if (usage != null) {
            sink.onUsage(usage);
        }
        if (serverTimings != null) {
            sink.onServerTimings(serverTimings);
        }
        if (finishReason != null) {
            sink.onFinishReason(finishReason);
        }
    }
}
