package dev.llmsidecar.timeline;

import java.util.Arrays;

/**
 * Inter-token latency of one request, token-weighted as SGLang does: a chunk that carries k tokens after a gap
 * g contributes k samples of g/k. The gaps are between successive token-bearing chunks; the first chunk's
 * tokens belong to TTFT.
 */
public final class ItlSamples {

    /** Receives {@code count} samples of {@code sampleNanos} each. */
    @FunctionalInterface
    public interface Consumer {
        void accept(long sampleNanos, int count);
    }

    public static final ItlSamples NONE = new ItlSamples(new long[0], new int[0]);

    private final long[] gapNanos;
    private final int[] tokens;

    ItlSamples(long[] gapNanos, int[] tokens) {
        this.gapNanos = gapNanos;
        this.tokens = tokens;
    }

    /** Number of chunk gaps (token-bearing chunks minus one). */
    public int gaps() {
        return gapNanos.length;
    }

    public long gapNanos(int i) {
        return gapNanos[i];
    }

    /** Tokens attributed to the chunk that ended gap i. */
    public int tokens(int i) {
        return tokens[i];
    }

    /** Total ITL samples (sum of the per-gap token weights). */
    public long sampleCount() {
        long n = 0;
        for (int t : tokens) {
            n += t;
        }
        return n;
    }

    public void forEach(Consumer consumer) {
        for (int i = 0; i < gapNanos.length; i++) {
            consumer.accept(gapNanos[i] / tokens[i], tokens[i]);
        }
    }

    @Override
    public String toString() {
        return "ItlSamples" + Arrays.toString(gapNanos) + "x" + Arrays.toString(tokens);
    }
}
