package dev.llmsidecar.timeline;

/** Where a request's output token count came from. */
public enum TokenCountSource {
    /** usage.completion_tokens reported by the server (exact). */
    USAGE("usage"),
    /** No usage arrived: one token per token-bearing chunk (a lower bound when chunks carry several tokens). */
    CHUNKS("chunks"),
    /** Neither (non-streaming response without usage, or error). */
    NONE("none");

    private final String label;

    TokenCountSource(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
