package dev.llmsidecar.timeline;

/** How a proxied request ended. The label values are part of the metrics contract (docs/metrics.md). */
public enum Outcome {
    /** Upstream answered 2xx/3xx and the whole body reached the client. */
    OK("ok"),
    /** Upstream answered 4xx/5xx, was unreachable (sidecar answered 502/504), or reported an error in-stream. */
    UPSTREAM_ERROR("upstream_error"),
    /** The client went away before the response ended; the upstream request was cancelled. */
    CLIENT_CANCELLED("client_cancelled"),
    /** The upstream connection failed or stalled after the response had started. */
    UPSTREAM_BROKEN("upstream_broken"),
    /**
     * Refused by the sidecar with 503 before it reached the engine: its memory was past its mark (only on
     * llm_sidecar_requests_total, with end_reason="shed"; judged by no objective).
     */
    SHED("shed");

    private final String label;

    Outcome(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
