package dev.llmsidecar.saturation;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The knee from per-band medians: where latency first rises faster than load. */
class KneeEstimatorTest {

    static final long MS = 1_000_000;

    final AtomicLong clock = new AtomicLong(1_000_000_000_000L);
    final KneeEstimator knee = new KneeEstimator(clock::get, Duration.ofMinutes(10), 20, Duration.ofHours(1));

    void requests(int load, int count, long ttftMs, long tpotMs) {
        for (int i = 0; i < count; i++) {
            knee.record(LoadBand.of(load), ttftMs * MS, tpotMs * MS);
        }
    }

    @Test
    void bandsArePowersOfTwoUpTo512ThenInf() {
        assertThat(LoadBand.of(0).label()).isEqualTo("1");
        assertThat(LoadBand.of(1).label()).isEqualTo("1");
        assertThat(LoadBand.of(2).label()).isEqualTo("2");
        assertThat(LoadBand.of(3).label()).isEqualTo("4");
        assertThat(LoadBand.of(5).label()).isEqualTo("8");
        assertThat(LoadBand.of(512).label()).isEqualTo("512");
        assertThat(LoadBand.of(513).label()).isEqualTo("+Inf");
        assertThat(LoadBand.count()).isEqualTo(11);
        assertThat(LoadBand.of(16).lower()).isEqualTo(9);
        assertThat(LoadBand.of(16).representativeLoad()).isEqualTo(12.5);
    }

    @Test
    void flatThenQueueing() {
        // 8 slots: TTFT flat to 8 in flight, then requests wait for a slot
        requests(1, 30, 50, 10);
        requests(2, 30, 51, 10);
        requests(4, 30, 52, 11);
        requests(8, 30, 55, 11);
        requests(16, 30, 200, 11);
        requests(32, 30, 600, 11);
        assertThat(knee.estimate().kneeRequests()).isEqualTo(8);
    }

    @Test
    void aRiseInDecodeTimeAloneIsAKneeToo() {
        requests(1, 30, 50, 10);
        requests(2, 30, 50, 10);
        requests(4, 30, 50, 25);
        requests(8, 30, 50, 60);
        assertThat(knee.estimate().kneeRequests()).isEqualTo(2);
    }

    @Test
    void latencyThatGrowsSlowerThanLoadIsNoKnee() {
        // batching: each doubling of load costs 30 % more, never proportionally more
        requests(1, 30, 100, 10);
        requests(2, 30, 130, 13);
        requests(4, 30, 169, 17);
        requests(8, 30, 220, 22);
        assertThat(knee.estimate().kneeRequests()).isNaN();
    }

    @Test
    void thinBandsAndSubMillisecondNoiseDoNotMakeAKnee() {
        requests(1, 30, 1, 1);
        requests(2, 30, 2, 1); // doubled, but by a millisecond
        requests(4, 5, 900, 1); // a few slow requests: too few to count
        assertThat(knee.estimate().kneeRequests()).isNaN();
        assertThat(knee.estimate().bands()).hasSize(3);
    }

    @Test
    void aKneeIsKeptAfterTheWindowForgetsTheLoadThatShowedItForTheHoldTime() {
        requests(1, 30, 50, 10);
        requests(2, 30, 300, 10);
        assertThat(knee.estimate().kneeRequests()).isEqualTo(1);
        assertThat(knee.estimate().inWindow()).isTrue();
        clock.addAndGet(Duration.ofMinutes(11).toNanos());
        requests(1, 30, 50, 10); // light load only: nothing says the knee moved
        KneeEstimator.Estimate held = knee.estimate();
        assertThat(held.kneeRequests()).isEqualTo(1);
        assertThat(held.inWindow()).isFalse();
        clock.addAndGet(Duration.ofMinutes(61).toNanos());
        assertThat(knee.estimate().kneeRequests()).as("past the hold time").isNaN();
    }

    @Test
    void aKeptKneeIsDroppedWhenTheWindowShowsFlatLatencyPastIt() {
        requests(4, 30, 50, 10);
        requests(8, 30, 200, 10);
        assertThat(knee.estimate().kneeRequests()).isEqualTo(4);
        clock.addAndGet(Duration.ofMinutes(11).toNanos());
        // more capacity now (a bigger KV cache, say): 4 -> 8 -> 16 stays flat
        requests(4, 30, 50, 10);
        requests(8, 30, 52, 10);
        requests(16, 30, 55, 10);
        assertThat(knee.estimate().kneeRequests()).isNaN();
    }

    @Test
    void onlyNeighbouringBandsMakeAKnee() {
        // bands 2 to 8 too thin: 1 -> 16 is not evidence that the rise began at 1
        requests(1, 30, 50, 10);
        requests(2, 5, 50, 10);
        requests(16, 30, 400, 10);
        assertThat(knee.estimate().kneeRequests()).isNaN();
    }

    @Test
    void aRiseThatDoesNotHoldIsNoKnee() {
        // a burst of long prompts happened to arrive at 4 in flight; heavier loads are fast again
        requests(1, 30, 50, 10);
        requests(2, 30, 50, 10);
        requests(4, 30, 300, 10);
        requests(8, 30, 60, 10);
        assertThat(knee.estimate().kneeRequests()).isNaN();
    }
}
