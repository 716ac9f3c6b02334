package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.metrics.CumulativeHistogram;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The knee over step medians (docs/slo-guide.md section 7's criterion) and goodput at the SLO's target. */
class SweepAnalysisTest {

    static StepResult.Latency median(double seconds, int count) {
        return new StepResult.Latency(CumulativeHistogram.EMPTY, count, seconds, seconds, seconds, seconds,
                new double[] {0, seconds}, new double[] {0, seconds});
    }

    static StepResult step(double load, double ttft, double tpot, double share, double throughput) {
        StepResult.SloShare slo = Double.isNaN(share) ? null
                : new StepResult.SloShare("histograms", share, share, share, true, 100, share * 100, Double.NaN);
        StepResult.Latency none = median(Double.NaN, 0);
        return new StepResult(1, load, 10, 0, median(ttft, 100), median(tpot, 100), none, none, none, none,
                throughput * 10, throughput, throughput * 100, Map.of("ok", throughput * 10), 100, 100, slo,
                Double.NaN, 0, ClientSummary.of(List.of(), 0));
    }

    @Test
    void theKneeIsTheLastStepBeforeLatencyOutgrowsLoad() {
        // 8 slots: TTFT flat to 8, then each doubling of the streams adds a full service time of waiting
        List<StepResult> steps = List.of(step(1, 0.050, 0.010, 1, 5), step(2, 0.051, 0.010, 1, 10),
                step(4, 0.052, 0.010, 1, 20), step(8, 0.053, 0.011, 1, 40), step(16, 0.250, 0.011, 0, 40),
                step(32, 0.650, 0.011, 0, 40));
        SweepAnalysis.Knee knee = SweepAnalysis.knee(steps);
        assertThat(knee.found()).isTrue();
        assertThat(knee.load()).isEqualTo(8);
        assertThat(knee.metric()).isEqualTo("ttft");
        assertThat(knee.elasticity()).isGreaterThan(2);
        // any order in, load order out
        List<StepResult> shuffled = new ArrayList<>(steps);
        java.util.Collections.reverse(shuffled);
        assertThat(SweepAnalysis.knee(shuffled).load()).isEqualTo(8);
    }

    @Test
    void noKneeWhenLatencyGrowsSlowerThanLoadOrTheRiseDoesNotHold() {
        // batching: twice the load, 20 % more latency: elasticity 0.26
        assertThat(SweepAnalysis.knee(List.of(step(1, 0.1, 0.01, 1, 1), step(2, 0.12, 0.012, 1, 2),
                step(4, 0.144, 0.0144, 1, 4))).found()).isFalse();
        // a spike at one step that falls back is a changed mix, not a queue
        assertThat(SweepAnalysis.knee(List.of(step(1, 0.1, 0.01, 1, 1), step(2, 0.5, 0.01, 1, 2),
                step(4, 0.1, 0.01, 1, 4))).found()).isFalse();
        // sub-2-ms noise on a fast engine is not a knee, however steep
        assertThat(SweepAnalysis.knee(List.of(step(1, 0.0005, 0.0001, 1, 1), step(2, 0.0015, 0.0001, 1, 2)))
                .found()).isFalse();
    }

    @Test
    void theLowerOfTheTtftAndTpotKnees() {
        // TPOT rises first (memory-bound decode saturating at 4), TTFT only at 8
        List<StepResult> steps = List.of(step(2, 0.05, 0.010, 1, 1), step(4, 0.05, 0.011, 1, 2),
                step(8, 0.055, 0.030, 1, 3), step(16, 0.3, 0.060, 1, 3));
        SweepAnalysis.Knee knee = SweepAnalysis.knee(steps);
        assertThat(knee.load()).isEqualTo(4);
        assertThat(knee.metric()).isEqualTo("tpot");
    }

    @Test
    void goodputIsTheHighestLoadMeetingTheTargetBeforeTheFirstMiss() {
        List<StepResult> steps = List.of(step(10, 0.05, 0.01, 1.0, 10), step(20, 0.05, 0.01, 0.995, 20),
                step(30, 0.06, 0.01, 0.991, 29), step(40, 0.2, 0.01, 0.6, 38), step(50, 0.05, 0.01, 0.995, 39));
        SweepAnalysis.Goodput g = SweepAnalysis.goodput(steps, 0.99);
        assertThat(g.found()).isTrue();
        assertThat(g.load()).isEqualTo(30);
        assertThat(g.throughput()).isEqualTo(29);
        assertThat(g.goodThroughput()).isCloseTo(0.991 * 29, org.assertj.core.api.Assertions.within(1e-9));
        assertThat(g.laterPassing()).containsExactly(50.0);
        assertThat(SweepAnalysis.goodput(List.of(step(10, 1, 1, 0.5, 10)), 0.99).found()).isFalse();
        assertThat(SweepAnalysis.goodput(List.of(step(10, 1, 1, Double.NaN, 10)), 0.99).found()).isFalse();
    }
}
