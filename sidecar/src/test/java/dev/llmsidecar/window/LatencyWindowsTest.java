package dev.llmsidecar.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LatencyWindowsTest {

    private static final Duration ONE_MIN = Duration.ofMinutes(1);
    private static final Duration FIVE_MIN = Duration.ofMinutes(5);
    private static final Duration FIFTEEN_MIN = Duration.ofMinutes(15);
    private static final long MS = 1_000_000L;

    private final FakeClock clock = new FakeClock();
    private final LatencyWindows windows = new LatencyWindows(clock, List.of(FIFTEEN_MIN, ONE_MIN, FIVE_MIN, ONE_MIN));

    @Test
    void sliceIsTheShortestWindowOverSix() {
        assertThat(windows.windows()).containsExactly(ONE_MIN, FIVE_MIN, FIFTEEN_MIN);
        assertThat(windows.slice()).isEqualTo(Duration.ofSeconds(10));
        assertThat(new LatencyWindows(clock, List.of(Duration.ofSeconds(30))).slice())
                .isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void samplesAgeOutOfEachWindowInTurn() {
        windows.record("m", Metric.TTFT, 80 * MS);
        clock.advance(Duration.ofSeconds(59).plusMillis(999));
        assertThat(stats("m", Metric.TTFT, ONE_MIN).count()).isEqualTo(1);
        clock.advance(Duration.ofMillis(1));
        assertThat(stats("m", Metric.TTFT, ONE_MIN).count()).isZero();
        assertThat(stats("m", Metric.TTFT, FIVE_MIN).count()).isEqualTo(1);
        clock.advance(Duration.ofMinutes(4));
        assertThat(stats("m", Metric.TTFT, FIVE_MIN).count()).isZero();
        assertThat(stats("m", Metric.TTFT, FIFTEEN_MIN).count()).isEqualTo(1);
        clock.advance(Duration.ofMinutes(10));
        assertThat(stats("m", Metric.TTFT, FIFTEEN_MIN).count()).isZero();
        assertThat(windows.models()).containsExactly("m"); // series stay, only their data ages out
    }

    @Test
    void snapshotIsSortedCompleteAndImmutable() {
        windows.record("zeta", Metric.E2E, 900 * MS);
        windows.record("alpha", Metric.TTFT, 50 * MS);
        windows.record("alpha", Metric.TPOT, 20 * MS);

        Map<String, Map<Metric, Map<Duration, WindowStats>>> snapshot = windows.snapshot();

        assertThat(snapshot.keySet()).containsExactly("alpha", "zeta");
        assertThat(snapshot.get("alpha").keySet()).containsExactly(Metric.TTFT, Metric.TPOT, Metric.ITL, Metric.E2E);
        assertThat(snapshot.get("alpha").get(Metric.TTFT).keySet()).containsExactly(ONE_MIN, FIVE_MIN, FIFTEEN_MIN);
        assertThat(snapshot.get("alpha").get(Metric.TTFT).get(ONE_MIN).p50()).isCloseTo(0.050, within(0.050 * 0.01));
        assertThat(snapshot.get("alpha").get(Metric.ITL).get(FIFTEEN_MIN)).isEqualTo(WindowStats.empty());
        assertThat(snapshot.get("zeta").get(Metric.E2E).get(FIVE_MIN).max()).isCloseTo(0.9, within(0.9 * 0.01));

        assertThatThrownBy(() -> snapshot.put("x", Map.of())).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> snapshot.get("alpha").remove(Metric.TTFT))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> snapshot.get("alpha").get(Metric.ITL).clear())
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> snapshot.get("alpha").get(Metric.TTFT).clear())
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void snapshotIsACopy() {
        windows.record("m", Metric.E2E, 900 * MS);
        Map<String, Map<Metric, Map<Duration, WindowStats>>> before = windows.snapshot();
        windows.record("m", Metric.E2E, 900 * MS);
        windows.record("n", Metric.E2E, 900 * MS);
        assertThat(before.keySet()).containsExactly("m");
        assertThat(before.get("m").get(Metric.E2E).get(ONE_MIN).count()).isEqualTo(1);
    }

    @Test
    void itlIsTokenWeighted() {
        windows.record("m", Metric.ITL, 20 * MS, 7);
        windows.record("m", Metric.ITL, 40 * MS, 3);
        WindowStats itl = stats("m", Metric.ITL, ONE_MIN);
        assertThat(itl.count()).isEqualTo(10);
        assertThat(itl.p50()).isCloseTo(0.020, within(0.020 * 0.01));
        assertThat(itl.p90()).isCloseTo(0.040, within(0.040 * 0.01));
        assertThat(itl.mean()).isCloseTo(0.026, within(0.026 * 0.01));
    }

    @Test
    void nonPositiveCountIsIgnoredAndCreatesNoSeries() {
        windows.record("m", Metric.ITL, 20 * MS, 0);
        windows.record("m", Metric.ITL, 20 * MS, -1);
        assertThat(windows.models()).isEmpty();
        assertThat(windows.snapshot()).isEmpty();
    }

    @Test
    void modelsAreSortedAndImmutable() {
        windows.record("b", Metric.E2E, MS);
        windows.record("a", Metric.E2E, MS);
        windows.record("c", Metric.TTFT, MS);
        assertThat(windows.models()).containsExactly("a", "b", "c");
        assertThatThrownBy(() -> windows.models().add("d")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void seriesCreatedConcurrentlyOnFirstUseLoseNoSamples() throws Exception {
        int threads = 4;
        int perThread = 20_000;
        String[] models = {"a", "b", "c"};
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> writers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            writers.add(new Thread(() -> {
                try {
                    for (int i = 0; i < perThread; i++) {
                        windows.record(models[i % models.length], Metric.values()[i % 4], (i + 1) * 1_000L);
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        writers.forEach(Thread::start);
        for (Thread writer : writers) {
            writer.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(writer.isAlive()).isFalse();
        }
        assertThat(failures).isEmpty();
        long total = windows.snapshot().values().stream()
                .flatMap(byMetric -> byMetric.values().stream())
                .mapToLong(byWindow -> byWindow.get(ONE_MIN).count())
                .sum();
        assertThat(total).isEqualTo((long) threads * perThread);
        assertThat(windows.models()).containsExactly(models);
    }

    @Test
    void constructorRejectsUnusableWindows() {
        assertThatThrownBy(() -> new LatencyWindows(null, List.of(ONE_MIN))).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new LatencyWindows(clock, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new LatencyWindows(clock, Arrays.asList(ONE_MIN, null)))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new LatencyWindows(clock, List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LatencyWindows(clock, List.of(Duration.ZERO, ONE_MIN)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LatencyWindows(clock, List.of(Duration.ofSeconds(-60))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LatencyWindows(clock, List.of(Duration.ofSeconds(1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("6");
        assertThatThrownBy(() -> new LatencyWindows(clock, List.of(ONE_MIN, Duration.ofSeconds(65))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multiple");
    }

    @Test
    void recordRejectsMissingModelOrMetric() {
        assertThatThrownBy(() -> windows.record(null, Metric.E2E, MS)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> windows.record("m", null, MS)).isInstanceOf(NullPointerException.class);
    }

    private WindowStats stats(String model, Metric metric, Duration window) {
        return windows.snapshot().get(model).get(metric).get(window);
    }
}
