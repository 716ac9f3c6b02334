package dev.llmsidecar.fuzz;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * How a stream is cut into reads, as the fuzzer chose it: read lengths taken in turn, cycling, so a few consumed
 * values cut a stream of any length; an empty read is allowed (a decoder must take one in its stride). With no
 * lengths the stream is one read.
 *
 * <p>Everything is consumed with integral calls, which the {@link FuzzedDataProvider} takes from the end of the
 * input: the stream itself is what remains at the front, so a seed file reads as the stream followed by a few
 * control bytes (all zero: no split at all).
 */
final class ReadSplits {

    static final int MAX_LENGTHS = 16;

    private final int[] lengths;

    ReadSplits(int[] lengths) {
        this.lengths = lengths;
    }

    static ReadSplits whole() {
        return new ReadSplits(new int[0]);
    }

    /** Consumes a count (0..{@value #MAX_LENGTHS}) and that many lengths in {@code [0, maxLength]}. */
    static ReadSplits consume(FuzzedDataProvider data, int maxLength) {
        int[] lengths = new int[data.consumeInt(0, MAX_LENGTHS)];
        for (int i = 0; i < lengths.length; i++) {
            lengths[i] = data.consumeInt(0, maxLength);
        }
        return new ReadSplits(lengths);
    }

    /** The reads covering {@code total} bytes, as {@code [from, to)} pairs in order. */
    List<int[]> reads(int total) {
        List<int[]> reads = new ArrayList<>();
        boolean progress = Arrays.stream(lengths).anyMatch(n -> n > 0);
        int from = 0;
        for (int i = 0; progress && from < total; i++) {
            int to = Math.min(total, from + lengths[i % lengths.length]);
            reads.add(new int[] {from, to});
            from = to;
        }
        if (from < total || reads.isEmpty()) {
            reads.add(new int[] {from, total});
        }
        return reads;
    }

    @Override
    public String toString() {
        return Arrays.toString(lengths);
    }
}
