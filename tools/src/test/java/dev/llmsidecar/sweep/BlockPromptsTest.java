package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Prompts from hash ids: equal ids are equal text, distinct ids distinct text, a shared run of leading ids a shared
 * prefix; and, calibrated against the simulated engine's own counting (request body bytes ÷ 4, SimulatedEngine), the
 * prompt tokens it would report match input_length.
 */
class BlockPromptsTest {

    /** The simulated engine's prompt_tokens for a request the sweep sends: its body's bytes ÷ 4. */
    static int simTokens(Sweep sweep, String prompt, int maxTokens) {
        return Math.max(1, sweep.body(prompt, maxTokens).length() / 4);
    }

    static Sweep sweep() {
        return new Sweep(SweepOptions.parse("--model", "sim-llama-8b", "--rates", "1"), null, null);
    }

    /** The calibration the sweep's two probes (32 and 544 words, max_tokens 1) find against the simulated engine. */
    static BlockPrompts calibrated(Sweep sweep, long seed) {
        java.util.Random words = new java.util.Random(seed);
        int w1 = 32;
        int w2 = 32 + 512;
        return new BlockPrompts(seed, BlockPrompts.Calibration.of(w1, simTokens(sweep, PromptBuilder.prompt(w1, words),
                1), w2, simTokens(sweep, PromptBuilder.prompt(w2, words), 1)));
    }

    static TraceRecord record(int inputLength, long... ids) {
        return new TraceRecord(0, inputLength, 16, ids, null, null, null, Double.NaN, 1);
    }

    @Test
    void equalIdsAreEqualBlocksAndDistinctIdsDistinctOnes() {
        BlockPrompts p = new BlockPrompts(42, new BlockPrompts.Calibration(1.0, 0, "test"));
        assertThat(p.blockWords()).isEqualTo(512);
        assertThat(p.block(7)).isEqualTo(p.block(7)).isEqualTo(new BlockPrompts(42, p.calibration()).block(7));
        assertThat(p.block(7).split(" ")).hasSize(512);
        Set<String> blocks = new HashSet<>();
        Set<String> firstWords = new HashSet<>();
        for (long id = 0; id < 200; id++) {
            blocks.add(p.block(id));
            firstWords.add(BlockPrompts.firstWords(p.block(id), 3));
        }
        assertThat(blocks).as("distinct ids, distinct blocks").hasSize(200);
        assertThat(firstWords).as("and they differ from their first words on").hasSizeGreaterThan(195);
        assertThat(new BlockPrompts(43, p.calibration()).block(7)).as("another seed").isNotEqualTo(p.block(7));
        assertThat(p.block(TraceFile.MAX_HASH_ID)).isNotEqualTo(p.block(0));
    }

    @Test
    void sharedLeadingIdsAreASharedPrefixAndTheLastBlockIsCutFromItsOwnBlock() {
        BlockPrompts p = new BlockPrompts(1, new BlockPrompts.Calibration(1.0, 0, "test"));
        // turn 1 of a conversation: 700 tokens, blocks 10 and 11 (188 tokens of it); turn 2 grew to 1500 tokens
        String turn1 = p.prompt(record(700, 10, 11), 1);
        String turn2 = p.prompt(record(1500, 10, 11, 12), 2);
        String other = p.prompt(record(1500, 10, 20, 21), 3);
        assertThat(turn1.split(" ")).hasSize(700);
        assertThat(turn2.split(" ")).hasSize(1500);
        assertThat(turn2).startsWith(turn1).startsWith(p.block(10) + " " + p.block(11));
        assertThat(other).startsWith(p.block(10) + " ").doesNotStartWith(p.block(10) + " " + p.block(11));
        // without hash ids: a prompt of its own, the same for the same record
        assertThat(p.prompt(record(50), 9)).isEqualTo(p.prompt(record(50), 9)).isNotEqualTo(p.prompt(record(50), 8));
        assertThat(p.prompt(record(50), 9).split(" ")).hasSize(50);
    }

    @Test
    void calibratedPromptsMatchInputLengthInTheSimulatedEnginesCounting() {
        Sweep sweep = sweep();
        BlockPrompts p = calibrated(sweep, 42);
        // the simulated engine counts bytes ÷ 4: about 1.1 tokens per word, plus the JSON around the prompt
        assertThat(p.calibration().tokensPerWord()).isBetween(0.9, 1.4);
        assertThat(p.calibration().overheadTokens()).isBetween(20.0, 60.0);
        // a whole block is about 512 tokens by itself: its words' bytes ÷ 4
        for (long id = 0; id < 20; id++) {
            double blockTokens = (p.block(id).length() + 1) / 4.0;
            assertThat(blockTokens).as("block %d", id).isBetween(512 * 0.95, 512 * 1.05);
        }
        int[] lengths = {100, 300, 511, 512, 513, 600, 1000, 1500, 2048, 4000, 8191};
        long id = 1000;
        for (int length : lengths) {
            long[] ids = new long[TraceRecord.blocks(length)];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = i == 0 ? 1 : id++; // every prompt starts with the same block, as a shared system prompt
            }
            int tokens = simTokens(sweep, p.prompt(record(length, ids), 0), 16);
            // the request's overhead comes off the last block: a last block shorter than it (input_length just
            // past a multiple of 512) keeps one word, and the prompt is longer by up to the overhead
            int remainder = length - (ids.length - 1) * TraceRecord.BLOCK_TOKENS;
            double over = remainder <= p.calibration().overheadTokens() ? p.calibration().overheadTokens() : 0;
            assertThat((double) tokens).as("input_length %d", length).isBetween(length * 0.97,
                    length * 1.03 + over);
        }
    }
}
