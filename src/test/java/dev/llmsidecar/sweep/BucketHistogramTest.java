package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Percentiles from bucket differences, against values worked out by hand with PromQL's histogram_quantile algorithm
 * (promql/quantile.go, bucketQuantile), and the scrape parsing they rest on.
 */
class BucketHistogramTest {

    static final double INF = Double.POSITIVE_INFINITY;

    /** le: 0.1 -> 10, 0.2 -> 30, 0.5 -> 90, 1 -> 100, +Inf -> 100. */
    static BucketHistogram hundred() {
        return new BucketHistogram(new double[] {0.1, 0.2, 0.5, 1, INF}, new double[] {10, 30, 90, 100, 100}, 100,
                30);
    }

    @Test
    void quantilesInterpolateLinearlyWithinTheBucketHoldingTheRank() {
        BucketHistogram h = hundred();
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
        BucketHistogram h = new BucketHistogram(new double[] {0.1, 0.2, INF}, new double[] {50, 80, 100}, 100, 0);
        assertThat(h.quantile(0.9)).isEqualTo(0.2);
        assertThat(h.quantile(0.99)).isEqualTo(0.2);
        assertThat(h.quantileBucket(0.99)).containsExactly(0.2, INF);
        assertThat(h.quantileBucket(0.5)).containsExactly(0.0, 0.1);
        assertThat(h.quantileBucket(0.7)).containsExactly(0.1, 0.2);
    }

    @Test
    void specialCasesAsPromQl() {
        BucketHistogram empty = new BucketHistogram(new double[] {0.1, INF}, new double[] {0, 0}, 0, 0);
        assertThat(empty.quantile(0.5)).isNaN();
        assertThat(BucketHistogram.EMPTY.quantile(0.5)).isNaN();
        BucketHistogram noInf = new BucketHistogram(new double[] {0.1, 0.2}, new double[] {1, 2}, 2, 0);
        assertThat(noInf.quantile(0.5)).isNaN();
        assertThat(hundred().quantile(-0.1)).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(hundred().quantile(1.1)).isEqualTo(INF);
        assertThat(hundred().quantile(Double.NaN)).isNaN();
        // a non-monotonic bucket (inconsistent data) is lifted to the running maximum, as ensureMonotonic does
        BucketHistogram dip = new BucketHistogram(new double[] {0.1, 0.2, 0.5, INF}, new double[] {40, 30, 100, 100},
                100, 0);
        assertThat(dip.quantile(0.4)).isCloseTo(0.1, within(1e-12));
        assertThat(dip.quantile(0.5)).isCloseTo(0.2 + 0.3 * 10 / 60.0, within(1e-12));
    }

    @Test
    void theDifferenceOfTwoScrapesIsWhatHappenedInBetween() {
        BucketHistogram before = new BucketHistogram(new double[] {0.1, 0.2, 0.5, 1, INF},
                new double[] {5, 10, 10, 10, 10}, 10, 1.0);
        BucketHistogram after = new BucketHistogram(new double[] {0.1, 0.2, 0.5, 1, INF},
                new double[] {15, 40, 100, 110, 110}, 110, 31.0);
        BucketHistogram d = after.minus(before);
        assertThat(d.cumulative()).containsExactly(10, 30, 90, 100, 100);
        assertThat(d.count()).isEqualTo(100);
        assertThat(d.sum()).isCloseTo(30, within(1e-9));
        assertThat(d.quantile(0.5)).isCloseTo(0.3, within(1e-12));
        // the earlier scrape alone would say something else: the difference is what the step did
        assertThat(after.quantile(0.5)).isNotCloseTo(0.3, within(0.01));
        // a series that appeared in between counts from zero
        assertThat(after.minus(BucketHistogram.EMPTY).count()).isEqualTo(110);
    }

