package dev.llmsidecar.timeline;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Every end_reason from a timeline fed as a decoder would, without sockets (the end-to-end twin: EndReasonsTest). */
class EndReasonTest {

    static final long MS = 1_000_000L;
    static final StallThresholds T = StallThresholds.of(Duration.ofSeconds(60), Duration.ofSeconds(10));

    static RequestTimeline stream(int tokens) {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        t.onUpstreamHeaders(5 * MS);
        for (int i = 0; i < tokens; i++) {
            t.onTokenChunk((100 + 20 * i) * MS, false, -1);
        }
        return t;
    }

    static EndReason end(RequestTimeline t, long atMs, Outcome outcome, int status) {
        return EndReason.of(t.finish(atMs * MS, outcome, status), T);
    }

    @Test
    void aStreamWithItsFinishReasonOrItsTerminatorCompleted() {
        RequestTimeline finished = stream(3);
        finished.onFinishReason("stop");
        assertThat(end(finished, 200, Outcome.OK, 200)).isEqualTo(EndReason.COMPLETED);
        RequestTimeline done = stream(3);
        done.onTerminator();
        assertThat(end(done, 200, Outcome.OK, 200)).isEqualTo(EndReason.COMPLETED);
    }

    @Test
    void aStreamEndingCleanlyWithNeitherWasTruncated() {
        assertThat(end(stream(3), 200, Outcome.OK, 200)).isEqualTo(EndReason.TRUNCATED);
        assertThat(end(stream(0), 200, Outcome.OK, 200)).isEqualTo(EndReason.TRUNCATED);
    }

    @Test
    void aResponseThatDoesNotStreamCompletesWithoutAFinishReason() {
        RequestTimeline t = new RequestTimeline(0, false, RequestTimeline.LiveListener.NONE);
        t.onUpstreamHeaders(5 * MS);
        assertThat(end(t, 90_000, Outcome.OK, 200)).isEqualTo(EndReason.COMPLETED);
    }

    @Test
    void errorsAreToldApartByWhereTheyHappened() {
        RequestTimeline inStream = stream(2);
        inStream.onStreamError();
        assertThat(end(inStream, 200, Outcome.OK, 200)).isEqualTo(EndReason.STREAM_ERROR);
        RequestTimeline status = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        status.onUpstreamHeaders(5 * MS);
        assertThat(end(status, 10, Outcome.UPSTREAM_ERROR, 429)).isEqualTo(EndReason.ERROR_STATUS);
        RequestTimeline noHead = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        assertThat(end(noHead, 10, Outcome.UPSTREAM_ERROR, 502)).isEqualTo(EndReason.UPSTREAM_ERROR_BEFORE_HEAD);
        assertThat(end(stream(3), 300, Outcome.UPSTREAM_BROKEN, 200)).isEqualTo(EndReason.UPSTREAM_ERROR_AFTER_HEAD);
    }

    @Test
    void aClientGoingAwayIsToldApartByTheFirstToken() {
        assertThat(end(stream(0), 2_000, Outcome.CLIENT_CANCELLED, 200))
                .isEqualTo(EndReason.CLIENT_GONE_BEFORE_FIRST_TOKEN);
        assertThat(end(stream(3), 2_000, Outcome.CLIENT_CANCELLED, 200)).isEqualTo(EndReason.CLIENT_GONE_MID_STREAM);
    }

    @Test
    void anEndThatDidNotCompleteWhileSilentPastItsThresholdIsStalled() {
        // last token at 140 ms; the client gives up 10.2 s later: past the 10 s generation threshold
        RequestTimeline gaveUp = stream(3);
        RequestResult r = gaveUp.finish(10_340 * MS, Outcome.CLIENT_CANCELLED, 200);
        assertThat(EndReason.of(r, T)).isEqualTo(EndReason.STALLED);
        assertThat(r.endSilenceNanos()).isEqualTo(10_200 * MS);
        assertThat(r.longestGapNanos()).as("the silence it ended in").isEqualTo(10_200 * MS);
        // the idle timeout cutting a stream mid-generation
        assertThat(end(stream(3), 20_140, Outcome.UPSTREAM_BROKEN, 200)).isEqualTo(EndReason.STALLED);
        // before the first token, the first-token threshold applies: 30 s of queueing is not a stall, 61 s is
        assertThat(end(stream(0), 30_000, Outcome.CLIENT_CANCELLED, 200))
                .isEqualTo(EndReason.CLIENT_GONE_BEFORE_FIRST_TOKEN);
        assertThat(end(stream(0), 61_000, Outcome.CLIENT_CANCELLED, 200)).isEqualTo(EndReason.STALLED);
        RequestTimeline noHead = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        assertThat(end(noHead, 600_000, Outcome.UPSTREAM_ERROR, 504)).isEqualTo(EndReason.STALLED);
    }

    @Test
    void aCompletedStreamIsCompletedHoweverLongItPausedAndItsLongestGapIsKept() {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        t.onUpstreamHeaders(5 * MS);
        t.onTokenChunk(100 * MS, false, -1);
        t.onTokenChunk(15_100 * MS, false, -1); // a 15 s pause, then it went on
        t.onTokenChunk(15_120 * MS, false, -1);
        t.onFinishReason("stop");
        RequestResult r = t.finish(15_130 * MS, Outcome.OK, 200);
        assertThat(EndReason.of(r, T)).isEqualTo(EndReason.COMPLETED);
        assertThat(r.longestGapNanos()).isEqualTo(15_000 * MS);
        assertThat(r.endSilenceNanos()).isEqualTo(10 * MS);
    }

    @Test
    void theLiveListenerHearsTheStartAndEveryTokenStamp() {
        long[] seen = new long[3];
        RequestTimeline.LiveListener l = new RequestTimeline.LiveListener() {
            @Override
            public void onStart(long startNanos) {
                seen[0] = startNanos;
            }

            @Override
            public void onToken(long nanos) {
                seen[1] = nanos;
                seen[2]++;
            }

            @Override
            public void onFirstResponseChunk(long n) {
            }

            @Override
            public void onFirstToken(long n) {
            }

            @Override
            public void onChunkGap(long n) {
            }
        };
        RequestTimeline t = new RequestTimeline(7, true, l);
        t.onTokenChunk(100, false, -1);
        t.onTokenChunk(250, false, -1);
        assertThat(seen).containsExactly(7, 250, 2);
    }
}
