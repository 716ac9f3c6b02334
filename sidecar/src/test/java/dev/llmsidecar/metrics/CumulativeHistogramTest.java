package dev.llmsidecar.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Percentiles from bucket differences, against values worked out by hand with PromQL's histogram_quantile algorithm
 * (promql/quantile.go, bucketQuantile), and the merge of label sets they rest on.
 */
class CumulativeHistogramTest {

    static final double INF = Double.POSITIVE_INFINITY;

    /** A histogram with these finite bounds, cumulative counts (the last one the +Inf bucket) and sum. */
    static CumulativeHistogram h(List<Double> bounds, double sum, long... cumulative) {
        return new CumulativeHistogram(bounds, Arrays.stream(cumulative).boxed().toList(), sum);
    }

    /** le: 0.1 -> 10, 0.2 -> 30, 0.5 -> 90, 1 -> 100, +Inf -> 100. */
    static CumulativeHistogram hundred() {
        return h(List.of(0.1, 0.2, 0.5, 1.0), 30, 10, 30, 90, 100, 100);
    }

    @Test
    void quantilesInterpolateLinearlyWithinTheBucketHoldingTheRank() {
        CumulativeHistogram h = hundred();
        // rank 50: bucket (0.2, 0.5] holds 60, 20 of them below the rank -> 0.2 + 0.3 * 20/60
        assertThat(h.quantile(0.5)).isCloseTo(0.3, within(1e-12));
        // rank 99: bucket (0.5, 1] holds 10, 9 below -> 0.5 + 0.5 * 0.9
        assertThat(h.quantile(0.99)).isCloseTo(0.95, within(1e-12));
        // rank 95: (0.5, 1], 5 of 10 -> 0.75
        assertThat(h.quantile(0.95)).isCloseTo(0.75, within(1e-12));
        // rank 5 in the first bucket: 0 is its lower bound -> 0.1 * 5/10
        assertThat(h.quantile(0.05)).isCloseTo(0.05, within(1e-12));
        // rank exactly on a bucket's cumulative count: that bucket's upper bound
        assertThat(h.quantile(0.3)).isCloseTo(0.2, within(1e-12));
        assertThat(h.quantile(0)).isEqualTo(0.0);
        assertThat(h.quantile(1)).isCloseTo(1.0, within(1e-12));
        assertThat(h.mean()).isCloseTo(0.3, within(1e-12));
    }

    @Test
    void aRankInTheInfBucketGivesTheHighestFiniteBound() {
        CumulativeHistogram h = h(List.of(0.1, 0.2), 0, 50, 80, 100);
        assertThat(h.quantile(0.9)).isEqualTo(0.2);
        assertThat(h.quantile(0.99)).isEqualTo(0.2);
        assertThat(h.quantileBucket(0.99)).containsExactly(0.2, INF);
        assertThat(h.quantileBucket(0.5)).containsExactly(0.0, 0.1);
        assertThat(h.quantileBucket(0.7)).containsExactly(0.1, 0.2);
    }

    @Test
    void specialCasesAsPromQl() {
        CumulativeHistogram empty = h(List.of(0.1), 0, 0, 0);
        assertThat(empty.quantile(0.5)).isNaN();
        assertThat(CumulativeHistogram.EMPTY.quantile(0.5)).isNaN();
        assertThat(h(List.of(), 1, 2).quantile(0.5)).as("no finite bucket").isNaN();
        // buckets without a +Inf bucket (nor a _count standing in) are no histogram
        CumulativeHistogram.Merge noInf = new CumulativeHistogram.Merge("h");
        noInf.add("h_bucket", Map.of("le", "0.1"), 1);
        noInf.add("h_bucket", Map.of("le", "0.2"), 2);
        noInf.add("h_sum", Map.of(), 0.2);
        assertThat(noInf.result()).isNull();
        assertThat(hundred().quantile(-0.1)).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(hundred().quantile(1.1)).isEqualTo(INF);
        assertThat(hundred().quantile(Double.NaN)).isNaN();
        // a non-monotonic bucket (inconsistent data) is lifted to the running maximum, as ensureMonotonic does
        CumulativeHistogram dip = h(List.of(0.1, 0.2, 0.5), 0, 40, 30, 100, 100);
        assertThat(dip.quantile(0.4)).isCloseTo(0.1, within(1e-12));
        assertThat(dip.quantile(0.5)).isCloseTo(0.2 + 0.3 * 10 / 60.0, within(1e-12));
    }

