package dev.llmsidecar.window;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The window arithmetic of rates: what each window has observed, on a fake clock. */
class SlidingCountsTest {

    static final Duration MINUTE = Duration.ofMinutes(1), FIVE = Duration.ofMinutes(5), HOUR = Duration.ofHours(1);

    @Test
    void whileTheSidecarIsYoungerThanAWindowTheWindowHasObservedItsAge() {
        FakeClock clock = new FakeClock();
        SlidingCounts c = new SlidingCounts(clock, List.of(HOUR, MINUTE, FIVE), 1);
        assertThat(c.windows()).containsExactly(MINUTE, FIVE, HOUR);
        clock.advance(Duration.ofSeconds(2));
        for (int i = 0; i < 16; i++) { // 16 requests in the first 50 s
            c.add("m", 1);
            clock.advance(Duration.ofMillis(3_125));
        }
        clock.advance(Duration.ofSeconds(7));
        long now = c.now(); // 59 s after start: no slice has left the 1m window yet
        for (Duration w : c.windows()) {
            assertThat(c.counts(now).get("m").get(w)).containsExactly(16);
            assertThat(c.observedNanos(w, now)).isEqualTo(59_000_000_000L);
            assertThat(SlidingCounts.perSecond(16, c.observedNanos(w, now))).isEqualTo(16 / 59.0);
        }
        assertThat(c.coverage(MINUTE, now)).isEqualTo(new SlidingCounts.Coverage(59_000_000_000L, 59 / 60.0));
        assertThat(c.coverage(FIVE, now).covers()).isEqualTo(59 / 300.0);
        assertThat(c.coverage(HOUR, now).covers()).isEqualTo(59 / 3600.0);
    }

    @Test
    void onceFullAWindowIsItsSlicesSoTheRateOfSteadyTrafficIsExact() {
        FakeClock clock = new FakeClock();
        SlidingCounts c = new SlidingCounts(clock, List.of(MINUTE, FIVE), 2);
        for (int s = 0; s < 600; s++) { // one request a second for ten minutes, 3 tokens each
            c.add("m", 1, 3);
            clock.advance(Duration.ofSeconds(1));
        }
        clock.advance(Duration.ofMillis(4_500)); // 604.5 s: 4.5 s into a 10 s slice
        long now = c.now();
        // 1m: five whole slices and the current one's 4.5 s; a nominal 60 s would read 0.908/s for 1/s
        assertThat(c.observedNanos(MINUTE, now)).isEqualTo(54_500_000_000L);
        assertThat(c.counts(now).get("m").get(MINUTE)).containsExactly(50, 150);
        assertThat(c.coverage(MINUTE, now).covers()).isEqualTo(1.0);
        assertThat(c.observedNanos(FIVE, now)).isEqualTo(294_500_000_000L);
        assertThat(c.counts(now).get("m").get(FIVE)).containsExactly(290, 870);
        assertThat(SlidingCounts.perSecond(290, c.observedNanos(FIVE, now))).isEqualTo(290 / 294.5);
    }

    @Test
    void countsLeaveTheWindowsAfterAnIdleGapAndNothingIsCountedTwice() {
        FakeClock clock = new FakeClock();
        SlidingCounts c = new SlidingCounts(clock, List.of(MINUTE, FIVE), 1);
        c.add("a", 2);
        c.add("b", 5);
        clock.advance(Duration.ofSeconds(90));
        c.add("a", 1);
        long now = c.now();
        assertThat(c.counts(now).get("a").get(MINUTE)).containsExactly(1);
        assertThat(c.counts(now).get("a").get(FIVE)).containsExactly(3);
        assertThat(c.counts(now).get("b").get(MINUTE)).containsExactly(0);
        clock.advance(Duration.ofMinutes(10)); // the ring wraps: old slices are not read as new ones
        now = c.now();
        assertThat(c.counts(now).get("a").get(FIVE)).containsExactly(0);
        assertThat(c.observedNanos(FIVE, now)).isEqualTo(Duration.ofSeconds(290).toNanos());
        assertThat(SlidingCounts.perSecond(0, 0)).isNaN();
    }
}
