package dev.llmsidecar.slo;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class GoodputWindowsTest {

    static final Duration MINUTE = Duration.ofMinutes(1), FIVE = Duration.ofMinutes(5);

    @Test
    void countsRotateOutOfShortWindowsButStayInLongOnes() {
        AtomicLong clock = new AtomicLong(1_000_000_000_000L);
        GoodputWindows w = new GoodputWindows(clock::get, List.of(MINUTE, FIVE));
        w.record("m", "default", true, 10);
        w.record("m", "default", false, 7);
        clock.addAndGet(Duration.ofSeconds(90).toNanos());
        w.record("m", "default", true, 3);
        var now = w.snapshot().get("m").get("default");
        // 1m: the slices from 40 s on (50 s); 5m: everything since the start (90 s)
        assertThat(now.get(MINUTE)).isEqualTo(new GoodputWindows.Counts(1, 1, 3, 3, 50_000_000_000L));
        assertThat(now.get(FIVE)).isEqualTo(new GoodputWindows.Counts(3, 2, 20, 13, 90_000_000_000L));
        assertThat(now.get(FIVE).attainment()).isEqualTo(2.0 / 3);
        assertThat(now.get(FIVE).goodRequestsPerSecond()).isEqualTo(2 / 90.0);
        assertThat(now.get(FIVE).goodTokensPerSecond()).isEqualTo(13 / 90.0);
        clock.addAndGet(Duration.ofMinutes(10).toNanos());
        var later = w.snapshot().get("m").get("default");
        assertThat(later.get(FIVE).requests()).isZero();
        assertThat(later.get(FIVE).attainment()).isNaN();
        assertThat(later.get(FIVE).goodRequestsPerSecond()).isZero();
    }

    /**
     * Issue 29: after a minute of traffic the 5m goodput read 0.053 req/s against 0.267 for 1m, the same 16 good
     * requests divided by 300 s instead of the 60 s observed. Both windows now divide by what they observed.
     */
    @Test
    void aWindowNotYetFullDividesByWhatItObservedAndSaysHowMuchThatIs() {
        AtomicLong clock = new AtomicLong(7_000_000_000L);
        GoodputWindows w = new GoodputWindows(clock::get, List.of(MINUTE, FIVE, Duration.ofHours(1)));
        for (int i = 0; i < 16; i++) {
            clock.addAndGet(Duration.ofSeconds(3).toNanos());
            w.record("m", "default", true, 64);
        }
        clock.addAndGet(Duration.ofSeconds(12).toNanos()); // 60 s after the start
        var coverage = w.coverage();
        var counts = w.snapshot().get("m").get("default");
        // 1m is full: its slices from 10 s on; 5m and 1h have watched the whole minute
        assertThat(counts.get(MINUTE).goodRequests()).isEqualTo(13);
        assertThat(counts.get(MINUTE).goodRequestsPerSecond()).isEqualTo(13 / 50.0);
        assertThat(coverage.get(MINUTE).covers()).isEqualTo(1.0);
        assertThat(counts.get(FIVE).goodRequests()).isEqualTo(16);
        assertThat(counts.get(FIVE).goodRequestsPerSecond()).isEqualTo(16 / 60.0);
        assertThat(counts.get(FIVE).goodTokensPerSecond()).isEqualTo(16 * 64 / 60.0);
        assertThat(coverage.get(FIVE).observedNanos()).isEqualTo(60_000_000_000L);
        assertThat(coverage.get(FIVE).covers()).isEqualTo(0.2);
        assertThat(counts.get(Duration.ofHours(1)).goodRequestsPerSecond()).isEqualTo(16 / 60.0);
        assertThat(coverage.get(Duration.ofHours(1)).covers()).isEqualTo(60 / 3600.0);
    }
}
