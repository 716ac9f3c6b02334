package dev.llmsidecar.engine;

/**
 * The engine's own cumulative counts since it started, summed over its label sets and passed through as it reports
 * them (an engine restart starts them from 0 again); {@link Double#NaN} where the engine does not report one.
 *
 * @param promptTokens        prompt tokens processed: computed and taken from the prefix cache
 * @param promptTokensCached  prompt tokens taken from the prefix cache
 * @param specDrafts          speculative-decoding draft steps (verification passes)
 * @param specDraftTokens     tokens the draft proposed
 * @param specAcceptedTokens  draft tokens the target model accepted
 * @param generationTokens    output tokens generated, for every request: those of requests cancelled before the end
 *     too (the engine's own count of its output work)
 */
public record EngineCounters(double promptTokens, double promptTokensCached, double specDrafts,
        double specDraftTokens, double specAcceptedTokens, double generationTokens) {

    private static final EngineCounters NONE = new EngineCounters(Double.NaN, Double.NaN, Double.NaN, Double.NaN,
            Double.NaN, Double.NaN);

    /** These counts, and {@code earlier}'s where this one has none (NaN). */
    public EngineCounters orElse(EngineCounters earlier) {
        return new EngineCounters(or(promptTokens, earlier.promptTokens), or(promptTokensCached,
                earlier.promptTokensCached), or(specDrafts, earlier.specDrafts), or(specDraftTokens,
                earlier.specDraftTokens), or(specAcceptedTokens, earlier.specAcceptedTokens),
                or(generationTokens, earlier.generationTokens));
    }

    private static double or(double value, double earlier) {
        return Double.isNaN(value) ? earlier : value;
    }

    /** None reported. */
    public static EngineCounters none() {
        return NONE;
    }
}
