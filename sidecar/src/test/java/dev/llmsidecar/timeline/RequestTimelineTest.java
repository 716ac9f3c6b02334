package dev.llmsidecar.timeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.wire.Usage;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestTimelineTest {

    static final long MS = 1_000_000L;

    /** Live callbacks, recorded. */
    static final class Live implements RequestTimeline.LiveListener {
        final List<Long> ttfc = new ArrayList<>();
        final List<Long> ttft = new ArrayList<>();
        final List<Long> gaps = new ArrayList<>();

        @Override
        public void onFirstResponseChunk(long n) {
            ttfc.add(n);
        }

        @Override
        public void onFirstToken(long n) {
            ttft.add(n);
        }

        @Override
        public void onChunkGap(long n) {
            gaps.add(n);
        }
    }

    /** The ITL samples as (nanoseconds, count) pairs, each value rounded to the nearest nanosecond. */
    static List<long[]> itl(RequestResult r) {
        List<long[]> samples = new ArrayList<>();
        r.itl().forEach((s, c) -> samples.add(new long[] {Math.round(s * 1e9), c}));
        return samples;
    }

    @Test
    void knownScheduleGivesExactTtftTpotItlAndE2e() {
        Live live = new Live();
        long t0 = 10_000 * MS;
        RequestTimeline t = new RequestTimeline(t0, true, live);
        t.onUpstreamHeaders(t0 + 2 * MS);
        t.onDataChunk(t0 + 5 * MS); // role chunk: a chunk, not a token
        for (int i = 0; i < 10; i++) {
            t.onTokenChunk(t0 + 200 * MS + i * 20 * MS, false, -1);
        }
        t.onUsage(new Usage(30, 10, 16));
        t.onFinishReason("stop");
        RequestResult r = t.finish(t0 + 390 * MS, Outcome.OK, 200);
        assertThat(r.firstResponseChunkNanos()).isEqualTo(5 * MS);
        assertThat(r.ttftNanos()).isEqualTo(200 * MS);
        assertThat(r.e2eNanos()).isEqualTo(380 * MS);
        assertThat(r.tpotNanos()).isEqualTo(20 * MS);
        assertThat(r.upstreamHeadersNanos()).isEqualTo(2 * MS);
        assertThat(r.outputTokens()).isEqualTo(10);
        assertThat(r.outputTokenSource()).isEqualTo(TokenCountSource.USAGE);
        assertThat(r.cachedTokens()).isEqualTo(16);
        assertThat(r.promptTokens()).isEqualTo(30);
        // nine samples of 20 ms: one bucket, whose value is their exact mean
        assertThat(itl(r)).containsExactly(new long[] {20 * MS, 9});
        assertThat(live.ttfc).containsExactly(5 * MS);
        assertThat(live.ttft).containsExactly(200 * MS);
        assertThat(live.gaps).hasSize(9).containsOnly(20 * MS);
    }

    @Test
    void multiTokenChunksAreTokenWeightedLikeSglang() {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        // 4 chunks, 40 ms apart, 4 tokens each = 16 tokens
        for (int i = 0; i < 4; i++) {
            t.onTokenChunk(100 * MS + i * 40 * MS, false, -1);
        }
        t.onUsage(new Usage(5, 16, -1));
        RequestResult r = t.finish(300 * MS, Outcome.OK, 200);
        // usage 16 over 4 chunks: 4 tokens a chunk, the 3 gaps 12 samples of 10 ms
        assertThat(itl(r)).containsExactly(new long[] {10 * MS, 12});
        assertThat(r.itl().sampleCount()).isEqualTo(12);
        assertThat(r.tpotNanos()).isEqualTo(120 * MS / 15);
    }

    @Test
    void continuousUsageGivesExactPerChunkWeights() {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        t.onTokenChunk(100 * MS, false, 1);
        t.onTokenChunk(130 * MS, false, 4);  // 3 tokens in 30 ms
        t.onTokenChunk(140 * MS, false, 5);  // 1 token in 10 ms
        t.onUsage(new Usage(5, 5, -1));
        RequestResult r = t.finish(150 * MS, Outcome.OK, 200);
        assertThat(itl(r)).containsExactly(new long[] {10 * MS, 4});
    }

    @Test
    void continuousUsageStaysExactPastTheFirstArraysAndACountMissingOnceEndsIt() {
        RequestTimeline exact = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        for (int i = 1; i <= 40; i++) {
            exact.onTokenChunk(i * 20 * MS, false, 2L * i);  // 2 tokens every 20 ms
        }
        exact.onUsage(new Usage(5, 80, -1));
        assertThat(itl(exact.finish(900 * MS, Outcome.OK, 200))).containsExactly(new long[] {10 * MS, 78});
        RequestTimeline stopped = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        for (int i = 1; i <= 40; i++) {
            // 3 tokens a chunk by the count, until chunk 20 comes without one
            stopped.onTokenChunk(i * 20 * MS, false, i == 20 ? -1 : 3L * i);
        }
        stopped.onUsage(new Usage(5, 40, -1));
        // chunk 20 and the one after it (no count before it) are one token each; the 37 others three
        RequestResult r = stopped.finish(900 * MS, Outcome.OK, 200);
        assertThat(r.itl().sampleCount()).isEqualTo(37 * 3 + 2);
        assertThat(r.itl().atOrUnder(7 * MS)).isEqualTo(37 * 3);
    }

    @Test
    void withoutUsageTokensAreCountedFromChunks() {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        t.onTokenChunk(50 * MS, false, -1);
        t.onTokenChunk(60 * MS, false, -1);
        t.onTokenChunk(80 * MS, false, -1);
        RequestResult r = t.finish(90 * MS, Outcome.OK, 200);
        assertThat(r.outputTokens()).isEqualTo(3);
        assertThat(r.outputTokenSource()).isEqualTo(TokenCountSource.CHUNKS);
        assertThat(r.tpotNanos()).isEqualTo(15 * MS);
        // two buckets: each value inside its own, and their sum the exact 30 ms
        List<long[]> samples = itl(r);
        assertThat(samples).hasSize(2);
        assertThat(samples.get(0)[1]).isEqualTo(1);
        assertThat(samples.get(1)[1]).isEqualTo(1);
        assertThat((double) samples.get(0)[0]).isCloseTo(10 * MS, org.assertj.core.data.Percentage.withPercentage(1.1));
        assertThat((double) samples.get(1)[0]).isCloseTo(20 * MS, org.assertj.core.data.Percentage.withPercentage(1.1));
        assertThat(samples.get(0)[0] + samples.get(1)[0]).isCloseTo(30 * MS, org.assertj.core.data.Offset.offset(1L));
    }

    @Test
    void reasoningAndContentFirstTimesAreSeparateAndTtftIsTheEarlier() {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        t.onTokenChunk(100 * MS, true, -1);
        t.onTokenChunk(150 * MS, true, -1);
        t.onTokenChunk(400 * MS, false, -1);
        RequestResult r = t.finish(500 * MS, Outcome.OK, 200);
        assertThat(r.ttftNanos()).isEqualTo(100 * MS);
        assertThat(r.firstReasoningNanos()).isEqualTo(100 * MS);
        assertThat(r.firstContentNanos()).isEqualTo(400 * MS);
    }

    @Test
    void singleTokenHasNoTpotAndNoItl() {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        t.onTokenChunk(100 * MS, false, -1);
        t.onUsage(new Usage(5, 1, -1));
        RequestResult r = t.finish(120 * MS, Outcome.OK, 200);
        assertThat(r.tpotNanos()).isEqualTo(-1);
        assertThat(r.itl().gaps()).isZero();
        assertThat(r.e2eNanos()).isEqualTo(100 * MS);
    }

    @Test
    void nonStreamingTtftEqualsE2eAndFailuresEndAtTheFailure() {
        RequestTimeline ok = new RequestTimeline(0, false, RequestTimeline.LiveListener.NONE);
        ok.onUsage(new Usage(5, 7, -1));
        RequestResult r = ok.finish(300 * MS, Outcome.OK, 200);
        assertThat(r.ttftNanos()).isEqualTo(300 * MS);
        assertThat(r.e2eNanos()).isEqualTo(300 * MS);
        assertThat(r.tpotNanos()).isEqualTo(-1);

        RequestTimeline broken = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        broken.onTokenChunk(100 * MS, false, -1);
        RequestResult b = broken.finish(700 * MS, Outcome.UPSTREAM_BROKEN, 200);
        assertThat(b.e2eNanos()).isEqualTo(700 * MS);
        assertThat(b.outcome()).isEqualTo(Outcome.UPSTREAM_BROKEN);
        assertThat(broken.finish(900 * MS, Outcome.OK, 200)).isSameAs(b);
    }

    @Test
    void inStreamErrorTurnsOkIntoUpstreamError() {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        t.onTokenChunk(100 * MS, false, -1);
        t.onStreamError();
        assertThat(t.finish(200 * MS, Outcome.OK, 200).outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
    }
}
