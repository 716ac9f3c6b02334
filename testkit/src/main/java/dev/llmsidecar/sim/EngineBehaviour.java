package dev.llmsidecar.sim;

import java.time.Duration;

/**
 * How the simulated engine behaves. Every value can also be overridden per request with an {@code x-sim-*}
 * header (see {@link SimulatedEngine}).
 *
 * @param model served model name (also accepted: whatever model the request names)
 * @param ttft prefill time: slot start to first token chunk
 * @param interChunk time between token chunks
 * @param jitter relative uniform jitter on ttft and each chunk interval (0 = exact schedule)
 * @param tokensPerChunk tokens carried by each token chunk (speculative decoding / batching engines send several)
 * @param outputTokens default output length when the request sets no max_tokens
 * @param roleFirstChunk chat: send vLLM's role-only chunk ({"role":"assistant","content":""}) first, at slot start
 * @param usageMode how usage is reported in streams
 * @param cachedTokenRatio share of prompt tokens reported as prefix-cache hits
 * @param slots requests generated concurrently; later ones queue (like max-num-seqs)
 * @param crlf end SSE lines with CRLF instead of LF
 * @param fixedCreated value of "created" (0: the current time), so outputs can be compared byte for byte
 * @param seed random seed for jitter
 * @param perRequestMetrics add vLLM's per-request {@code metrics} object (queue_time_ms, time_to_first_token_ms
 *     from scheduling) to the final usage chunk / the response body, as --enable-per-request-metrics does
 */
