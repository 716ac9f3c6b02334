package dev.llmsidecar.timeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The stall scan's arithmetic, on a clock of its own: no sockets, no sleeps. */
class StallScanTest {

    static final long S = 1_000_000_000L;
    static final StallThresholds T = StallThresholds.of(Duration.ofSeconds(60), Duration.ofSeconds(10));

    @Test
    void eachPhaseIsJudgedByItsOwnThresholdStrictly() {
        StallScan scan = new StallScan(T, 1000 * S);
        scan.add("m", false, 1000 * S - 59 * S, false);  // queued 59 s: not yet
        scan.add("m", false, 1000 * S - 61 * S, false);  // queued 61 s: stalled before its first token
        scan.add("m", true, 1000 * S - 10 * S, false);   // exactly the threshold: not yet
        scan.add("m", true, 1000 * S - 11 * S, false);   // 11 s since its last token: stalled mid-generation
        scan.add("m", true, 1000 * S - 30 * S, false);   // 30 s: stalled, and the longest
        scan.add("m", true, 1000 * S - 2 * S, false);    // generating
        assertThat(scan.stalled("m", StreamPhase.FIRST_TOKEN)).isEqualTo(1);
        assertThat(scan.stalled("m", StreamPhase.GENERATION)).isEqualTo(2);
        assertThat(scan.stalled()).isEqualTo(3);
        assertThat(scan.longestSilenceNanos("m", StreamPhase.FIRST_TOKEN)).isEqualTo(61 * S);
        assertThat(scan.longestSilenceNanos("m", StreamPhase.GENERATION)).isEqualTo(30 * S);
    }

    @Test
    void aSilenceOfTenSecondsBeforeTheFirstTokenIsQueueingNotAStall() {
        StallScan scan = new StallScan(T, 100 * S);
        scan.add("m", false, 80 * S, false);
        assertThat(scan.stalled()).isZero();
        assertThat(scan.longestSilenceNanos(StreamPhase.FIRST_TOKEN)).isEqualTo(20 * S);
        assertThat(scan.longestSilenceNanos(StreamPhase.GENERATION)).isZero();
    }

    @Test
    void modelsAreKeptApartAndAnUnknownModelReadsZero() {
        StallScan scan = new StallScan(T, 100 * S);
        scan.add("a", true, 50 * S, false);
        scan.add("b", true, 99 * S, false);
        assertThat(scan.stalled("a", StreamPhase.GENERATION)).isEqualTo(1);
        assertThat(scan.stalled("b", StreamPhase.GENERATION)).isZero();
        assertThat(scan.stalled("c", StreamPhase.GENERATION)).isZero();
        assertThat(scan.longestSilenceNanos("c", StreamPhase.GENERATION)).isZero();
        assertThat(scan.longestSilenceNanos(StreamPhase.GENERATION)).isEqualTo(50 * S);
    }

    @Test
    void aStampAfterTheScanCountsAsNoSilence() {
        // a token stamped on another loop just after the scan's clock read: not a negative silence
        StallScan scan = new StallScan(T, 100 * S);
        scan.add("m", true, 100 * S + 5, false);
        assertThat(scan.longestSilenceNanos("m", StreamPhase.GENERATION)).isZero();
        assertThat(scan.stalled()).isZero();
    }

    @Test
    void thresholdsMustBePositive() {
        assertThatThrownBy(() -> StallThresholds.of(Duration.ZERO, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sidecar.stall");
        assertThat(StallThresholds.DEFAULTS.of(StreamPhase.FIRST_TOKEN)).isEqualTo(60 * S);
        assertThat(StallThresholds.DEFAULTS.of(StreamPhase.GENERATION)).isEqualTo(10 * S);
    }
}
