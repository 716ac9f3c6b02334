package dev.llmsidecar.sweep;

import java.util.Random;

/**
 * A prompt of about N tokens without a tokenizer: N words drawn (seeded) from common English words that are one
 * token each in the usual BPE and SentencePiece vocabularies (GPT-2/tiktoken, Llama, Qwen: with their leading space,
 * "the", "of", "water" ... are single tokens). Random words rather than one repeated word, so that two prompts share
 * no long prefix and the engine's prefix cache does not flatter TTFT. The chat template adds a few tokens; the
 * report shows the prompt tokens the engine reported per step next to the target.
 */
public final class PromptBuilder {

    static final String[] WORDS = {"the", "of", "and", "to", "in", "is", "that", "it", "was", "for", "on", "are",
        "as", "with", "at", "be", "this", "have", "from", "or", "one", "had", "by", "but", "not", "what", "all", "were",
        "we", "when", "your", "can", "said", "there", "use", "an", "each", "which", "she", "do", "how", "their", "if",
        "will", "up", "other", "about", "out", "many", "then", "them", "these", "so", "some", "her", "would", "make",
        "like", "him", "into", "time", "has", "look", "two", "more", "go", "see", "no", "way", "could", "people", "my",
        "than", "first", "water", "been", "call", "who", "its", "now", "find", "long", "down", "day", "did", "get",
        "come", "made", "may", "part"};

    private PromptBuilder() {
    }

    /** {@code tokens} words separated by spaces. */
    public static String prompt(int tokens, Random random) {
        StringBuilder sb = new StringBuilder(tokens * 5);
        for (int i = 0; i < tokens; i++) {
            if (i > 0) {
                sb.append(' ');
            }
            sb.append(WORDS[random.nextInt(WORDS.length)]);
        }
        return sb.toString();
    }
}
