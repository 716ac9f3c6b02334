package dev.llmsidecar.sweep;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Synthetic prompts for a recorded trace in which equal hash ids are equal text, so that the engine's prefix cache
 * sees the sharing the production traffic had. Each id stands for a 512-token block ({@link TraceRecord#BLOCK_TOKENS});
 * it maps, deterministically (the id and {@code --seed}), to a block of words drawn from {@link PromptBuilder}'s
 * one-token words; a prompt is its ids' blocks joined by spaces, the last block cut to the remainder of
 * {@code input_length}. A cut block is the beginning of the same id's whole block, as a conversation's last partial
 * block is the beginning of the same block one turn later.
 *
 * <p>How many words make 512 tokens depends on the engine's tokenizer and chat template: a {@link Calibration}
 * (tokens per word and the fixed overhead of a request) measured once against the engine ({@link Sweep} sends two
 * probes and reads {@code usage.prompt_tokens}) turns input_length into words, so that the engine's prompt_tokens
 * matches input_length within a few percent. Not thread-safe: the load client's context uses it.
 */
final class BlockPrompts {

    /**
     * Tokens per prompt word and the tokens a request has besides them (chat template, and for the simulated engine,
     * which counts body bytes ÷ 4, the JSON around the prompt).
     *
     * @param how how it was obtained, for the report
     */
    record Calibration(double tokensPerWord, double overheadTokens, String how) {
        /** One token per word, no overhead: when the engine reports no usage. */
        static final Calibration NONE = new Calibration(1, 0, "not calibrated (no usage.prompt_tokens): 1 token per "
                + "word assumed");

        /** From two probes: {@code words1} words gave {@code tokens1} prompt tokens, {@code words2} gave tokens2. */
        static Calibration of(int words1, int tokens1, int words2, int tokens2) {
            double perWord = (double) (tokens2 - tokens1) / (words2 - words1);
            if (!(perWord > 0.05) || tokens1 <= 0 || tokens2 <= 0) {
                return NONE;
            }
            double overhead = Math.max(0, tokens1 - perWord * words1);
            return new Calibration(perWord, overhead, String.format(Locale.ROOT, "probes of %d and %d words: %d and %d "
                    + "prompt tokens, so %.3f tokens per word plus %.1f per request", words1, words2, tokens1, tokens2,
                    perWord, overhead));
        }
    }

    /** Blocks kept (about 3 KB each); an evicted block is drawn again, identically. */
    private static final int CACHE = 8192;

    private final long seed;
    private final Calibration calibration;
    private final int blockWords;
    private final Map<Long, String> blocks = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, String> eldest) {
            return size() > CACHE;
        }
    };

    BlockPrompts(long seed, Calibration calibration) {
        this.seed = seed;
        this.calibration = calibration;
        this.blockWords = Math.max(1, (int) Math.round(TraceRecord.BLOCK_TOKENS / calibration.tokensPerWord()));
    }

    Calibration calibration() {
        return calibration;
    }

    /** Words in a whole block. */
    int blockWords() {
        return blockWords;
    }

    /** The words a prompt of {@code inputLength} tokens gets: (input_length − overhead) ÷ tokens per word, at least 1. */
    int words(int inputLength) {
        return (int) Math.max(1, Math.round((inputLength - calibration.overheadTokens()) / calibration.tokensPerWord()));
    }

    /**
     * The prompt of one record: its blocks, or, without hash ids, {@link #words} words of its own (drawn from
     * {@code unique}, so that it shares no prefix with any other).
     */
    String prompt(TraceRecord r, long unique) {
        int words = words(r.inputLength());
        long[] ids = r.hashIds();
        if (ids == null || ids.length == 0) {
            return PromptBuilder.prompt(words, new Random(Sweep.seed(seed, 5, 0) ^ Sweep.mix(unique)));
        }
        StringBuilder sb = new StringBuilder((int) Math.min(Integer.MAX_VALUE / 2, words * 6L));
        for (int i = 0; i < ids.length - 1; i++) {
            sb.append(block(ids[i])).append(' ');
        }
        int last = (int) Math.max(1, Math.min(blockWords, words - (long) (ids.length - 1) * blockWords));
        sb.append(firstWords(block(ids[ids.length - 1]), last));
        return sb.toString();
    }

    /** The whole block of one id: {@link #blockWords} words, the same for the same id and seed. */
    String block(long id) {
        return blocks.computeIfAbsent(id, k -> PromptBuilder.prompt(blockWords, new Random(Sweep.seed(seed, 4, 0)
                ^ Sweep.mix(k))));
    }

    /** The first {@code n} space-separated words of {@code text}. */
    static String firstWords(String text, int n) {
        int at = -1;
        for (int i = 0; i < n; i++) {
            at = text.indexOf(' ', at + 1);
            if (at < 0) {
                return text;
            }
        }
        return text.substring(0, at);
    }
}
