package dev.llmsidecar.metrics;

import java.util.List;
import java.util.Locale;

/**
 * Which version of the OpenTelemetry GenAI semantic conventions the OTLP metrics and spans follow. The conventions
 * are in Development and rename things between versions; this lets a deployment keep the names it alerts on.
 * {@code sidecar.otel.semconv}: {@code latest} (default, what the sidecar has always emitted) or {@code v1.36} (the
 * version the conventions' transition plan takes as the baseline: {@code gen_ai.system} where later versions say
 * {@code gen_ai.provider.name}). As the conventions' plan asks, {@code gen_ai_latest_experimental} in
 * {@code OTEL_SEMCONV_STABILITY_OPT_IN} selects the latest whatever the setting.
 */
public enum GenAiConventions {
    V1_36("gen_ai.system"),
    LATEST("gen_ai.provider.name");

    /** The opt-in value of OTEL_SEMCONV_STABILITY_OPT_IN for the latest GenAI conventions. */
    public static final String LATEST_OPT_IN = "gen_ai_latest_experimental";

    private final String providerKey;

    GenAiConventions(String providerKey) {
        this.providerKey = providerKey;
    }

    /** The attribute naming the provider (the API the clients speak). */
    public String providerKey() {
        return providerKey;
    }

    /**
     * @param setting {@code sidecar.otel.semconv}: latest or v1.36
     * @param optIn the values of OTEL_SEMCONV_STABILITY_OPT_IN (comma-separated there)
     */
    public static GenAiConventions of(String setting, List<String> optIn) {
        GenAiConventions chosen = switch (setting.trim().toLowerCase(Locale.ROOT)) {
            case "latest" -> LATEST;
            case "v1.36", "1.36", "v1.36.0", "1.36.0" -> V1_36;
            default -> throw new IllegalArgumentException("sidecar.otel.semconv must be latest or v1.36: " + setting);
        };
        return optIn.stream().map(String::trim).anyMatch(LATEST_OPT_IN::equals) ? LATEST : chosen;
    }
}
