package dev.llmsidecar.slo;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class GoodputWindowsTest {

    @Test
    void countsRotateOutOfShortWindowsButStayInLongOnes() {
        AtomicLong clock = new AtomicLong(1_000_000_000_000L);
        GoodputWindows w = new GoodputWindows(clock::get, List.of(Duration.ofMinutes(1), Duration.ofMinutes(5)));
        w.record("m", "default", true, 10);
        w.record("m", "default", false, 7);
        clock.addAndGet(Duration.ofSeconds(90).toNanos());
        w.record("m", "default", true, 3);
        var now = w.snapshot().get("m").get("default");
        assertThat(now.get(Duration.ofMinutes(1))).isEqualTo(new GoodputWindows.Counts(1, 1, 3, 3));
        assertThat(now.get(Duration.ofMinutes(5))).isEqualTo(new GoodputWindows.Counts(3, 2, 20, 13));
        assertThat(now.get(Duration.ofMinutes(5)).attainment()).isEqualTo(2.0 / 3);
        clock.addAndGet(Duration.ofMinutes(10).toNanos());
        var later = w.snapshot().get("m").get("default");
        assertThat(later.get(Duration.ofMinutes(5)).requests()).isZero();
        assertThat(later.get(Duration.ofMinutes(5)).attainment()).isNaN();
    }
}
