package dev.llmsidecar.timeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.metrics.Buckets;
import dev.llmsidecar.metrics.ExemplarSource;
import dev.llmsidecar.metrics.HistogramMode;
import dev.llmsidecar.metrics.prometheus.LatencyHistogram;
import dev.llmsidecar.wire.Usage;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.NativeHistogramBuckets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.assertj.core.data.Offset;
import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;

/**
 * A stream's ITL in bounded memory against the samples themselves: what the sidecar exported before (every sample
 * observed one by one, from an array of every chunk's stamp) is the reference.
 */
class ItlHistogramTest {

    static final long MS = 1_000_000;
    /** The default ITL bounds, and an SLO threshold of 60 ms among them. */
    static final List<Double> BOUNDS = new Buckets(Buckets.Preset.DEFAULT, List.of(), List.of(), List.of(0.06))
            .bounds(Buckets.Family.PER_TOKEN);
    static final ItlGrid GRID = ItlGrid.of(BOUNDS);

    /**
     * Chunk stamps of a stream as engines write them, one token a chunk: a base inter-token time with log-normal
     * jitter, some tokens arriving in the same read as the one before (gap 0), and now and then a pause (a prefill of
     * another request scheduled in the same batch).
     */
    static long[] schedule(long seed, int chunks, double baseMs, double sigma) {
        Random random = new Random(seed);
        long[] stamps = new long[chunks];
        long at = 300 * MS;
        for (int i = 0; i < chunks; i++) {
            stamps[i] = at;
            double u = random.nextDouble();
            long gap = u < 0.15 ? 0 // the next token in the same read
                    : u < 0.17 ? (long) (random.nextDouble() * 2_000 * MS) // a pause
                    : (long) (baseMs * MS * Math.exp(sigma * random.nextGaussian()));
            at += gap;
        }
        return stamps;
    }

