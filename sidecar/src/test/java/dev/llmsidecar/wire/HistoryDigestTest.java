package dev.llmsidecar.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The digest's text: one text however it is split across calls (a string, text parts, a parser's segments), the same
 * from its characters and from its UTF-8 bytes however they are given, four lanes that still tell apart texts that
 * differ in one character, in their order, or in their length.
 */
class HistoryDigestTest {

    static final long KEY = 0x1234_5678_9abc_def0L;

    static long digest(String text, int[] cuts) {
        HistoryDigest d = new HistoryDigest(KEY);
        char[] c = text.toCharArray();
        int from = 0;
        for (int cut : cuts) {
            d.text(c, from, cut - from);
            from = cut;
        }
        d.text(c, from, c.length - from);
        d.endMessage(TurnCounter.Message.USER);
        return d.value();
    }

    @Test
    void aTextSplitAnywhereHasTheDigestOfTheWholeText() {
        Random random = new Random(45);
        for (int n = 0; n < 2000; n++) {
            int length = random.nextInt(n < 1000 ? 80 : 3000);
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < length; i++) {
                sb.append((char) ('a' + random.nextInt(26)));
            }
            String text = sb.toString();
            int[] cuts = random.ints(random.nextInt(6), 0, length + 1).sorted().toArray();
            assertThat(digest(text, cuts)).as("%d chars cut at %s", length, java.util.Arrays.toString(cuts))
                    .isEqualTo(digest(text, new int[0]));
        }
    }

    @Test
    void utf8BytesGivenOneEightOrThirtyTwoAtATimeAreTheTextTheyEncode() {
        Random random = new Random(46);
        String alphabet = "abcdefghij klmnopqrstuvwxyz0123456789\n\"éß€中😀";
        for (int n = 0; n < 2000; n++) {
            StringBuilder sb = new StringBuilder();
            int length = random.nextInt(n < 1000 ? 60 : 2000);
            while (sb.length() < length) {
                int at = random.nextInt(alphabet.length());
                sb.append(Character.isHighSurrogate(alphabet.charAt(at)) ? alphabet.substring(at, at + 2)
                        : Character.isLowSurrogate(alphabet.charAt(at)) ? "x" : alphabet.substring(at, at + 1));
            }
            String text = sb.toString();
            byte[] b = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            java.nio.ByteBuffer le = java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            HistoryDigest d = new HistoryDigest(KEY);
            int i = 0;
            while (i < b.length) {
                int step = random.nextInt(3);
                if (step == 2 && i + 32 <= b.length) {
                    d.utf8(le.getLong(i), le.getLong(i + 8), le.getLong(i + 16), le.getLong(i + 24));
                    i += 32;
                } else if (step >= 1 && i + 8 <= b.length) {
                    d.utf8(le.getLong(i));
                    i += 8;
                } else {
                    d.utf8Byte(b[i++]);
                }
            }
            d.endMessage(TurnCounter.Message.USER);
            assertThat(d.value()).as(text).isEqualTo(digest(text, new int[0]));
        }
    }

    @Test
    void textsThatDifferInOneCharacterItsPlaceOrTheirLengthDiffer() {
        Set<Long> seen = new HashSet<>();
        String base = "x".repeat(64);
        for (int i = 0; i < base.length(); i++) {
            char[] c = base.toCharArray();
            c[i] = 'y'; // the same character in each of the 64 places: each lane and word position
            assertThat(seen.add(digest(new String(c), new int[0]))).isTrue();
        }
        for (int length = 0; length < 70; length++) {
            assertThat(seen.add(digest("z".repeat(length), new int[0]))).as("length %d", length).isTrue();
        }
        // two words swapped between lanes
        assertThat(digest("aaaabbbbccccdddd", new int[0])).isNotEqualTo(digest("bbbbaaaaccccdddd", new int[0]));
        assertThat(digest("aaaabbbbccccdddd" + "eeee", new int[0]))
                .isNotEqualTo(digest("eeeebbbbccccdddd" + "aaaa", new int[0]));
    }
}
