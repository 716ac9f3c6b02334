package dev.llmsidecar.timeline;

import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.Usage;
import java.util.Arrays;

/**
 * The timestamps of one LLM request, fed by a wire-format decoder as bytes arrive, turned into a
 * {@link RequestResult} when the request ends. Plain Java, no I/O: confined to the request's event loop.
 */
public final class RequestTimeline implements TokenEventSink {

    /** Measurements that are final as soon as they happen, for live export. */
    public interface LiveListener {
        void onFirstResponseChunk(long firstResponseChunkNanos);

        void onFirstToken(long ttftNanos);

        /** Raw gap between two successive token-bearing chunks. */
        void onChunkGap(long gapNanos);

        /** First reasoning (thinking) token-bearing chunk. */
        default void onFirstReasoningToken(long nanos) {
        }

        /** First answer token-bearing chunk: content, refusal or tool call. */
        default void onFirstAnswerToken(long nanos) {
        }

        /** The timeline started: its clock runs from {@code startNanos} (the request's arrival). */
        default void onStart(long startNanos) {
        }

        /**
         * A token-bearing chunk arrived at {@code nanos}: the stream's last sign of life, for the stall scan. Called
         * for every token chunk, so it must not allocate.
         */
        default void onToken(long nanos) {
        }

        /** The request ended (called once, from {@link RequestTimeline#finish}). */
        default void onEnd() {
        }

        LiveListener NONE = new LiveListener() {
            @Override
            public void onFirstResponseChunk(long firstResponseChunkNanos) {
            }

            @Override
            public void onFirstToken(long ttftNanos) {
            }

            @Override
            public void onChunkGap(long gapNanos) {
            }
        };
    }

    private final long startNanos;
    private final boolean streaming;
    private final LiveListener live;

    private long upstreamHeadersNanos = -1;
    private long firstResponseChunkNanos = -1;
    private long firstReasoningNanos = -1;
    private long firstContentNanos = -1;
    // grown by doubling; small to start, since thousands of streams are open at once
    private long[] chunkNanos = new long[16];
    // only while every chunk so far carried a cumulative token count (continuous usage); usually never allocated
    private long[] chunkCumulativeTokens;
    private boolean everyChunkCounted = true;
    private int chunks;
    private Usage usage;
    private ServerTimings serverTimings;
    private String finishReason;
    private String responseModel;
    private boolean streamError;
    private boolean terminated;
    private int undecodable;
    private RequestResult result;

    public RequestTimeline(long startNanos, boolean streaming, LiveListener live) {
        this.startNanos = startNanos;
        this.streaming = streaming;
        this.live = live;
        live.onStart(startNanos);
    }

    public long startNanos() {
        return startNanos;
    }

    public boolean streaming() {
        return streaming;
    }

    public boolean firstTokenSeen() {
        return chunks > 0;
    }

    public boolean finished() {
        return result != null;
    }

    public void onUpstreamHeaders(long nanos) {
        if (upstreamHeadersNanos < 0) {
            upstreamHeadersNanos = nanos;
        }
    }

    @Override
    public void onDataChunk(long nanos) {
        if (firstResponseChunkNanos < 0) {
            firstResponseChunkNanos = nanos;
            live.onFirstResponseChunk(nanos - startNanos);
        }
    }

    @Override
    public void onTokenChunk(long nanos, boolean reasoning, long cumulativeOutputTokens) {
        onDataChunk(nanos);
        if (reasoning) {
            if (firstReasoningNanos < 0) {
                firstReasoningNanos = nanos;
                live.onFirstReasoningToken(nanos - startNanos);
            }
        } else if (firstContentNanos < 0) {
            firstContentNanos = nanos;
            live.onFirstAnswerToken(nanos - startNanos);
        }
        if (chunks == 0) {
            live.onFirstToken(nanos - startNanos);
        } else {
            live.onChunkGap(nanos - chunkNanos[chunks - 1]);
        }
        if (chunks == chunkNanos.length) {
            chunkNanos = Arrays.copyOf(chunkNanos, chunks * 2);
        }
        chunkNanos[chunks] = nanos;
        recordCumulative(cumulativeOutputTokens);
        chunks++;
        live.onToken(nanos);
    }

    private void recordCumulative(long cumulativeOutputTokens) {
        if (!everyChunkCounted) {
            return;
        }
        if (cumulativeOutputTokens < 0) {
            // one chunk without a count: per-chunk token counts are unknown for good
            everyChunkCounted = false;
            chunkCumulativeTokens = null;
            return;
        }
        if (chunkCumulativeTokens == null) {
            chunkCumulativeTokens = new long[chunkNanos.length];
        } else if (chunkCumulativeTokens.length < chunkNanos.length) {
            chunkCumulativeTokens = Arrays.copyOf(chunkCumulativeTokens, chunkNanos.length);
        }
        chunkCumulativeTokens[chunks] = cumulativeOutputTokens;
    }

    @Override
    public void onUsage(Usage usage) {
        this.usage = usage;
    }

