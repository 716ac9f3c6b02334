package dev.llmsidecar.support;

import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.Usage;
import java.util.ArrayList;
import java.util.List;

/** Records every decoder event, for assertions. */
public class RecordingSink implements TokenEventSink {
    public final List<Long> dataChunks = new ArrayList<>();
    public final List<Long> tokenChunks = new ArrayList<>();
    public final List<Boolean> reasoningFlags = new ArrayList<>();
    public final List<Long> cumulative = new ArrayList<>();
    public Usage usage;
    public String finishReason;
    public int streamErrors;
    public int undecodable;
    public ServerTimings serverTimings;
    public final List<String> responseModels = new ArrayList<>();

    @Override
    public void onResponseModel(String model) {
        responseModels.add(model);
    }

    @Override
    public void onServerTimings(ServerTimings timings) {
        this.serverTimings = timings;
    }

    @Override
    public void onDataChunk(long nanos) {
        dataChunks.add(nanos);
    }

    @Override
    public void onTokenChunk(long nanos, boolean reasoning, long cumulativeOutputTokens) {
        tokenChunks.add(nanos);
        reasoningFlags.add(reasoning);
        cumulative.add(cumulativeOutputTokens);
    }

    @Override
    public void onUsage(Usage usage) {
        this.usage = usage;
    }

    @Override
    public void onFinishReason(String finishReason) {
        this.finishReason = finishReason;
    }

    @Override
    public void onStreamError() {
        streamErrors++;
    }

    @Override
    public void onUndecodable() {
        undecodable++;
    }
}