    @Test
    void theDifferenceOfTwoScrapesIsWhatHappenedInBetween() {
        CumulativeHistogram before = h(List.of(0.1, 0.2, 0.5, 1.0), 1.0, 5, 10, 10, 10, 10);
        CumulativeHistogram after = h(List.of(0.1, 0.2, 0.5, 1.0), 31.0, 15, 40, 100, 110, 110);
        CumulativeHistogram d = after.minus(before);
        assertThat(d.cumulativeCounts()).containsExactly(10L, 30L, 90L, 100L, 100L);
        assertThat(d.count()).isEqualTo(100);
        assertThat(d.sum()).isCloseTo(30, within(1e-9));
        assertThat(d.quantile(0.5)).isCloseTo(0.3, within(1e-12));
        // the earlier scrape alone would say something else: the difference is what the step did
        assertThat(after.quantile(0.5)).isNotCloseTo(0.3, within(0.01));
        // a series that appeared in between counts from zero
        assertThat(after.minus(CumulativeHistogram.EMPTY).count()).isEqualTo(110);
    }

    @Test
    void aResetBetweenScrapesIsRefused() {
        CumulativeHistogram before = hundred();
        CumulativeHistogram restarted = h(List.of(0.1, 0.2, 0.5, 1.0), 0.5, 1, 2, 3, 4, 4);
        assertThatThrownBy(() -> restarted.minus(before)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("reset");
        CumulativeHistogram otherBounds = h(List.of(0.25), 50, 200, 200);
        assertThatThrownBy(() -> otherBounds.minus(before)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("bounds");
    }

    @Test
    void shareAtAThresholdIsExactOnABoundAndInterpolatedInside() {
        CumulativeHistogram h = hundred();
        assertThat(h.hasBound(0.5)).isTrue();
        assertThat(h.shareAtOrBelow(0.5)).isEqualTo(0.9);
        assertThat(h.shareAtOrBelow(0.2)).isEqualTo(0.3);
        assertThat(h.hasBound(0.35)).isFalse();
        // halfway through (0.2, 0.5]: 30 + 60/2
        assertThat(h.shareAtOrBelow(0.35)).isCloseTo(0.6, within(1e-12));
        assertThat(h.shareAtOrBelow(0.05)).isCloseTo(0.05, within(1e-12));
        assertThat(h.shareAtOrBelow(5)).isEqualTo(1.0);
        // inside (highest bound, +Inf] nothing is known: those requests count as over the threshold
        CumulativeHistogram tail = h(List.of(0.1), 0, 60, 100);
        assertThat(tail.shareAtOrBelow(0.5)).isEqualTo(0.6);
    }

    @Test
    void labelSetsMergeOnTheBoundsTheyShareAndAreEvenedOutForExport() {
        CumulativeHistogram.Merge merge = new CumulativeHistogram.Merge("h");
        merge.add("h_bucket", Map.of("r", "0", "le", "0.3"), 5);
        merge.add("h_bucket", Map.of("r", "0", "le", "0.5"), 4); // a dip
        merge.add("h_bucket", Map.of("r", "0", "le", "+Inf"), 10);
        merge.add("h_sum", Map.of("r", "0"), 4);
        merge.add("h_bucket", Map.of("r", "1", "le", "0.25"), 1);
        merge.add("h_bucket", Map.of("r", "1", "le", "0.5"), 2);
        merge.add("h_count", Map.of("r", "1"), 3); // the total where +Inf is missing
        merge.add("h_sum", Map.of("r", "1"), 1.5);
        merge.add("h_max", Map.of("r", "1"), 9); // not one of the histogram's series
        merge.add("h_bucket", Map.of("r", "2", "le", "0.5"), 1); // no sum, no total: left out
        CumulativeHistogram h = merge.result();
        assertThat(h).isEqualTo(h(List.of(0.5), 5.5, 6, 13));
        assertThat(h(List.of(0.3, 0.5, 1.0), 1, 4, 3, 12, 10).evenedOut())
                .isEqualTo(h(List.of(0.3, 0.5, 1.0), 1, 4, 4, 10, 10));
        assertThat(h(List.of(0.3), 0, 2, -1).evenedOut()).isEqualTo(h(List.of(0.3), 0, 0, 0));
    }

    @Test
    void everyLabelValueSpellingOfInfinityIsRead() {
        assertThat(CumulativeHistogram.bound("+Inf")).isInfinite();
        assertThat(CumulativeHistogram.bound("1e+06")).isEqualTo(1e6);
        assertThat(CumulativeHistogram.bound("-Inf")).isNaN();
        assertThat(CumulativeHistogram.bound("x")).isNaN();
    }
}
