package dev.llmsidecar.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class LatencyWindowsDriftTest {

    private static final Duration ONE_MIN = Duration.ofMinutes(1);
    private static final Duration FIVE_MIN = Duration.ofMinutes(5);
    private static final Duration FIFTEEN_MIN = Duration.ofMinutes(15);
    private static final long BASELINE_NANOS = 100_000_000L;
    private static final long SLOW_NANOS = 300_000_000L;

    private final FakeClock clock = new FakeClock();
    private final LatencyWindows windows = new LatencyWindows(clock, List.of(ONE_MIN, FIVE_MIN, FIFTEEN_MIN));

    /** 10 000 samples of 100 ms over minutes 0-3, then {@code slow} samples of 300 ms in minute 4. */
    private void slowdown(int slow) {
        for (int minute = 0; minute < 4; minute++) {
            windows.record("m", Metric.TTFT, BASELINE_NANOS, 2_500);
            clock.advance(ONE_MIN);
        }
        windows.record("m", Metric.TTFT, SLOW_NANOS, slow);
    }

    @Test
    void recentSlowdownGivesTheRatioOfTheTwoP99s() {
        slowdown(50);
        // baseline: 10 050 samples, its p99 is sample 9 950 (ceil 0.99 n), still a 100 ms one
        Histogram recent = reference();
        recent.recordValueWithCount(SLOW_NANOS, 50);
        Histogram baseline = reference();
        baseline.recordValueWithCount(BASELINE_NANOS, 10_000);
        baseline.recordValueWithCount(SLOW_NANOS, 50);
        double expected = ratioOfP99s(recent, baseline);

        double drift = windows.drift("m", Metric.TTFT, ONE_MIN, FIVE_MIN, 50);

        assertThat(drift).isEqualTo(expected);
        assertThat(drift).isCloseTo(3.0, within(3.0 * 0.01));
    }

    @Test
    void baselineIncludingTheShortWindowDampsTheRatio() {
        slowdown(200);
        // 200 of 10 200 samples is more than 1 %: the baseline p99 is now a 300 ms sample too
        double drift = windows.drift("m", Metric.TTFT, ONE_MIN, FIVE_MIN, 50);
        assertThat(drift).isEqualTo(1.0);
    }

    @Test
    void ratioBelowOneWhenTheRecentTailIsFaster() {
        windows.record("m", Metric.E2E, SLOW_NANOS, 1_000);
        clock.advance(Duration.ofMinutes(2));
        windows.record("m", Metric.E2E, BASELINE_NANOS, 5);
        Histogram recent = reference();
        recent.recordValueWithCount(BASELINE_NANOS, 5);
        Histogram baseline = reference();
        baseline.recordValueWithCount(SLOW_NANOS, 1_000);
        baseline.recordValueWithCount(BASELINE_NANOS, 5);
        double expected = ratioOfP99s(recent, baseline);

        assertThat(windows.drift("m", Metric.E2E, ONE_MIN, FIFTEEN_MIN, 5)).isEqualTo(expected)
                .isCloseTo(1.0 / 3, within(0.01));
    }

    @Test
    void notANumberBelowMinSamples() {
        slowdown(50);
        assertThat(windows.drift("m", Metric.TTFT, ONE_MIN, FIVE_MIN, 51)).isNaN();
        assertThat(windows.drift("m", Metric.TTFT, ONE_MIN, FIVE_MIN, 50)).isNotNaN();
        // the baseline needs enough samples too
        assertThat(windows.drift("m", Metric.TTFT, ONE_MIN, FIVE_MIN, 10_051)).isNaN();
    }

    @Test
    void notANumberWithoutData() {
        assertThat(windows.drift("unknown", Metric.TTFT, ONE_MIN, FIVE_MIN, 1)).isNaN();
        windows.record("m", Metric.E2E, BASELINE_NANOS);
        assertThat(windows.drift("m", Metric.ITL, ONE_MIN, FIVE_MIN, 1)).isNaN();
        clock.advance(Duration.ofMinutes(2));
        // the short window has emptied
        assertThat(windows.drift("m", Metric.E2E, ONE_MIN, FIVE_MIN, 1)).isNaN();
    }

    @Test
    void rejectsInvalidArguments() {
        windows.record("m", Metric.E2E, BASELINE_NANOS);
        assertThatThrownBy(() -> windows.drift("m", Metric.E2E, FIVE_MIN, ONE_MIN, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("shorter");
        assertThatThrownBy(() -> windows.drift("m", Metric.E2E, ONE_MIN, ONE_MIN, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> windows.drift("m", Metric.E2E, Duration.ofSeconds(15), FIVE_MIN, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multiple");
        assertThatThrownBy(() -> windows.drift("m", Metric.E2E, ONE_MIN, Duration.ofMinutes(20), 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("longest");
        assertThatThrownBy(() -> windows.drift("m", Metric.E2E, Duration.ZERO, FIVE_MIN, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> windows.drift("m", Metric.E2E, ONE_MIN, FIVE_MIN, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minSamples");
        // validated even for a series that does not exist
        assertThatThrownBy(() -> windows.drift("nobody", Metric.E2E, ONE_MIN, FIVE_MIN, -1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> windows.drift(null, Metric.E2E, ONE_MIN, FIVE_MIN, 1))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> windows.drift("m", null, ONE_MIN, FIVE_MIN, 1))
                .isInstanceOf(NullPointerException.class);
        // a window that is a multiple of the slice need not be one of the configured windows
        assertThat(windows.drift("m", Metric.E2E, Duration.ofSeconds(30), Duration.ofMinutes(2), 1)).isEqualTo(1.0);
    }

    /** The ratio as WindowStats carries it: each p99 in seconds first, so the doubles match bit for bit. */
    private static double ratioOfP99s(Histogram recent, Histogram baseline) {
        return (recent.getValueAtPercentile(99) / 1e9) / (baseline.getValueAtPercentile(99) / 1e9);
    }

    private static Histogram reference() {
        return new Histogram(SlidingWindowHistogram.LOWEST_NANOS, SlidingWindowHistogram.HIGHEST_NANOS,
                SlidingWindowHistogram.SIGNIFICANT_DIGITS);
    }
}