public record EngineBehaviour(String model, Duration ttft, Duration interChunk, double jitter, int tokensPerChunk,
        int outputTokens, boolean roleFirstChunk, UsageMode usageMode, double cachedTokenRatio, int slots,
        boolean crlf, long fixedCreated, long seed, boolean perRequestMetrics) {

    /** How the engine reports usage in a stream. */
    public enum UsageMode {
        /** Only when the client set stream_options.include_usage: a final usage-only chunk (vLLM, OpenAI). */
        SEPARATE_CHUNK,
        /** When include_usage is set: usage attached to the chunk that carries finish_reason. */
        ON_FINISH_CHUNK,
        /** Never reports usage in streams. */
        NEVER
    }

    /** A vLLM-like engine: 200 ms TTFT, 20 ms per token, role chunk first, usage when asked. */
    public static EngineBehaviour defaults() {
        return new EngineBehaviour("sim-llama-8b", Duration.ofMillis(200), Duration.ofMillis(20), 0.0, 1, 16, true,
                UsageMode.SEPARATE_CHUNK, 0.0, 256, false, 0, 42, false);
    }

    public EngineBehaviour withTiming(Duration ttft, Duration interChunk) {
        return new EngineBehaviour(model, ttft, interChunk, jitter, tokensPerChunk, outputTokens, roleFirstChunk,
                usageMode, cachedTokenRatio, slots, crlf, fixedCreated, seed, perRequestMetrics);
    }

    public EngineBehaviour withJitter(double jitter) {
        return new EngineBehaviour(model, ttft, interChunk, jitter, tokensPerChunk, outputTokens, roleFirstChunk,
                usageMode, cachedTokenRatio, slots, crlf, fixedCreated, seed, perRequestMetrics);
    }

    public EngineBehaviour withTokensPerChunk(int tokensPerChunk) {
        return new EngineBehaviour(model, ttft, interChunk, jitter, tokensPerChunk, outputTokens, roleFirstChunk,
                usageMode, cachedTokenRatio, slots, crlf, fixedCreated, seed, perRequestMetrics);
    }

    public EngineBehaviour withOutputTokens(int outputTokens) {
        return new EngineBehaviour(model, ttft, interChunk, jitter, tokensPerChunk, outputTokens, roleFirstChunk,
                usageMode, cachedTokenRatio, slots, crlf, fixedCreated, seed, perRequestMetrics);
    }

    public EngineBehaviour withUsageMode(UsageMode usageMode) {
        return new EngineBehaviour(model, ttft, interChunk, jitter, tokensPerChunk, outputTokens, roleFirstChunk,
                usageMode, cachedTokenRatio, slots, crlf, fixedCreated, seed, perRequestMetrics);
    }

    public EngineBehaviour withCachedTokenRatio(double cachedTokenRatio) {
        return new EngineBehaviour(model, ttft, interChunk, jitter, tokensPerChunk, outputTokens, roleFirstChunk,
                usageMode, cachedTokenRatio, slots, crlf, fixedCreated, seed, perRequestMetrics);
    }

    public EngineBehaviour withSlots(int slots) {
        return new EngineBehaviour(model, ttft, interChunk, jitter, tokensPerChunk, outputTokens, roleFirstChunk,
                usageMode, cachedTokenRatio, slots, crlf, fixedCreated, seed, perRequestMetrics);
    }

    public EngineBehaviour withCrlf(boolean crlf) {
        return new EngineBehaviour(model, ttft, interChunk, jitter, tokensPerChunk, outputTokens, roleFirstChunk,
                usageMode, cachedTokenRatio, slots, crlf, fixedCreated, seed, perRequestMetrics);
    }

    public EngineBehaviour withFixedCreated(long fixedCreated) {
        return new EngineBehaviour(model, ttft, interChunk, jitter, tokensPerChunk, outputTokens, roleFirstChunk,
                usageMode, cachedTokenRatio, slots, crlf, fixedCreated, seed, perRequestMetrics);
    }

    public EngineBehaviour withRoleFirstChunk(boolean roleFirstChunk) {
        return new EngineBehaviour(model, ttft, interChunk, jitter, tokensPerChunk, outputTokens, roleFirstChunk,
                usageMode, cachedTokenRatio, slots, crlf, fixedCreated, seed, perRequestMetrics);
    }

    /**
     * This behaviour with the changes of a spec: comma-separated {@code KEY=VALUE} of {@code slots}, {@code ttft-ms},
     * {@code itl-ms}, {@code jitter}, {@code output-tokens}, {@code role-chunk} (true/false); null, blank or
     * {@code default} changes nothing. Fails with {@link IllegalArgumentException} naming the bad part.
     */
    public EngineBehaviour with(String spec) {
        EngineBehaviour b = this;
        if (spec == null || spec.isBlank() || spec.strip().equals("default")) {
            return b;
        }
        for (String part : spec.split(",")) {
            String[] kv = part.strip().split("=", 2);
            if (kv.length != 2) {
                throw new IllegalArgumentException("KEY=VALUE expected, got " + part);
            }
            String v = kv[1].strip();
            try {
                b = switch (kv[0].strip().toLowerCase(java.util.Locale.ROOT)) {
                    case "slots" -> b.withSlots(Integer.parseInt(v));
                    case "ttft-ms" -> b.withTiming(Duration.ofMillis(Long.parseLong(v)), b.interChunk);
                    case "itl-ms" -> b.withTiming(b.ttft, Duration.ofMillis(Long.parseLong(v)));
                    case "jitter" -> b.withJitter(Double.parseDouble(v));
                    case "output-tokens" -> b.withOutputTokens(Integer.parseInt(v));
                    case "role-chunk" -> b.withRoleFirstChunk(bool(v, part));
                    default -> throw new IllegalArgumentException("unknown key " + kv[0]
                            + " (slots, ttft-ms, itl-ms, jitter, output-tokens, role-chunk)");
                };
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a number: " + part);
            }
        }
        if (b.slots < 1 || b.ttft.isNegative() || b.interChunk.isNegative() || b.jitter < 0 || b.jitter >= 1
                || b.outputTokens < 0) {
            throw new IllegalArgumentException("slots >= 1, ttft-ms, itl-ms and output-tokens >= 0, 0 <= jitter < 1: "
                    + spec);
        }
        return b;
    }

    private static boolean bool(String v, String part) {
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new IllegalArgumentException("true or false expected: " + part);
    }

    public EngineBehaviour withPerRequestMetrics(boolean perRequestMetrics) {
        return new EngineBehaviour(model, ttft, interChunk, jitter, tokensPerChunk, outputTokens, roleFirstChunk,
                usageMode, cachedTokenRatio, slots, crlf, fixedCreated, seed, perRequestMetrics);
    }
}
