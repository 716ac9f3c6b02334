package dev.llmsidecar.timeline;

import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.Usage;

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

        /** The client stopped taking bytes at {@code nanos}: the stream is paused by it, not silent by the engine. */
        default void onClientPaused(long nanos) {
        }

        /** The client takes bytes again from {@code nanos}. */
        default void onClientResumed(long nanos) {
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

    /** How a stream's chunks are weighted for ITL, decided at its first gap. */
    private enum Weights {
        /** Fewer than two token chunks so far. */
        UNDECIDED,
        /** Each chunk's tokens known as it arrives: one per chunk, or the cumulative counts of continuous usage. */
        PER_CHUNK,
        /** Known only at the end (usage): the raw gaps are kept and the total spread evenly over them then. */
        AT_END
    }

    private final long startNanos;
    private final boolean streaming;
    private final LiveListener live;
    private final ItlGrid grid;

    private long upstreamHeadersNanos = -1;
    private long firstResponseChunkNanos = -1;
    private long firstReasoningNanos = -1;
    private long firstContentNanos = -1;
    // what the end-of-request values need, and no more: memory does not grow with the stream
    private long firstChunkNanos = -1;
    private long lastChunkNanos = -1;
    private long longestGapNanos;
    private long lastCumulativeTokens = -1;
    private Weights weights = Weights.UNDECIDED;
    private ItlHistogram itl; // from the first gap
    private int clamped; // bits of ClampedValue ordinals
    private int chunks;
    private Usage usage;
    private ServerTimings serverTimings;
    private String finishReason;
    private String responseModel;
    /** The id the engine gave the response (Responses API), the first one it named; null: none. */
    private String responseId;
    private boolean streamError;
    private boolean terminated;
    private boolean clientStoppedReading;
    /** Since when the client has been pausing the stream, -1 while it reads. */
    private long pausedSinceNanos = -1;
    /** The last time the client took bytes again after a pause, -1 for none. */
    private long resumedNanos = -1;
    private int undecodable;
    private RequestResult result;

    /** A timeline on a grid without classic bounds (tests that do not export). */
    public RequestTimeline(long startNanos, boolean streaming, LiveListener live) {
        this(startNanos, streaming, live, ItlGrid.NATIVE_ONLY);
    }

    /** @param grid the ITL buckets: the exported ITL bounds, every SLO threshold among them */
    public RequestTimeline(long startNanos, boolean streaming, LiveListener live, ItlGrid grid) {
        this.startNanos = startNanos;
        this.streaming = streaming;
        this.live = live;
        this.grid = grid;
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
        long cumulative = cumulativeOutputTokens >= 0
                ? clamp(cumulativeOutputTokens, ClampedValue.COMPLETION_TOKENS) : -1;
        if (chunks == 0) {
            firstChunkNanos = nanos;
            live.onFirstToken(nanos - startNanos);
        } else {
            long gap = nanos - lastChunkNanos;
            live.onChunkGap(gap);
            longestGapNanos = Math.max(longestGapNanos, gap);
            itlSample(gap, cumulative);
        }
        // a chunk without a count leaves the next one's tokens unknown too: only a delta between two counts is exact
        lastCumulativeTokens = cumulative;
        lastChunkNanos = nanos;
        chunks++;
        live.onToken(nanos);
    }

    /** The gap that ended with this chunk, as ITL samples: k samples of gap/k for a chunk of k tokens. */
    /** @param cumulative this chunk's cumulative output tokens, already capped, or -1 */
    private void itlSample(long gap, long cumulative) {
        boolean counted = cumulative >= 0 && lastCumulativeTokens >= 0;
        if (weights == Weights.UNDECIDED) {
            weights = counted ? Weights.PER_CHUNK : Weights.AT_END;
            itl = new ItlHistogram(grid);
        }
        long tokens = 1; // a chunk of continuous usage without a count or after one without: one token
        if (weights == Weights.PER_CHUNK && counted) {
            // continuous usage: exact tokens per chunk
            tokens = Math.max(1, cumulative - lastCumulativeTokens);
            if (tokens > ClampedValue.MAX_TOKENS_PER_CHUNK) {
                clamped |= 1 << ClampedValue.TOKENS_PER_CHUNK.ordinal();
                tokens = ClampedValue.MAX_TOKENS_PER_CHUNK;
            }
        }
        itl.add(gap / tokens, (int) tokens);
    }

    /** {@code value} capped at {@link ClampedValue#MAX_TOKENS}, the cap noted. */
    private long clamp(long value, ClampedValue which) {
        if (value > ClampedValue.MAX_TOKENS) {
            clamped |= 1 << which.ordinal();
            return ClampedValue.MAX_TOKENS;
        }
        return value;
    }

    @Override
    public void onUsage(Usage usage) {
        long max = ClampedValue.MAX_TOKENS;
        if (usage.promptTokens() <= max && usage.completionTokens() <= max && usage.cachedTokens() <= max
                && usage.reasoningTokens() <= max) {
            this.usage = usage; // as always: no copy per chunk of continuous usage
            return;
        }
        this.usage = new Usage(clamp(usage.promptTokens(), ClampedValue.PROMPT_TOKENS),
                clamp(usage.completionTokens(), ClampedValue.COMPLETION_TOKENS),
                clamp(usage.cachedTokens(), ClampedValue.CACHED_TOKENS),
                clamp(usage.reasoningTokens(), ClampedValue.REASONING_TOKENS));
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
    public void onResponseId(String id) {
        if (responseId == null) {
            responseId = id;
        }
    }

    /** The id the engine gave the response ({@link #onResponseId}), or null. */
    public String responseId() {
        return responseId;
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

    /** The sidecar cut the stream because the client read nothing for the send timeout (the client's doing). */
    public void onClientStoppedReading() {
        clientStoppedReading = true;
    }

    /**
     * The client stopped taking bytes at {@code nanos}: the engine's silence from here is the client's doing (the
     * sidecar stopped reading the engine), so it counts toward no stall and no silence.
     */
    public void onClientPaused(long nanos) {
        if (pausedSinceNanos < 0) {
            pausedSinceNanos = nanos;
            live.onClientPaused(nanos);
        }
    }

    /** The client takes bytes again from {@code nanos}: the engine's silence counts again from here. */
    public void onClientResumed(long nanos) {
        if (pausedSinceNanos >= 0) {
            pausedSinceNanos = -1;
            resumedNanos = Math.max(resumedNanos, nanos);
            live.onClientResumed(nanos);
        }
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
            ttft = chunks > 0 ? firstChunkNanos - startNanos : -1;
            e2e = effective == Outcome.OK && chunks > 0 ? lastChunkNanos - startNanos : endNanos - startNanos;
            if (chunks > 0 && outputTokens > 1) {
                tpot = (lastChunkNanos - firstChunkNanos) / (outputTokens - 1);
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
                .clamped(ClampedValue.fromBits(clamped))
                .clientStoppedReading(clientStoppedReading)
                .clientPausedAtEnd(pausedSinceNanos >= 0)
                .build();
        return result;
    }

    /**
     * The engine's silence at the end: from the last token chunk (without one, the arrival; after a client's pause,
     * its end) to the end, or to the pause when the client was pausing the stream as it ended.
     */
    private long endSilence(long endNanos) {
        long from = Math.max(chunks > 0 ? lastChunkNanos : startNanos, resumedNanos);
        long to = pausedSinceNanos >= 0 ? Math.min(endNanos, pausedSinceNanos) : endNanos;
        return Math.max(0, to - from);
    }

    /** The longest gap between token chunks; for a stream that did not complete, its silence at the end too. */
    private long longestGap(long endNanos, Outcome outcome) {
        if (chunks == 0) {
            return -1;
        }
        return Math.max(longestGapNanos, outcome == Outcome.OK ? 0 : endSilence(endNanos));
    }

    private long rel(long nanos) {
        return nanos < 0 ? -1 : nanos - startNanos;
    }

    private ItlSamples itlSamples(long outputTokens, TokenCountSource source) {
        if (itl == null) {
            return ItlSamples.NONE;
        }
        // computed before the usage spread: it changes the values, and with them where each would be placed
        ItlSamples samples = itl.samples(chunks - 1);
        if (weights == Weights.AT_END && source == TokenCountSource.USAGE && outputTokens > chunks) {
            // multi-token chunks of unknown sizes: the total spread evenly, each chunk outputTokens / chunks tokens
            double perChunk = (double) outputTokens / chunks;
            if (perChunk > ClampedValue.MAX_TOKENS_PER_CHUNK) {
                clamped |= 1 << ClampedValue.TOKENS_PER_CHUNK.ordinal();
                perChunk = ClampedValue.MAX_TOKENS_PER_CHUNK;
            }
            return samples.spread(perChunk, Math.round((chunks - 1) * perChunk));
        }
        return samples;
    }
}
