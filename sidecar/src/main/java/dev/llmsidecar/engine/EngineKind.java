package dev.llmsidecar.engine;

import java.util.List;
import java.util.Locale;

/** The inference server behind the sidecar, recognised by the prefix of its own metric names. */
public enum EngineKind {
    VLLM("vllm:"),
    SGLANG("sglang:"),
    TGI("tgi_"),
    LLAMACPP("llamacpp:"),
    UNKNOWN(null);

    private static final EngineKind[] KNOWN = {VLLM, SGLANG, TGI, LLAMACPP};

    private final String prefix;

    EngineKind(String prefix) {
        this.prefix = prefix;
    }

    /** The metric-name prefix this engine uses, or null for {@link #UNKNOWN}. */
    public String prefix() {
        return prefix;
    }

    /** Lower-case name, used as the {@code engine} tag value. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The engine whose prefix {@code metricName} carries, else {@link #UNKNOWN}. */
    public static EngineKind ofMetric(String metricName) {
        for (EngineKind kind : KNOWN) {
            if (metricName.startsWith(kind.prefix)) {
                return kind;
            }
        }
        return UNKNOWN;
    }

    /**
     * The engine with the most samples in an exposition (ties go to declaration order), or {@link #UNKNOWN}
     * when none matches. Counting rather than taking the first hit keeps one stray foreign series (a
     * wrapper's own metric, say) from mislabelling the engine.
     */
    public static EngineKind detect(List<ExpositionParser.Sample> samples) {
        int[] counts = new int[KNOWN.length];
        for (ExpositionParser.Sample sample : samples) {
            EngineKind kind = ofMetric(sample.name());
            if (kind != UNKNOWN) {
                counts[kind.ordinal()]++;
            }
        }
        EngineKind best = UNKNOWN;
        int bestCount = 0;
        for (EngineKind kind : KNOWN) {
            if (counts[kind.ordinal()] > bestCount) {
                best = kind;
                bestCount = counts[kind.ordinal()];
            }
        }
        return best;
    }
}
