package dev.llmsidecar.wire;

/**
 * What a wire-format decoder reports while bytes pass. Timestamps are {@link System#nanoTime()} values taken
 * when the bytes carrying the event arrived from upstream.
 */
public interface TokenEventSink {

    /** Takes every event and keeps none (a response nothing measures). */
    TokenEventSink NONE = new TokenEventSink() {
        @Override
        public void onDataChunk(long nanos) {
        }

        @Override
        public void onTokenChunk(long nanos, boolean reasoning, long cumulativeOutputTokens) {
        }

        @Override
        public void onUsage(Usage usage) {
        }

        @Override
        public void onFinishReason(String finishReason) {
        }

        @Override
        public void onStreamError() {
        }

        @Override
        public void onUndecodable() {
        }
    };

    /** Any data-bearing chunk (including a role-only or empty one): stops the time-to-first-chunk clock. */
    void onDataChunk(long nanos);

    /**
     * A chunk that carries output: content, reasoning or tool-call text.
     *
     * @param reasoning true when the chunk carries only reasoning text
     * @param cumulativeOutputTokens output tokens so far as the server reported on this chunk, or -1
     */
    void onTokenChunk(long nanos, boolean reasoning, long cumulativeOutputTokens);

    void onUsage(Usage usage);

    void onFinishReason(String finishReason);

    /** The server reported its own timings for this request (vLLM per-request metrics, llama.cpp timings). */
    default void onServerTimings(ServerTimings timings) {
    }

    /** The model that answered, as the response names it (OTel {@code gen_ai.response.model}). */
    default void onResponseModel(String model) {
    }

    /**
     * The id the engine gave the response (the Responses API's {@code response.created}), which the next turn of
     * its conversation names in {@code previous_response_id}.
     */
    default void onResponseId(String id) {
    }

    /**
     * The stream's own end-of-stream marker arrived (OpenAI's {@code data: [DONE]}, Anthropic's {@code message_stop}):
     * a stream that ends without it, or without a finish reason, was truncated.
     */
    default void onTerminator() {
    }

    /** The server reported an error inside a successful (200) stream. */
    void onStreamError();

    /** A chunk that could not be decoded; its bytes were still forwarded. */
    void onUndecodable();
}
