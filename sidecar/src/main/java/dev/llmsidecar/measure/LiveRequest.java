package dev.llmsidecar.measure;

import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.StallWatch;

/**
 * One LLM request's live recorder, the listener of its timeline ({@link LiveSeries#started}): first chunk, first token
 * and chunk gaps into the live series as they happen, its wait for a first token (ended once), and, when it streams,
 * its stamps for the stall watch.
 */
public final class LiveRequest extends StallWatch.Stream {

    private static final double NS = 1e9;

    private final LiveSeries.Handles series;
    private final InFlight inFlight;
    private final RequestLabels labels;
    private final boolean streaming;
    private final int loadAtArrival;
    private boolean waiting = true;

    LiveRequest(LiveSeries.Handles series, InFlight inFlight, RequestLabels labels, boolean streaming,
            int loadAtArrival) {
        super(streaming ? inFlight.stalls() : null, labels.model());
        this.series = series;
        this.inFlight = inFlight;
        this.labels = labels;
        this.streaming = streaming;
        this.loadAtArrival = loadAtArrival;
    }

    /** The labels the request was started with. */
    public RequestLabels labels() {
        return labels;
    }

    /** LLM requests in flight when this one started, itself included: its load band. */
    public int loadAtArrival() {
        return loadAtArrival;
    }

    @Override
    public void onFirstResponseChunk(long firstResponseChunkNanos) {
        if (streaming) {
            series.firstResponseChunk().record(firstResponseChunkNanos / NS);
        }
    }

    @Override
    public void onFirstToken(long ttftNanos) {
        if (streaming) {
            series.ttft().record(ttftNanos / NS);
            series.firstContentChunk().record(ttftNanos / NS);
        }
        stopWaiting();
    }

    @Override
    public void onFirstReasoningToken(long nanos) {
        if (streaming) {
            series.firstReasoning().record(nanos / NS);
        }
    }

    @Override
    public void onFirstAnswerToken(long nanos) {
        if (streaming) {
            series.firstAnswer().record(nanos / NS);
        }
    }

    @Override
    public void onChunkGap(long gapNanos) {
        if (streaming) {
            series.chunkGap().record(gapNanos / NS);
        }
    }

    @Override
    public void onEnd() {
        stopWaiting();
        super.onEnd();
    }

    private void stopWaiting() {
        if (waiting) {
            waiting = false;
            inFlight.stoppedWaiting();
        }
    }

    /**
     * The request ended with {@code r} (its timeline finished): out of flight. A response that does not stream has its
     * first token, the whole response, "as it happens" now.
     */
    void ended(RequestResult r) {
        inFlight.left();
        if (!streaming && r.ttftNanos() >= 0) {
            series.ttft().record(r.ttftNanos() / NS);
        }
    }
}