    @Override
    public void onServerTimings(ServerTimings timings) {
        this.serverTimings = timings;
    }

    @Override
    public void onFinishReason(String finishReason) {
        this.finishReason = finishReason;
    }

    @Override
    public void onResponseModel(String model) {
        this.responseModel = model;
    }

    @Override
    public void onStreamError() {
        streamError = true;
    }

    @Override
    public void onTerminator() {
        terminated = true;
    }

    @Override
    public void onUndecodable() {
        undecodable++;
    }

    /**
     * Ends the request (first call wins) and computes its result.
     *
     * @param outcome how the transport ended; an in-stream error turns OK into UPSTREAM_ERROR
     */
    public RequestResult finish(long endNanos, Outcome outcome, int status) {
        if (result != null) {
            return result;
        }
        live.onEnd();
        Outcome effective = outcome == Outcome.OK && streamError ? Outcome.UPSTREAM_ERROR : outcome;
        long outputTokens;
        TokenCountSource source;
        if (usage != null && usage.completionTokens() >= 0) {
            outputTokens = usage.completionTokens();
            source = TokenCountSource.USAGE;
        } else if (chunks > 0) {
            outputTokens = chunks;
            source = TokenCountSource.CHUNKS;
        } else {
            outputTokens = 0;
            source = TokenCountSource.NONE;
        }
        long e2e;
        long ttft;
        long tpot = -1;
        if (streaming) {
            ttft = chunks > 0 ? chunkNanos[0] - startNanos : -1;
            long last = chunks > 0 ? chunkNanos[chunks - 1] : -1;
            e2e = effective == Outcome.OK && chunks > 0 ? last - startNanos : endNanos - startNanos;
            if (chunks > 0 && outputTokens > 1) {
                tpot = (last - chunkNanos[0]) / (outputTokens - 1);
            }
        } else {
            e2e = endNanos - startNanos;
            ttft = effective == Outcome.OK ? e2e : -1;
        }
        result = RequestResult.builder(streaming, effective, status)
                .ttft(ttft).timeToFirstResponseChunk(rel(firstResponseChunkNanos)).firstReasoning(rel(firstReasoningNanos))
                .firstContent(rel(firstContentNanos)).e2e(e2e).tpot(tpot).upstreamHeaders(rel(upstreamHeadersNanos))
                .outputTokens(outputTokens, source)
                .promptTokens(usage == null ? -1 : usage.promptTokens(), usage == null ? -1 : usage.cachedTokens())
                .finishReason(finishReason).chunks(chunks, undecodable).itl(itlSamples(outputTokens, source))
                .serverTimings(serverTimings).responseModel(responseModel)
                .reasoningTokens(usage == null ? -1 : usage.reasoningTokens())
                .terminated(terminated)
                .silences(streaming ? endSilence(endNanos) : -1, streaming ? longestGap(endNanos, effective) : -1)
                .build();
        return result;
    }

    /** From the last token chunk, or without one from the arrival, to the end. */
    private long endSilence(long endNanos) {
        return Math.max(0, endNanos - (chunks > 0 ? chunkNanos[chunks - 1] : startNanos));
    }

    /** The longest gap between token chunks; for a stream that did not complete, its silence at the end too. */
    private long longestGap(long endNanos, Outcome outcome) {
        if (chunks == 0) {
            return -1;
        }
        long longest = outcome == Outcome.OK ? 0 : endSilence(endNanos);
        for (int i = 1; i < chunks; i++) {
            longest = Math.max(longest, chunkNanos[i] - chunkNanos[i - 1]);
        }
        return longest;
    }

    private long rel(long nanos) {
        return nanos < 0 ? -1 : nanos - startNanos;
    }

    private ItlSamples itlSamples(long outputTokens, TokenCountSource source) {
        if (chunks < 2) {
            return ItlSamples.NONE;
        }
        long[] gaps = new long[chunks - 1];
        int[] weights = new int[chunks - 1];
        for (int i = 1; i < chunks; i++) {
            gaps[i - 1] = chunkNanos[i] - chunkNanos[i - 1];
        }
        if (everyChunkCounted) {
            // continuous usage: exact tokens per chunk
            for (int i = 1; i < chunks; i++) {
                long delta = chunkCumulativeTokens[i] - chunkCumulativeTokens[i - 1];
                weights[i - 1] = (int) Math.max(1, Math.min(delta, Integer.MAX_VALUE));
            }
        } else if (source == TokenCountSource.USAGE && outputTokens > chunks) {
            // multi-token chunks of unknown sizes: spread the total evenly, remainder to the later chunks
            long base = outputTokens / chunks;
            long remainder = outputTokens % chunks;
            for (int i = 1; i < chunks; i++) {
                weights[i - 1] = (int) (base + (i >= chunks - remainder ? 1 : 0));
            }
        } else {
            Arrays.fill(weights, 1);
        }
        return new ItlSamples(gaps, weights);
    }
}
