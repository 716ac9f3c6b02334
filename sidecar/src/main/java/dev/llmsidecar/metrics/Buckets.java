package dev.llmsidecar.metrics;

import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

/**
 * Histogram bucket bounds per family of series, from a preset ({@code sidecar.metrics.bucket-preset}); every SLO
 * threshold is added to the latency families, so {@code le="<threshold>"} is exact.
 * <ul>
 * <li>{@code default}: 1 ms to 2 h for every latency (long reasoning runs stay out of +Inf), 4^k tokens;</li>
 * <li>{@code vllm}: vLLM's own bounds per family (TTFT 0.001-2560 s, ITL/TPOT 0.01-80 s, E2E and engine phases
 * 0.3-7680 s, tokens 1-2-5 up to 10^7), so {@code le} lines up with a vLLM dashboard;</li>
 * <li>{@code otel}: the OpenTelemetry GenAI semantic conventions' advice (TTFT to 10 s, TPOT to 2.5 s, durations
 * 0.01-81.92 s, tokens 4^k).</li>
 * </ul>
 */
public final class Buckets {

    /** Which bounds a histogram uses. */
    public enum Family {
        /** Time to a first token / chunk / header. */
        FIRST_TOKEN,
        /** Per-token times: TPOT, ITL, chunk gaps. */
        PER_TOKEN,
        /** The proxy's own forwarding delay: microseconds normally, fixed bounds whatever the preset. */
        FORWARDING,
        /** Whole-request and engine-phase durations. */
        REQUEST,
        /** Token counts per request. */
        TOKENS,
        /** Queue depth samples; turns per conversation. */
        DEPTH,
        /** A share 0..1 (the prefix-cache hit ratio per request): fixed bounds whatever the preset, 0 exact. */
        RATIO,
        /** Re-exported from the engine with the engine's own bounds. */
        ENGINE,
        /** Not a histogram. */
        NONE
    }

    private static final List<Double> DEFAULT_LATENCY = List.of(0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015,
            0.02, 0.025, 0.03, 0.04, 0.05, 0.06, 0.075, 0.1, 0.125, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5,
            2.0, 2.5, 3.0, 4.0, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0, 180.0, 300.0, 600.0, 900.0,
            1200.0, 1800.0, 2700.0, 3600.0, 5400.0, 7200.0);
    private static final List<Double> POW4_TOKENS = List.of(1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0,
            65536.0, 262144.0, 1048576.0, 4194304.0, 16777216.0, 67108864.0);
    private static final List<Double> FORWARDING = List.of(0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
            0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0);
    private static final List<Double> RATIO = List.of(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99,
            1.0);
    private static final List<Double> DEPTH = List.of(0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0,
            1024.0, 2048.0, 4096.0);

    private static final List<Double> VLLM_TTFT = List.of(0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
            0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0);
    private static final List<Double> VLLM_ITL = List.of(0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
            0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0);
    private static final List<Double> VLLM_REQUEST = List.of(0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0,
            20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0);
    private static final List<Double> VLLM_TOKENS = List.of(1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0,
            1000.0, 2000.0, 5000.0, 10000.0, 20000.0, 50000.0, 100000.0, 200000.0, 500000.0, 1000000.0, 2000000.0,
            5000000.0, 10000000.0);

    private static final List<Double> OTEL_TTFT = List.of(0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
            0.75, 1.0, 2.5, 5.0, 7.5, 10.0);
    private static final List<Double> OTEL_TPOT = List.of(0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
            0.75, 1.0, 2.5);
    private static final List<Double> OTEL_DURATION = List.of(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56,
            5.12, 10.24, 20.48, 40.96, 81.92);

    /** The presets of {@code sidecar.metrics.bucket-preset}. */
    public enum Preset { DEFAULT, VLLM, OTEL }

    private final Preset preset;
    private final List<Double> latencyOverride;
    private final List<Double> tokensOverride;
    private final List<Double> sloThresholds;

    /**
     * @param latencyOverride explicit latency bounds for every latency family (empty: the preset's)
     * @param tokensOverride explicit token-count bounds (empty: the preset's)
     * @param sloThresholds every SLO threshold in seconds, added to the latency families
     */
    public Buckets(Preset preset, List<Double> latencyOverride, List<Double> tokensOverride,
            List<Double> sloThresholds) {
        this.preset = preset;
        this.latencyOverride = List.copyOf(latencyOverride);
        this.tokensOverride = List.copyOf(tokensOverride);
        this.sloThresholds = List.copyOf(sloThresholds);
    }

    /** Parses a preset name (case-insensitive). */
    public static Preset preset(String name) {
        try {
            return Preset.valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("sidecar.metrics.bucket-preset must be default, vllm or otel: " + name);
        }
    }

    /** The sorted, distinct upper bounds of a family. */
    public List<Double> bounds(Family family) {
        return switch (family) {
            case FIRST_TOKEN, PER_TOKEN, REQUEST -> withThresholds(latency(family));
            case TOKENS -> tokensOverride.isEmpty() ? tokens() : sorted(tokensOverride);
            case FORWARDING -> FORWARDING;
            case DEPTH -> DEPTH;
            case RATIO -> RATIO;
            case ENGINE, NONE -> List.of();
        };
    }

    private List<Double> latency(Family family) {
        if (!latencyOverride.isEmpty()) {
            return latencyOverride;
        }
        return switch (preset) {
            case DEFAULT -> DEFAULT_LATENCY;
            case VLLM -> family == Family.FIRST_TOKEN ? VLLM_TTFT : family == Family.PER_TOKEN ? VLLM_ITL : VLLM_REQUEST;
            case OTEL -> family == Family.FIRST_TOKEN ? OTEL_TTFT : family == Family.PER_TOKEN ? OTEL_TPOT : OTEL_DURATION;
        };
    }

    private List<Double> tokens() {
        return preset == Preset.VLLM ? VLLM_TOKENS : POW4_TOKENS;
    }

    private List<Double> withThresholds(List<Double> base) {
        TreeSet<Double> all = new TreeSet<>(base);
        all.addAll(sloThresholds);
        return List.copyOf(all);
    }

    private static List<Double> sorted(List<Double> values) {
        return List.copyOf(new TreeSet<>(values));
    }
}
