package dev.llmsidecar.wire;

/**
 * Timings the inference server reported about itself for one request (vLLM's per-request {@code metrics},
 * llama.cpp's {@code timings}, Ollama's durations, TGI's {@code x-*-time} headers). -1 when not reported.
 *
 * @param queueNanos waiting in the engine's queue before scheduling
 * @param loadNanos loading the model before the request could run (Ollama {@code load_duration})
 * @param firstTokenNanos engine-side time to first token after scheduling (vLLM) or prompt processing time
 *     (llama.cpp {@code prompt_ms}, Ollama {@code prompt_eval_duration})
 * @param decodeNanos generating the output tokens (llama.cpp {@code predicted_ms}, Ollama {@code eval_duration},
 *     TGI {@code x-inference-time})
 */
public record ServerTimings(long queueNanos, long loadNanos, long firstTokenNanos, long decodeNanos) {

    public ServerTimings(long queueNanos, long firstTokenNanos) {
        this(queueNanos, -1, firstTokenNanos, -1);
    }

    /**
     * Engine-side time for the whole request: its time to first token plus decode; for TGI, which reports no first
     * token time and whose {@code x-inference-time} is prefill and decode together, queue plus that. -1 when unknown.
     */
    public long engineTotalNanos() {
        long ttft = engineTtftNanos();
        if (decodeNanos < 0) {
            return -1;
        }
        if (ttft >= 0) {
            return ttft + decodeNanos;
        }
        return queueNanos >= 0 ? queueNanos + Math.max(0, loadNanos) + decodeNanos : -1;
    }

    /** Engine-side time from its arrival to the first token: queue and load (when known) plus first-token time. */
    public long engineTtftNanos() {
        return firstTokenNanos < 0 ? -1 : Math.max(0, queueNanos) + Math.max(0, loadNanos) + firstTokenNanos;
    }
}
