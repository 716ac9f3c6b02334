package dev.llmsidecar.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The tools' one percentile rule: nearest rank over an HdrHistogram of 3 significant digits. */
class LatenciesTest {

    static final long MS = 1_000_000;

    @Test
    void percentilesAreTheNearestRankWithinATenthOfAPercent() {
        Latencies l = new Latencies();
        for (long i = 1; i <= 1000; i++) {
            l.record(i * MS);
        }
        assertThat(l.count()).isEqualTo(1000);
        assertThat(l.percentile(50)).isCloseTo(500 * MS, within(0.5 * MS));
        assertThat(l.percentile(99)).isCloseTo(990 * MS, within(1.0 * MS));
        assertThat(l.percentile(100)).isEqualTo(l.max()).isCloseTo(1000 * MS, within(1.0 * MS));
        assertThat(l.mean()).isEqualTo(500.5 * MS); // exact, not from the buckets
    }

    @Test
    void noInterpolationBetweenSamples() {
        Latencies l = new Latencies();
        for (long v : new long[] {40, 10, 30, 20}) {
            l.record(v * MS);
        }
        // numpy's default would say 25 ms and 39.7 ms: the rule here returns samples
        assertThat(l.percentile(50)).isCloseTo(20 * MS, within(0.02 * MS));
        assertThat(l.percentile(99)).isCloseTo(40 * MS, within(0.04 * MS));
    }

    @Test
    void weightsMergesAndEdges() {
        Latencies a = new Latencies();
        a.record(10 * MS, 3);
        Latencies b = new Latencies();
        b.record(20 * MS);
        b.record(-5); // a clock tick apart: 0
        b.record(7 * MS, 0); // no weight: nothing
        a.add(b);
        assertThat(a.count()).isEqualTo(5);
        assertThat(a.percentile(20)).isZero();
        assertThat(a.percentile(60)).isCloseTo(10 * MS, within(0.01 * MS));
        assertThat(a.percentile(90)).isCloseTo(20 * MS, within(0.02 * MS));
        assertThat(a.mean()).isEqualTo(10.0 * MS);
        Latencies empty = new Latencies();
        assertThat(empty.percentile(50)).isNaN();
        assertThat(empty.mean()).isNaN();
        assertThat(empty.max()).isNaN();
        Latencies huge = new Latencies();
        huge.record(3_600_000 * MS); // an hour: the histogram grows
        assertThat(huge.percentile(50)).isCloseTo(3_600_000.0 * MS, within(3_600.0 * MS));
    }
}
