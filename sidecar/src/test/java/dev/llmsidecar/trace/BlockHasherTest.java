package dev.llmsidecar.trace;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The keyed chain of block ids: equal prefixes share their leading ids and nothing after the first difference; ids
 * are below 2^53; another secret or another model gives other ids; the mapping onto ceil(input_length / 512) ids.
 */
class BlockHasherTest {

    static final byte[] SECRET = "0123456789abcdef-secret".getBytes(StandardCharsets.UTF_8);

    static byte[] text(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static BlockHasher.Chain chain(BlockHasher h, String content) {
        byte[] b = text(content);
        return h.chain("/v1/chat/completions\0m", b, b.length, true);
    }

    @Test
    void equalPrefixesShareTheirLeadingIdsAndAChangeChangesEveryLaterOne() {
        BlockHasher h = new BlockHasher(SECRET, 8);
        long[] a = chain(h, "AAAAAAAABBBBBBBBCCCCCCCCDDDD").ids();
        long[] b = chain(h, "AAAAAAAABBBBBBBBXCCCCCCCDDDD").ids();
        long[] c = chain(h, "AAAAAAAXBBBBBBBBCCCCCCCCDDDD").ids();
        assertThat(a).hasSize(4);
        assertThat(b[0]).isEqualTo(a[0]);
        assertThat(b[1]).isEqualTo(a[1]);
        // chained: block 4 is the same text, but what came before it differs
        assertThat(b[2]).isNotEqualTo(a[2]);
        assertThat(b[3]).isNotEqualTo(a[3]);
        for (int i = 0; i < 4; i++) {
            assertThat(c[i]).as("a change in the first block changes id " + i).isNotEqualTo(a[i]);
        }
        // the full blocks' ids again; the last block (4 of 8 bytes) gets a random one
        long[] again = chain(h, "AAAAAAAABBBBBBBBCCCCCCCCDDDD").ids();
        assertThat(Arrays.copyOf(again, 3)).isEqualTo(Arrays.copyOf(a, 3));
        assertThat(again[3]).isNotEqualTo(a[3]);
        // the same blocks at another position are other ids
        assertThat(chain(h, "BBBBBBBBAAAAAAAA").ids()[1]).isNotEqualTo(a[0]);
    }

    @Test
    void idsAreBelow2To53AndSpreadOverThatRange() {
        BlockHasher h = new BlockHasher(SECRET, 4);
        long[] ids = chain(h, "x".repeat(4000)).ids();
        long max = Arrays.stream(ids).max().orElseThrow();
        assertThat(Arrays.stream(ids).allMatch(id -> id >= 0 && id <= BlockHasher.MAX_ID)).isTrue();
        assertThat(max).isGreaterThan(BlockHasher.MAX_ID / 2);
        assertThat(Arrays.stream(ids).distinct().count()).isEqualTo(ids.length);
    }

    @Test
    void anotherSecretOrAnotherModelGivesOtherIds() {
        BlockHasher one = new BlockHasher(SECRET, 8);
        BlockHasher two = new BlockHasher(text("another-secret-of-16-bytes"), 8);
        byte[] b = text("the same prompt text, twice");
        long[] a = one.chain("r\0m", b, b.length, true).ids();
        long[] other = two.chain("r\0m", b, b.length, true).ids();
        long[] model = one.chain("r\0m2", b, b.length, true).ids();
        for (int i = 0; i < a.length; i++) {
            assertThat(other[i]).isNotEqualTo(a[i]);
            assertThat(model[i]).isNotEqualTo(a[i]);
        }
        assertThat(one.session("conversation-1")).hasSize(16).matches("[0-9a-f]{16}")
                .isEqualTo(one.session("conversation-1")).isNotEqualTo(one.session("conversation-2"))
                .isNotEqualTo(two.session("conversation-1"));
    }

    @Test
    void moreByteBlocksThanIdsKeepTheFirstFewerAreContinuedByIndex() {
        BlockHasher h = new BlockHasher(SECRET, 8);
        BlockHasher.Chain c = chain(h, "AAAAAAAABBBBBBBBCCCCCCCC");
        assertThat(h.ids(c, 2)).containsExactly(c.ids()[0], c.ids()[1]);
        long[] five = h.ids(c, 5);
        assertThat(Arrays.copyOf(five, 3)).isEqualTo(c.ids());
        // deterministic: equal prompts keep equal ids past their bytes
        assertThat(h.ids(chain(h, "AAAAAAAABBBBBBBBCCCCCCCC"), 5)).isEqualTo(five);
        assertThat(h.ids(chain(h, "AAAAAAAABBBBBBBBCCCCCCCX"), 5)[4]).isNotEqualTo(five[4]);
        assertThat(Arrays.stream(five).distinct().count()).isEqualTo(5);
    }

    /**
     * A prompt shorter than one block shares nothing, not even with itself: its one id would confirm a guess of the
     * whole prompt (a PIN in a one-line prompt, 10 000 guesses) to whoever can send traffic and read the records.
     */
    @Test
    void aBlockThatIsNotFullGetsARandomIdAndSoDoesEveryIdAfterIt() {
        BlockHasher h = new BlockHasher(SECRET, 8);
        BlockHasher.Chain one = chain(h, "PIN 4711");
        assertThat(one.ids()).hasSize(1);
        BlockHasher.Chain shortOne = chain(h, "PIN 471");
        BlockHasher.Chain shortTwo = chain(h, "PIN 471");
        assertThat(shortOne.ids()[0]).isNotEqualTo(shortTwo.ids()[0]);
        // continued past the bytes (input_length from the engine's count): random after a short block too
        long[] x = h.ids(shortOne, 3);
        long[] y = h.ids(shortTwo, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(x[i]).isNotEqualTo(y[i]);
        }
        // a full block still shares: one block of exactly 8 bytes
        assertThat(chain(h, "PIN 4711").ids()).isEqualTo(one.ids());
        assertThat(h.ids(chain(h, "PIN 4711"), 3)).isEqualTo(h.ids(one, 3));
    }

    @Test
    void aPromptOnlyPartlyHashedSharesNothingPastWhatWasHashed() {
        BlockHasher h = new BlockHasher(SECRET, 8);
        byte[] b = text("AAAAAAAABBBBBBBB");
        long[] x = h.ids(h.chain("r\0m", b, b.length, false), 4);
        long[] y = h.ids(h.chain("r\0m", b, b.length, false), 4);
        assertThat(x[0]).isEqualTo(y[0]);
        assertThat(x[1]).isEqualTo(y[1]);
        assertThat(x[2]).isNotEqualTo(y[2]);
        assertThat(x[3]).isNotEqualTo(y[3]);
        // no body at all: ids of its own
        assertThat(h.ids(null, 3)).hasSize(3).doesNotContain(x);
    }
}
