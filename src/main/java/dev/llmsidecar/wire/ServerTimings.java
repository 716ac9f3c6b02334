package dev.llmsidecar.wire;

/**
 * Timings the inference server reported about itself for one request (vLLM's per-request {@code metrics},
 * llama.cpp's {@code timings}). -1 when not reported.
 *
 * @param queueNanos waiting in the engine's queue before scheduling
 * @param firstTokenNanos engine-side time to first token after scheduling (vLLM) or prompt processing time
 *     (llama.cpp)
 */
public record ServerTimings(long queueNanos, long firstTokenNanos) {

    /** Engine-side time from its arrival to the first token: queue (when known) plus first-token time. */
    public long engineTtftNanos() {
        return firstTokenNanos < 0 ? -1 : Math.max(0, queueNanos) + firstTokenNanos;
    }
}