    @Test
    void aResetBetweenScrapesIsRefused() {
        BucketHistogram before = hundred();
        BucketHistogram restarted = new BucketHistogram(new double[] {0.1, 0.2, 0.5, 1, INF},
                new double[] {1, 2, 3, 4, 4}, 4, 0.5);
        assertThatThrownBy(() -> restarted.minus(before)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("reset");
        BucketHistogram otherBounds = new BucketHistogram(new double[] {0.25, INF}, new double[] {200, 200}, 200, 50);
        assertThatThrownBy(() -> otherBounds.minus(before)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("bounds");
    }

    @Test
    void shareAtAThresholdIsExactOnABoundAndInterpolatedInside() {
        BucketHistogram h = hundred();
        assertThat(h.hasBound(0.5)).isTrue();
        assertThat(h.shareAtOrBelow(0.5)).isEqualTo(0.9);
        assertThat(h.shareAtOrBelow(0.2)).isEqualTo(0.3);
        assertThat(h.hasBound(0.35)).isFalse();
        // halfway through (0.2, 0.5]: 30 + 60/2
        assertThat(h.shareAtOrBelow(0.35)).isCloseTo(0.6, within(1e-12));
        assertThat(h.shareAtOrBelow(0.05)).isCloseTo(0.05, within(1e-12));
        assertThat(h.shareAtOrBelow(5)).isEqualTo(1.0);
        // inside (highest bound, +Inf] nothing is known: those requests count as over the threshold
        BucketHistogram tail = new BucketHistogram(new double[] {0.1, INF}, new double[] {60, 100}, 100, 0);
        assertThat(tail.shareAtOrBelow(0.5)).isEqualTo(0.6);
    }

    @Test
    void theSidecarsExpositionIsSummedOverLabelSets() {
        String text = """
                # HELP gen_ai_server_time_to_first_token_seconds TTFT
                # TYPE gen_ai_server_time_to_first_token_seconds histogram
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="a",le="0.1",} 3.0
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="a",le="0.2",} 5.0
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="a",le="+Inf",} 5.0
                gen_ai_server_time_to_first_token_seconds_count{model="m",operation="chat",streaming="true",tenant="a",} 5.0
                gen_ai_server_time_to_first_token_seconds_sum{model="m",operation="chat",streaming="true",tenant="a",} 0.5
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="b",le="0.1",} 1.0 # {trace_id="abc",span_id="def"} 0.05 1.7e9
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="b",le="0.2",} 4.0
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="b",le="+Inf",} 5.0
                gen_ai_server_time_to_first_token_seconds_count{model="m",operation="chat",streaming="true",tenant="b",} 5.0
                gen_ai_server_time_to_first_token_seconds_sum{model="m",operation="chat",streaming="true",tenant="b",} 1.5
                gen_ai_server_time_to_first_token_seconds_bucket{model="other",operation="chat",streaming="true",le="0.1",} 100.0
                gen_ai_server_time_to_first_token_seconds_bucket{model="other",operation="chat",streaming="true",le="+Inf",} 100.0
                llm_sidecar_requests_total{model="m",operation="chat",outcome="ok",streaming="true",} 9.0
                llm_sidecar_requests_total{model="m",operation="chat",outcome="upstream_error",streaming="true",} 1.0
                llm_sidecar_saturation_knee_requests NaN
                llm_sidecar_requests_in_flight 2.0
                weird_label{path="a \\"quoted\\", comma",x="y"} 7
                """;
        Exposition e = Exposition.parse(text);
        BucketHistogram h = e.histogram("gen_ai_server_time_to_first_token_seconds",
                SidecarSeries.streams("m", "chat"));
        assertThat(h.bounds()).containsExactly(0.1, 0.2, INF);
        assertThat(h.cumulative()).containsExactly(4, 9, 10);
        assertThat(h.count()).isEqualTo(10);
        assertThat(h.sum()).isEqualTo(2.0);
        assertThat(e.sum("llm_sidecar_requests_total", Map.of("model", "m"))).isEqualTo(10);
        assertThat(e.labelValues("llm_sidecar_requests_total", "outcome")).containsExactly("ok", "upstream_error");
        assertThat(e.gauge("llm_sidecar_saturation_knee_requests")).isNaN();
        assertThat(e.gauge("llm_sidecar_requests_in_flight")).isEqualTo(2);
        assertThat(e.gauge("absent")).isNaN();
        assertThat(e.select("weird_label", Map.of("path", "a \"quoted\", comma"))).hasSize(1);
        assertThat(e.histogram("nothing", Map.of()).isEmpty()).isTrue();
        assertThatThrownBy(() -> Exposition.parse("ok 1\nbroken{le=0.1} 1\n"))
                .hasMessageContaining("metrics line 2");
    }
}
