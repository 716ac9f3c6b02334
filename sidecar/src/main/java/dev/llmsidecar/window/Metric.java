package dev.llmsidecar.window;

/** The latency series kept per model in {@link LatencyWindows}; definitions as in docs/metrics.md. */
public enum Metric {
    /** Time to first token. */
    TTFT,
    /** Time per output token after the first. */
    TPOT,
    /** Inter-token latency, token-weighted. */
    ITL,
    /** End-to-end request latency. */
    E2E
}
