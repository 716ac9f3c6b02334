package dev.llmsidecar.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class SlidingWindowHistogramTest {

    private static final Duration SLICE = Duration.ofSeconds(10);
    private static final Duration ONE_MIN = Duration.ofMinutes(1);
    private static final Duration FIVE_MIN = Duration.ofMinutes(5);
    private static final Duration FIFTEEN_MIN = Duration.ofMinutes(15);
    private static final long MS = 1_000_000L;

    private final FakeClock clock = new FakeClock();
    private final SlidingWindowHistogram histogram = new SlidingWindowHistogram(clock, SLICE, FIFTEEN_MIN);

    @Test
    void emptyWindowHasZeroCountAndNaNLatencies() {
        WindowStats stats = histogram.snapshot(ONE_MIN);
        assertThat(stats.count()).isZero();
        assertThat(stats.isEmpty()).isTrue();
        assertThat(List.of(stats.mean(), stats.p50(), stats.p90(), stats.p95(), stats.p99(), stats.p999(),
                stats.max())).allMatch(v -> Double.isNaN(v));
    }

    @Test
    void unrotatedSamplesAreVisibleImmediately() {
        histogram.record(20 * MS);
        WindowStats stats = histogram.snapshot(ONE_MIN);
        assertThat(stats.count()).isEqualTo(1);
        assertThat(stats.p50()).isCloseTo(0.020, within(0.020 * 0.01));
        assertThat(stats.max()).isEqualTo(stats.p50());
    }

    @Test
    void sampleLeavesOneMinuteWindowAfterOneMinuteButStaysInFiveMinutes() {
        histogram.record(50 * MS);
        clock.advance(Duration.ofSeconds(59).plusMillis(999));
        assertThat(histogram.snapshot(ONE_MIN).count()).isEqualTo(1);

        clock.advance(Duration.ofMillis(1));
        assertThat(histogram.snapshot(ONE_MIN).count()).isZero();
        assertThat(histogram.snapshot(FIVE_MIN).count()).isEqualTo(1);

        clock.advance(Duration.ofMinutes(4));
        assertThat(histogram.snapshot(FIVE_MIN).count()).isZero();
        assertThat(histogram.snapshot(FIFTEEN_MIN).count()).isEqualTo(1);
    }

    @Test
    void windowSpansBetweenKMinusOneAndKSlicesOfHistory() {
        clock.advance(Duration.ofSeconds(9)); // late in slice 0
        histogram.record(50 * MS);
        clock.advance(Duration.ofSeconds(50)); // t = 59 s, slice 5: the window is slices 0..5
        assertThat(histogram.snapshot(ONE_MIN).count()).isEqualTo(1);
        clock.advance(Duration.ofSeconds(1)); // t = 60 s, slice 6: slice 0 has left, 51 s after the sample
        assertThat(histogram.snapshot(ONE_MIN).count()).isZero();
    }

    @Test
    void rotationDrivenByRecordingAloneKeepsSlicesApart() {
        for (int minute = 0; minute < 5; minute++) {
            if (minute > 0) {
                clock.advance(ONE_MIN);
            }
            histogram.record((minute + 1) * 100 * MS, 10);
        }
        WindowStats lastMinute = histogram.snapshot(ONE_MIN);
        assertThat(lastMinute.count()).isEqualTo(10);
        assertThat(lastMinute.p50()).isCloseTo(0.500, within(0.500 * 0.01));
        WindowStats fiveMinutes = histogram.snapshot(FIVE_MIN);
        assertThat(fiveMinutes.count()).isEqualTo(50);
        assertThat(fiveMinutes.p50()).isCloseTo(0.300, within(0.300 * 0.01));
    }

    @Test
    void idleGapLongerThanTheRingEmptiesEverySlice() {
        for (int i = 0; i < 90; i++) {
            histogram.record(10 * MS);
            clock.advance(SLICE);
        }
        // 90 slices filled, the last one left at its end: now the ring is full of old data
        clock.advance(Duration.ofHours(3));
        histogram.record(30 * MS, 2);
        WindowStats all = histogram.snapshot(FIFTEEN_MIN);
        assertThat(all.count()).isEqualTo(2);
        assertThat(all.p50()).isCloseTo(0.030, within(0.030 * 0.01));
    }

    @Test
    void idleGapShorterThanTheRingEmptiesOnlySkippedSlices() {
        histogram.record(10 * MS); // slice 0
        clock.advance(Duration.ofSeconds(30));
        histogram.record(20 * MS); // slice 3
        clock.advance(Duration.ofSeconds(50)); // slice 8, nothing recorded in 4..8
        WindowStats oneMinute = histogram.snapshot(ONE_MIN); // slices 3..8
        assertThat(oneMinute.count()).isEqualTo(1);
        assertThat(oneMinute.max()).isCloseTo(0.020, within(0.020 * 0.01));
        assertThat(histogram.snapshot(FIVE_MIN).count()).isEqualTo(2);

        // after a full lap of the ring the slots of slices 0 and 3 are reused and must start empty
        clock.advance(Duration.ofMinutes(14).plusSeconds(40)); // slice 96 = slot 6
        histogram.record(40 * MS);
        assertThat(histogram.snapshot(FIFTEEN_MIN).count()).isEqualTo(1);
    }

    @Test
    void percentilesOfUniformDataMatchHdrHistogram() {
        Histogram reference = new Histogram(SlidingWindowHistogram.LOWEST_NANOS,
                SlidingWindowHistogram.HIGHEST_NANOS, SlidingWindowHistogram.SIGNIFICANT_DIGITS);
        // 1 ms .. 100 ms in 10 µs steps, spread over five slices
        for (int i = 1; i <= 10_000; i++) {
            long nanos = i * 10_000L;
            histogram.record(nanos);
            reference.recordValue(nanos);
            if (i % 2_000 == 0) {
                clock.advance(SLICE);
            }
        }
        WindowStats stats = histogram.snapshot(ONE_MIN);

        assertThat(stats.count()).isEqualTo(10_000);
        assertThat(stats.p50()).isEqualTo(reference.getValueAtPercentile(50) / 1e9);
        assertThat(stats.p90()).isEqualTo(reference.getValueAtPercentile(90) / 1e9);
        assertThat(stats.p95()).isEqualTo(reference.getValueAtPercentile(95) / 1e9);
        assertThat(stats.p99()).isEqualTo(reference.getValueAtPercentile(99) / 1e9);
        assertThat(stats.p999()).isEqualTo(reference.getValueAtPercentile(99.9) / 1e9);
        assertThat(stats.max()).isEqualTo(reference.getMaxValue() / 1e9);
        assertThat(stats.mean()).isCloseTo(reference.getMean() / 1e9, within(1e-12));
        // and within 2-significant-digit precision (1 %) of the true values
        assertThat(stats.p50()).isCloseTo(0.050, within(0.050 * 0.01));
        assertThat(stats.p90()).isCloseTo(0.090, within(0.090 * 0.01));
        assertThat(stats.p95()).isCloseTo(0.095, within(0.095 * 0.01));
        assertThat(stats.p99()).isCloseTo(0.099, within(0.099 * 0.01));
        assertThat(stats.p999()).isCloseTo(0.0999, within(0.0999 * 0.01));
        assertThat(stats.max()).isCloseTo(0.100, within(0.100 * 0.01));
        assertThat(stats.mean()).isCloseTo(0.050005, within(0.050005 * 0.01));
    }

    @Test
    void wideRandomDataSurvivesSlicingAndMidSliceReadsExactly() {
        Histogram reference = new Histogram(SlidingWindowHistogram.LOWEST_NANOS,
                SlidingWindowHistogram.HIGHEST_NANOS, SlidingWindowHistogram.SIGNIFICANT_DIGITS);
        Random random = new Random(42);
        for (int slice = 0; slice < 30; slice++) {
            if (slice > 0) {
                clock.advance(SLICE.dividedBy(2)); // start of the next slice
            }
            for (int i = 0; i < 1_000; i++) {
                long nanos = (long) (Math.exp(random.nextGaussian() * 1.5) * 50 * MS);
                int count = 1 + random.nextInt(3);
                histogram.record(nanos, count);
                reference.recordValueWithCount(Math.min(nanos, SlidingWindowHistogram.HIGHEST_NANOS), count);
                if (i % 300 == 0) {
                    histogram.snapshot(ONE_MIN); // drains mid-slice, so slices are built in pieces
                }
            }
            clock.advance(SLICE.dividedBy(2));
            histogram.snapshot(ONE_MIN);
        }
        // now in the middle of slice 29: five minutes reach back to slice 0

        WindowStats stats = histogram.snapshot(FIVE_MIN);

        assertThat(stats).isEqualTo(WindowStats.of(reference));
        assertThat(histogram.snapshot(FIFTEEN_MIN)).isEqualTo(stats);
    }

    @Test
    void countWeightedRecordingEqualsRepeatedRecording() {
        SlidingWindowHistogram repeated = new SlidingWindowHistogram(clock, SLICE, FIFTEEN_MIN);
        histogram.record(7 * MS, 5);
        histogram.record(90 * MS, 1);
        for (int i = 0; i < 5; i++) {
            repeated.record(7 * MS);
        }
        repeated.record(90 * MS);

        WindowStats weighted = histogram.snapshot(ONE_MIN);
        assertThat(weighted.count()).isEqualTo(6);
        assertThat(weighted).isEqualTo(repeated.snapshot(ONE_MIN));
        assertThat(weighted.p50()).isCloseTo(0.007, within(0.007 * 0.01));
    }

    @Test
    void nonPositiveCountRecordsNothing() {
        histogram.record(7 * MS, 0);
        histogram.record(7 * MS, -3);
        assertThat(histogram.snapshot(ONE_MIN).count()).isZero();
    }

    @Test
    void outOfRangeValuesAreClampedNotRejected() {
        histogram.record(-5);
        histogram.record(0);
        histogram.record(999);
        histogram.record(Duration.ofHours(2).toNanos());
        histogram.record(Long.MAX_VALUE);
        WindowStats stats = histogram.snapshot(ONE_MIN);
        assertThat(stats.count()).isEqualTo(5);
        // near 1 µs the resolution is HdrHistogram's 512 ns unit, not 3 digits
        assertThat(stats.p50()).isBetween(1e-6, 1.024e-6);
        assertThat(stats.max()).isCloseTo(3600.0, within(3600.0 * 0.01));
    }

    @Test
    void survivesClockWrapAround() {
        FakeClock nearOverflow = new FakeClock(Long.MAX_VALUE - Duration.ofSeconds(25).toNanos());
        SlidingWindowHistogram wrapped = new SlidingWindowHistogram(nearOverflow, SLICE, FIFTEEN_MIN);
        wrapped.record(10 * MS);
        nearOverflow.advance(Duration.ofSeconds(40)); // past Long.MAX_VALUE
        wrapped.record(20 * MS);
        assertThat(wrapped.snapshot(ONE_MIN).count()).isEqualTo(2);
        nearOverflow.advance(Duration.ofSeconds(30));
        WindowStats lastMinute = wrapped.snapshot(ONE_MIN);
        assertThat(lastMinute.count()).isEqualTo(1);
        assertThat(lastMinute.max()).isCloseTo(0.020, within(0.020 * 0.01));
    }

    @Test
    void severalWindowsAreReadAtOneInstant() {
        histogram.record(10 * MS);
        clock.advance(Duration.ofMinutes(2));
        histogram.record(20 * MS);
        Map<Duration, WindowStats> stats = histogram.snapshot(List.of(FIFTEEN_MIN, ONE_MIN, FIVE_MIN));
        assertThat(stats.keySet()).containsExactly(ONE_MIN, FIVE_MIN, FIFTEEN_MIN);
        assertThat(stats.get(ONE_MIN).count()).isEqualTo(1);
        assertThat(stats.get(FIVE_MIN).count()).isEqualTo(2);
        assertThat(stats.get(FIFTEEN_MIN).count()).isEqualTo(2);
        assertThatThrownBy(() -> stats.put(ONE_MIN, WindowStats.empty()))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void concurrentRecordingFromFourThreadsCountsEverySample() throws Exception {
        int threads = 4;
        int perThread = 100_000;
        CountDownLatch start = new CountDownLatch(1);
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        Thread[] writers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            long base = (t + 1) * MS;
            writers[t] = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        histogram.record(base + i);
                        if (i % 5_000 == 0) {
                            // 4 threads x 20 steps x 1 s: slices rotate under the writers, all within 15 min
                            clock.advance(Duration.ofSeconds(1));
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            writers[t].start();
        }
        start.countDown();
        for (Thread writer : writers) {
            writer.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(writer.isAlive()).isFalse();
        }
        assertThat(failures).isEmpty();
        assertThat(histogram.snapshot(FIFTEEN_MIN).count()).isEqualTo((long) threads * perThread);
    }

    @Test
    void snapshotWhileRecordingDoesNotThrow() throws Exception {
        int threads = 4;
        int perThread = 50_000;
        AtomicBoolean writing = new AtomicBoolean(true);
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        Thread[] writers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            writers[t] = new Thread(() -> {
                try {
                    for (int i = 0; i < perThread; i++) {
                        histogram.record((i % 1_000 + 1) * MS, 1 + i % 3);
                        if (i % 2_500 == 0) {
                            clock.advance(Duration.ofSeconds(2));
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
        }
        long[] reads = new long[1];
        Thread reader = new Thread(() -> {
            try {
                while (writing.get()) {
                    for (WindowStats stats : histogram.snapshot(List.of(ONE_MIN, FIVE_MIN, FIFTEEN_MIN)).values()) {
                        if (stats.count() > 0 && !(stats.p50() <= stats.p99() && stats.p99() <= stats.max())) {
                            throw new AssertionError("inconsistent " + stats);
                        }
                    }
                    reads[0]++;
                }
            } catch (Throwable e) {
                failures.add(e);
            }
        });
        reader.start();
        for (Thread writer : writers) {
            writer.start();
        }
        for (Thread writer : writers) {
            writer.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(writer.isAlive()).isFalse();
        }
        writing.set(false);
        reader.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(reader.isAlive()).isFalse();
        assertThat(failures).isEmpty();
        assertThat(reads[0]).isPositive();
        long expected = 0;
        for (int i = 0; i < perThread; i++) {
            expected += 1 + i % 3;
        }
        // 4 x 20 x 2 s = 160 s of fake time: everything is still inside 15 minutes
        assertThat(histogram.snapshot(FIFTEEN_MIN).count()).isEqualTo(threads * expected);
    }

    @Test
    void constructorRejectsInvalidSlicing() {
        assertThatThrownBy(() -> new SlidingWindowHistogram(null, SLICE, ONE_MIN))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new SlidingWindowHistogram(clock, Duration.ZERO, ONE_MIN))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SlidingWindowHistogram(clock, Duration.ofSeconds(-1), ONE_MIN))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SlidingWindowHistogram(clock, SLICE, Duration.ofSeconds(65)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multiple");
        assertThatThrownBy(() -> new SlidingWindowHistogram(clock, SLICE, Duration.ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SlidingWindowHistogram(clock, Duration.ofNanos(1), Duration.ofDays(365)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("too many slices");
    }

    @Test
    void snapshotRejectsInvalidWindowsAtCallTime() {
        assertThatThrownBy(() -> histogram.snapshot(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> histogram.snapshot(Duration.ofMinutes(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> histogram.snapshot(Duration.ofSeconds(15)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multiple");
        assertThatThrownBy(() -> histogram.snapshot(Duration.ofMinutes(16)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("longest");
        assertThatThrownBy(() -> histogram.snapshot(Duration.ofDays(365 * 1000)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> histogram.snapshot((Duration) null)).isInstanceOf(NullPointerException.class);
        // valid edges
        assertThat(histogram.snapshot(SLICE).count()).isZero();
        assertThat(histogram.snapshot(FIFTEEN_MIN).count()).isZero();
    }
}
