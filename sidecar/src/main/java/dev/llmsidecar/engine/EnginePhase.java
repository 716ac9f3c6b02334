package dev.llmsidecar.engine;

import java.util.Locale;

/**
 * A phase of a request inside the engine, as the engines' own per-request histograms cut it (docs/metrics.md, "Engine
 * phases", says which engine gives which).
 */
public enum EnginePhase {
    /** Waiting in the engine's queue until first scheduled. */
    QUEUE,
    /** First scheduled until the first token (prompt processing). */
    PREFILL,
    /** First token until the last. */
    DECODE,
    /** First scheduled until the last token: prefill + decode. */
    INFERENCE;

    /** The {@code phase} label value. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