    static RequestResult timeline(long[] stamps, long usageTokens) {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE, GRID);
        for (long s : stamps) {
            t.onTokenChunk(s, false, -1);
        }
        if (usageTokens >= 0) {
            t.onUsage(new Usage(10, usageTokens, -1));
        }
        return t.finish(stamps[stamps.length - 1] + MS, Outcome.OK, 200);
    }

    static LatencyHistogram histogram() {
        return new LatencyHistogram(BOUNDS, HistogramMode.BOTH, 100_000, ExemplarSource.NONE);
    }

    /** What the sidecar recorded before: each gap, one sample a token (one token a chunk), observed one by one. */
    static LatencyHistogram reference(long[] stamps) {
        LatencyHistogram h = histogram();
        for (int i = 1; i < stamps.length; i++) {
            h.observe((stamps[i] - stamps[i - 1]) / 1e9);
        }
        return h;
    }

    static LatencyHistogram replayed(RequestResult r) {
        LatencyHistogram h = histogram();
        r.itl().forEach(h::observe);
        return h;
    }

    static void assertSameBuckets(LatencyHistogram expected, LatencyHistogram actual) {
        HistogramDataPointSnapshot e = expected.snapshot(Labels.EMPTY);
        HistogramDataPointSnapshot a = actual.snapshot(Labels.EMPTY);
        assertThat(a.getCount()).isEqualTo(e.getCount());
        assertThat(counts(a.getClassicBuckets())).as("classic buckets").isEqualTo(counts(e.getClassicBuckets()));
        assertThat(a.getNativeZeroCount()).as("native zero bucket").isEqualTo(e.getNativeZeroCount());
        assertThat(a.getNativeSchema()).isEqualTo(e.getNativeSchema());
        assertThat(nativeCounts(a.getNativeBucketsForPositiveValues()))
                .as("native buckets").isEqualTo(nativeCounts(e.getNativeBucketsForPositiveValues()));
        assertThat(a.getSum()).as("sum").isCloseTo(e.getSum(), Percentage.withPercentage(1e-9));
    }

    static List<Long> counts(ClassicHistogramBuckets b) {
        List<Long> out = new ArrayList<>();
        for (int i = 0; i < b.size(); i++) {
            out.add(b.getCount(i));
        }
        return out;
    }

    static List<String> nativeCounts(NativeHistogramBuckets b) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < b.size(); i++) {
            out.add(b.getBucketIndex(i) + ":" + b.getCount(i));
        }
        return out;
    }

    @Test
    void oneTokenChunksExportTheSameClassicBucketsAndSumAsEverySampleDid() {
        for (long seed = 1; seed <= 20; seed++) {
            long[] stamps = schedule(seed, 200 + (int) seed * 150, 25, 0.4);
            RequestResult r = timeline(stamps, stamps.length);
            assertThat(r.itl().sampleCount()).isEqualTo(stamps.length - 1);
            HistogramDataPointSnapshot e = reference(stamps).snapshot(Labels.EMPTY);
            HistogramDataPointSnapshot a = replayed(r).snapshot(Labels.EMPTY);
            assertThat(a.getCount()).isEqualTo(e.getCount());
            assertThat(counts(a.getClassicBuckets())).as("classic buckets").isEqualTo(counts(e.getClassicBuckets()));
            assertThat(a.getSum()).as("sum").isCloseTo(e.getSum(), Percentage.withPercentage(1e-9));
        }
    }

    /** Gaps within a factor of 8 (schema 5 at least): the native buckets are exact too. */
    @Test
    void oneTokenChunksExportTheSameNativeBucketsWhileTheGapsSpreadOverAFactorOfEight() {
        for (long seed = 1; seed <= 20; seed++) {
            long[] stamps = steady(seed, 200 + (int) seed * 150, 25, 0.2);
            RequestResult r = timeline(stamps, stamps.length);
            assertSameBuckets(reference(stamps), replayed(r));
        }
    }

    /** A steady stream: log-normal jitter around the base, no pauses, no batched reads. */
    static long[] steady(long seed, int chunks, double baseMs, double sigma) {
        Random random = new Random(seed);
        long[] stamps = new long[chunks];
        long at = 300 * MS;
        for (int i = 0; i < chunks; i++) {
            stamps[i] = at;
            double g = Math.max(-3, Math.min(3, random.nextGaussian()));
            at += (long) (baseMs * MS * Math.exp(sigma * g));
        }
        return stamps;
    }

    @Test
    void aLongStreamWithWideJitterStaysWithinItsBudgetAndItsClassicBucketsStayExact() {
        long[] stamps = schedule(7, 100_000, 30, 1.5); // gaps over six orders of magnitude
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE, GRID);
        for (long s : stamps) {
            t.onTokenChunk(s, false, -1);
        }
        RequestResult r = t.finish(stamps[stamps.length - 1], Outcome.OK, 200);
        assertThat(r.itl().values()).isLessThanOrEqualTo(ItlHistogram.MAX_BUCKETS);
        HistogramDataPointSnapshot e = reference(stamps).snapshot(Labels.EMPTY);
        HistogramDataPointSnapshot a = replayed(r).snapshot(Labels.EMPTY);
        assertThat(counts(a.getClassicBuckets())).isEqualTo(counts(e.getClassicBuckets()));
        assertThat(a.getSum()).isCloseTo(e.getSum(), Percentage.withPercentage(1e-9));
    }

    @Test
    void theHistogramIsReducedOnlyPastItsBudget() {
        ItlHistogram h = new ItlHistogram(GRID);
        // samples 1.09 % apart (one schema-6 bucket each): as many distinct buckets as the budget holds
        for (int i = 0; i < ItlHistogram.MAX_BUCKETS; i++) {
            h.add((long) (MS * Math.pow(1.0109, i)), 1);
        }
        assertThat(h.schema()).isEqualTo(ItlGrid.MAX_SCHEMA);
        // a spread of a factor of 76 (1 ms to 76 ms): reduced, but not to the coarsest schema, which may hold more
        for (int i = ItlHistogram.MAX_BUCKETS; i < 400; i++) {
            h.add((long) (MS * Math.pow(1.0109, i)), 1);
        }
        assertThat(h.buckets()).isLessThanOrEqualTo(ItlHistogram.MAX_BUCKETS);
        assertThat(h.schema()).isLessThan(ItlGrid.MAX_SCHEMA).isGreaterThan(0);
        assertThat(h.samples()).isEqualTo(400);
    }

    /**
     * Gaps in every power of two the grid has (1 ns to 2^20 s) and on both sides of every classic bound: more distinct
     * buckets than the budget even at the coarsest schema (one bucket per power of two and classic bucket). An engine
     * may pace its tokens so; the stream's samples must still all be kept, its classic buckets exact, and its memory
     * bounded by the grid, not by the stream's length.
     */
    @Test
    void gapsInEveryBucketOfTheCoarsestSchemaAreKept() {
        // five SLO classes' ITL thresholds besides the default bounds
        List<Double> bounds = new java.util.ArrayList<>(BOUNDS);
        bounds.addAll(List.of(0.0333, 0.045, 0.0666, 0.7, 3.3));
        ItlHistogram h = new ItlHistogram(ItlGrid.of(bounds));
        List<Long> gaps = new java.util.ArrayList<>();
        gaps.add(0L);
        for (int exp = -29; exp <= 20; exp++) {
            gaps.add((long) Math.scalb(1.01e9, exp)); // the first and the last classic bucket in each power of two
            gaps.add((long) Math.scalb(1.99e9, exp));
        }
        for (double b : bounds) {
            gaps.add((long) (b * 1e9));
            gaps.add((long) (b * 1e9) + 1);
        }
        for (int round = 0; round < 3; round++) {
            for (long gap : gaps) {
                h.add(gap, 1);
            }
        }
        assertThat(h.schema()).isEqualTo(0);
        assertThat(h.samples()).isEqualTo(3L * gaps.size());
        assertThat(h.buckets()).isGreaterThan(ItlHistogram.MAX_BUCKETS)
                .isLessThanOrEqualTo(ItlGrid.MAX_EXP - ItlGrid.MIN_EXP + 2 + bounds.size());
    }

    /** Every SLO threshold is a bound of the grid: whether a request met its ITL objective is decided exactly. */
    @Test
    void samplesAtOrUnderAThresholdAreExact() {
        for (long seed = 1; seed <= 20; seed++) {
            long[] stamps = schedule(seed, 1_000, 50, 0.3);
            RequestResult r = timeline(stamps, stamps.length);
            long exact = 0;
            for (int i = 1; i < stamps.length; i++) {
                exact += stamps[i] - stamps[i - 1] <= 60 * MS ? 1 : 0;
            }
            assertThat(r.itl().atOrUnder(60 * MS)).isEqualTo(exact);
        }
    }

    /**
     * Usage spread over chunks of unknown sizes: each gap carries outputTokens / chunks tokens. The quantiles of the
     * samples kept are within 2 % of the exact even spread (each gap's samples at gap * chunks / outputTokens) while
     * the gaps spread over less than a factor of 2 (schema 6).
     */
    @Test
    void usageSpreadEvenlyIsWithinTwoPercentOfTheExactSpread() {
        for (long seed = 1; seed <= 10; seed++) {
            long[] stamps = steady(seed, 2_000, 80, 0.15);
            long tokens = stamps.length * 7L / 2; // 3.5 tokens a chunk
            RequestResult r = timeline(stamps, tokens);
            double perChunk = (double) tokens / stamps.length;
            double[] exact = new double[stamps.length - 1];
            for (int i = 1; i < stamps.length; i++) {
                exact[i - 1] = (stamps[i] - stamps[i - 1]) / 1e9 / perChunk;
            }
            Arrays.sort(exact);
            assertThat(r.itl().sampleCount()).isEqualTo(Math.round((stamps.length - 1) * perChunk));
            for (double q : new double[] {0.5, 0.9, 0.99}) {
                double want = exact[(int) Math.ceil(q * exact.length) - 1];
                assertThat(r.itl().quantileSeconds(q)).as("p%s, seed %d", q * 100, seed)
                        .isCloseTo(want, Percentage.withPercentage(2));
            }
        }
    }

    @Test
    void absurdEngineCountsAreCappedAndNoted() {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE, GRID);
        t.onTokenChunk(100 * MS, false, 1);
        t.onTokenChunk(120 * MS, false, Integer.MAX_VALUE - 1L); // continuous usage jumping by 2^31
        t.onTokenChunk(140 * MS, false, -1);
        t.onUsage(new Usage(1L << 31, (1L << 31) - 1, 1L << 31, -1));
        RequestResult r = t.finish(150 * MS, Outcome.OK, 200);
        assertThat(r.promptTokens()).isEqualTo(ClampedValue.MAX_TOKENS);
        assertThat(r.outputTokens()).isEqualTo(ClampedValue.MAX_TOKENS);
        assertThat(r.cachedTokens()).isEqualTo(ClampedValue.MAX_TOKENS);
        assertThat(r.clamped()).containsExactlyInAnyOrder(ClampedValue.PROMPT_TOKENS, ClampedValue.COMPLETION_TOKENS,
                ClampedValue.CACHED_TOKENS, ClampedValue.TOKENS_PER_CHUNK);
        // the jump counts 4096 samples, the chunk without a count one
        assertThat(r.itl().sampleCount()).isEqualTo(ClampedValue.MAX_TOKENS_PER_CHUNK + 1);
        assertThat(r.itl().values()).isLessThanOrEqualTo(2);
    }

    @Test
    void anAbsurdUsageSpreadIsCappedPerChunk() {
        long[] stamps = {100 * MS, 120 * MS, 140 * MS};
        RequestResult r = timeline(stamps, (1L << 31) - 1);
        assertThat(r.clamped()).contains(ClampedValue.COMPLETION_TOKENS, ClampedValue.TOKENS_PER_CHUNK);
        assertThat(r.itl().sampleCount()).isEqualTo(2 * ClampedValue.MAX_TOKENS_PER_CHUNK);
        assertThat(r.tpotNanos()).isEqualTo(40 * MS / (ClampedValue.MAX_TOKENS - 1));
    }

    @Test
    void theValuesSumToTheExactSum() {
        long[] stamps = schedule(3, 5_000, 20, 0.8);
        RequestResult r = timeline(stamps, stamps.length);
        double[] sum = {0};
        r.itl().forEach((s, c) -> sum[0] += s * c);
        long exactNanos = stamps[stamps.length - 1] - stamps[0];
        assertThat(sum[0]).isCloseTo(exactNanos / 1e9, Offset.offset(1e-9));
    }
}
