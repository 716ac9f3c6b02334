package dev.llmsidecar.measure;

import static dev.llmsidecar.metrics.Contract.CHUNK_GAP;
import static dev.llmsidecar.metrics.Contract.FIRST_ANSWER;
import static dev.llmsidecar.metrics.Contract.FIRST_REASONING;
import static dev.llmsidecar.metrics.Contract.TIME_TO_FIRST_CONTENT_CHUNK;
import static dev.llmsidecar.metrics.Contract.TIME_TO_FIRST_RESPONSE_CHUNK;
import static dev.llmsidecar.metrics.Contract.TTFT;

import dev.llmsidecar.metrics.Recorder;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.Series;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The series recorded as an LLM request runs, before its outcome is known (first chunk, first token, chunk gaps):
 * bound once per request labels and kind of response, and recorded by each request's {@link LiveRequest}, so a chunk
 * costs one call per backend. docs/metrics.md defines every series.
 */
public final class LiveSeries {

    /** One kind of request's handles; those of a response that does not stream record nothing but its TTFT. */
    record Handles(Bound ttft, Bound firstContentChunk, Bound firstResponseChunk, Bound chunkGap, Bound firstReasoning,
            Bound firstAnswer) {
    }

    private final Recorders recorders;
    private final Upstream upstream;
    private final InFlight inFlight;
    private final Map<RequestLabels, Handles> streams = new ConcurrentHashMap<>();
    private final Map<RequestLabels, Handles> wholeResponses = new ConcurrentHashMap<>();

    /** @param inFlight the gauges a request is counted in while it runs */
    public LiveSeries(Recorders recorders, Upstream upstream, InFlight inFlight) {
        this.recorders = recorders;
        this.upstream = upstream;
        this.inFlight = inFlight;
    }

    /**
     * Starts the live part of an LLM request: in flight and waiting for its first token, and its live series as they
     * happen. Its {@link LiveRequest} is the listener of its timeline.
     */
    public LiveRequest started(RequestLabels labels, boolean streaming) {
        int load = inFlight.arrived(labels.model(), streaming);
        Map<RequestLabels, Handles> bound = streaming ? streams : wholeResponses;
        Handles handles = bound.get(labels);
        if (handles == null) { // the first request with these labels binds them
            handles = bound.computeIfAbsent(labels, l -> bind(l, streaming));
        }
        return new LiveRequest(handles, inFlight, labels, streaming, load);
    }

    private Handles bind(RequestLabels labels, boolean streaming) {
        // the others exist for streams only: a response that does not stream has no chunks of its own
        return new Handles(bind(TTFT, labels, streaming),
                streaming ? bind(TIME_TO_FIRST_CONTENT_CHUNK, labels, true) : Recorder.NOTHING,
                streaming ? bind(TIME_TO_FIRST_RESPONSE_CHUNK, labels, true) : Recorder.NOTHING,
                streaming ? bind(CHUNK_GAP, labels, true) : Recorder.NOTHING,
                streaming ? bind(FIRST_REASONING, labels, true) : Recorder.NOTHING,
                streaming ? bind(FIRST_ANSWER, labels, true) : Recorder.NOTHING);
    }

    /** The series' labels: the request's own by name, and whether it streams and the upstream. */
    private Bound bind(Series series, RequestLabels labels, boolean streaming) {
        return recorders.live(series, labels.of(series, label -> switch (label) {
            case STREAMING -> streaming;
            case SERVER_ADDRESS -> upstream.address();
            case SERVER_PORT -> upstream.portValue();
            default -> throw new IllegalStateException(series + ": a running request has no " + label
                    + "; fix it in the declaration");
        }));
    }
}
