package dev.llmsidecar.timeline;

/**
 * A number the engine reported that the sidecar capped before using it: token counts drive allocation and work (an
 * ITL sample per token, a trace's block ids per 512 prompt tokens), so one absurd answer must not.
 */
public enum ClampedValue {
    /** usage.prompt_tokens above {@link #MAX_TOKENS}. */
    PROMPT_TOKENS,
    /** usage.completion_tokens (or a cumulative count) above {@link #MAX_TOKENS}. */
    COMPLETION_TOKENS,
    /** cached prompt tokens above {@link #MAX_TOKENS}. */
    CACHED_TOKENS,
    /** reasoning tokens above {@link #MAX_TOKENS}. */
    REASONING_TOKENS,
    /** A chunk credited with more than {@link #MAX_TOKENS_PER_CHUNK} tokens for ITL. */
    TOKENS_PER_CHUNK;

    /** 2^24 (16 777 216): past any context window served today (10 M tokens), so no real count is touched. */
    public static final long MAX_TOKENS = 1L << 24;
    /**
     * 4096: a streamed chunk carries one token, a few with speculative decoding, a few dozen in formats that batch
     * text; more is a count that is wrong, and each one becomes that many ITL samples.
     */
    public static final long MAX_TOKENS_PER_CHUNK = 4096;

    /** The values whose ordinals' bits are set in {@code bits}. */
    static java.util.Set<ClampedValue> fromBits(int bits) {
        if (bits == 0) {
            return java.util.Set.of();
        }
        java.util.EnumSet<ClampedValue> set = java.util.EnumSet.noneOf(ClampedValue.class);
        for (ClampedValue v : values()) {
            if ((bits & (1 << v.ordinal())) != 0) {
                set.add(v);
            }
        }
        return java.util.Collections.unmodifiableSet(set);
    }

    /** The label value ({@code field}). */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
