package dev.llmsidecar.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The open-loop arrival process: Poisson at the target rate, seeded, bounded in time and count. */
class PoissonArrivalsTest {

    @Test
    void theMeanRateIsTheTargetAndGapsAreExponential() {
        for (double rate : new double[] {0.5, 8, 200, 5000}) {
            long duration = (long) (20_000 / rate * 1e9); // about 20 000 arrivals
            long[] t = PoissonArrivals.schedule(rate, 7, duration, Integer.MAX_VALUE);
            double measured = t.length / (duration / 1e9);
            // 20 000 Poisson arrivals: the count's sd is ~0.7 %; 3 % is more than 4 sd
            assertThat(measured).as("rate %s", rate).isBetween(rate * 0.97, rate * 1.03);
            double[] gaps = new double[t.length - 1];
            for (int i = 1; i < t.length; i++) {
                gaps[i - 1] = (t[i] - t[i - 1]) / 1e9;
            }
            double mean = Arrays.stream(gaps).average().orElseThrow();
            double sd = Math.sqrt(Arrays.stream(gaps).map(g -> (g - mean) * (g - mean)).average().orElseThrow());
            // exponential: the coefficient of variation is 1 (a fixed-interval client would have 0)
            assertThat(sd / mean).as("rate %s", rate).isBetween(0.95, 1.05);
            // P(gap > mean) = e^-1
            double longer = Arrays.stream(gaps).filter(g -> g > 1 / rate).count() / (double) gaps.length;
            assertThat(longer).isBetween(Math.exp(-1) - 0.02, Math.exp(-1) + 0.02);
            assertThat(t).isSorted();
        }
    }

    @Test
    void boundedInTimeAndCount() {
        long[] byTime = PoissonArrivals.schedule(100, 1, 2_000_000_000L, Integer.MAX_VALUE);
        assertThat(byTime[byTime.length - 1]).isLessThan(2_000_000_000L);
        assertThat(byTime.length).isBetween(150, 250);
        assertThat(PoissonArrivals.schedule(100, 1, Long.MAX_VALUE, 37)).hasSize(37);
        assertThat(PoissonArrivals.schedule(100, 1, 2_000_000_000L, 0)).isEmpty();
        assertThat(PoissonArrivals.schedule(100, 1, 0, 10)).isEmpty();
    }

    @Test
    void theSameSeedGivesTheSameSchedule() {
        assertThat(PoissonArrivals.schedule(50, 3, 10_000_000_000L, 1000))
                .containsExactly(PoissonArrivals.schedule(50, 3, 10_000_000_000L, 1000));
        assertThat(PoissonArrivals.schedule(50, 3, 10_000_000_000L, 1000))
                .isNotEqualTo(PoissonArrivals.schedule(50, 4, 10_000_000_000L, 1000));
    }

    @Test
    void badRatesAreRefused() {
        for (double rate : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThatThrownBy(() -> new PoissonArrivals(rate, 1)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
