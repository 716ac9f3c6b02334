package dev.llmsidecar.timeline;

/**
 * Where an open stream is in its life, for the stall thresholds: still waiting for its first token (queued or
 * prefilling upstream, where a long silence can be legitimate), or generating (a decode step is tens of
 * milliseconds, so a long silence there is a stall). The label values are part of the metrics contract.
 */
public enum StreamPhase {
    FIRST_TOKEN("first_token"),
    GENERATION("generation");

    private final String label;

    StreamPhase(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    public static StreamPhase of(boolean tokenSeen) {
        return tokenSeen ? GENERATION : FIRST_TOKEN;
    }
}
