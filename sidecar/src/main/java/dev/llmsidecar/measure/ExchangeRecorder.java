package dev.llmsidecar.measure;

import dev.llmsidecar.conversation.Conversations;
import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.RequestBytes;
import dev.llmsidecar.observe.RequestHead;
import dev.llmsidecar.observe.UpstreamHeaders;
import dev.llmsidecar.otel.RequestSpan;
import dev.llmsidecar.otel.RequestTracing;
import dev.llmsidecar.slo.DeclaredTargets;
import dev.llmsidecar.slo.Objective;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.wire.ConversationReader;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.TokenEventSink;
import io.opentelemetry.context.Scope;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The measurements of one LLM exchange: its labels (model, tenant, priority, SLO class), its declared SLO targets,
 * its timeline, fed by the format's decoder, and its span; when it ends, the result goes to the
 * {@link RequestReporter}. Calls come from the exchange's event loop.
 */
final class ExchangeRecorder implements ExchangeObserver {

    private static final UnaryOperator<String> NO_HEADERS = name -> null;
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(ExchangeRecorder.class);
    private static final java.util.concurrent.atomic.AtomicBoolean CONVERSATION_FAILURE_LOGGED =
            new java.util.concurrent.atomic.AtomicBoolean();

    private final RequestReporter reporter;
    private final LabelSources sources;
    private final TrafficMetrics traffic;
    private final LlmOperation operation;
    private final long receivedNanos;
    private final String sloClass;
    /** The objectives the request declared in its headers, or null (the configured ones judge it). */
    private final List<Objective> declared;
    private final String tenantName;
    private final String tenant;
    private final RequestSpan span;
    /** What follows this exchange beside the metrics (the trace recorder), or null. */
    private final ExchangeFollower.Followed followed;

    // the labels so far: the body may name a model and a priority after the head was read
    private String priority;
    /** The model as the client named it (unbounded): objectives match on it. */
    private String modelName;
    /** Its bounded label. */
    private String model;
    private boolean streamRequested;
    private RequestTimeline timeline;
    /** Its live recorder, from the timeline's start: the request's labels, fixed from then on, and its load. */
    private LiveRequest live;
    /** Its place in its conversation (sidecar.conversations), or null. */
    private Conversations.Turn turn;

    ExchangeRecorder(RequestReporter reporter, RequestTracing tracing, RequestHead head, LlmOperation operation,
            long receivedNanos, ExchangeFollower.Followed followed) {
        this.followed = followed;
        this.reporter = reporter;
        this.sources = reporter.labelSources();
        this.traffic = reporter.traffic();
        this.operation = operation;
        this.receivedNanos = receivedNanos;
        this.declared = reporter.declaredObjectives(head::header);
        this.sloClass = declared != null ? DeclaredTargets.SLO_CLASS
                : reporter.policy().sloClass(head.header(reporter.policy().classHeader()));
        this.priority = sources.priorities().label(null, head::header); // until the body names one
        this.tenantName = sources.tenants().tenantOf(head::header);
        this.tenant = sources.tenants().label(tenantName);
        this.span = tracing.start(head, operation.label(), operation.format().providerName(), receivedNanos);
        // until its body names one (or if it is not read): the model the engine serves, when it serves one
        this.modelName = sources.models().serving();
        this.model = sources.models().label(modelName);
    }

    @Override
    public void requestInspected(String model, boolean stream, Integer priority) {
        if (priority != null) {
            this.priority = sources.priorities().label(priority, NO_HEADERS); // the body's is what vLLM schedules by
        }
        if (model != null && !model.isBlank()) {
            modelName = model;
            this.model = sources.models().label(model);
        }
        streamRequested = stream;
        span.request(model, stream);
    }

    @Override
    public void conversationRead(ConversationReader.Conversation conversation) {
        Conversations conversations = reporter.conversations();
        if (conversations != null) {
            try {
                turn = conversations.arrived(conversation, model, receivedNanos);
                span.conversation(turn.position().turn(), turn.position().after().label(), turn.warm(),
                        turn.linkLabel(), turn.gapNanos());
                if (followed != null && turn.conversationNumber() != 0) {
                    followed.conversation(turn.conversationNumber(), turn.position().turn());
                }
            } catch (RuntimeException e) {
                turn = null; // an optional measurement: the request goes on unmeasured, never hurt
                conversationFailed(e);
            }
        }
    }

    @Override
    public void requestBody(RequestBytes body) {
        if (followed != null) {
            followed.requestBody(body, model);
        }
    }

    /**
     * Starts the timeline (its clock started when the request arrived). Called once the request is on its way
     * upstream: a model's first request creates its meters, 1-2 ms here, which must not delay forwarding.
     */
    @Override
    public void requestSent() {
        startTimeline(streamRequested);
    }

    /**
     * Starts the timeline once and fixes the request's labels as they are now: the seam reports what the body names
     * (model, priority), when it is read, before the request is sent.
     */
    private void startTimeline(boolean streaming) {
        if (timeline == null) {
            RequestLabels labels = new RequestLabels(model, operation.label(), sources.provider(operation),
                    operation.format().name(), tenant, priority, sloClass);
            live = reporter.started(labels, streaming);
            timeline = new RequestTimeline(receivedNanos, streaming, span == RequestSpan.NOOP ? live
                    : new SpanScopedListener(live, span), reporter.itlGrid());
        }
    }

    @Override
    public void propagate(UpstreamHeaders upstream) {
        span.inject(upstream);
        if (reporter.policy().declared().enabled()) {
            upstream.remove(reporter.declaredTrust().header()); // the trusted callers' token stays here
        }
    }

    @Override
    public TokenEventSink responseStarted(int status, boolean streaming, long nanos) {
        startTimeline(streaming);
        timeline.onUpstreamHeaders(nanos);
        return timeline;
    }

    @Override
    public void written(long arrivedNanos, long writtenNanos) {
        traffic.chunkWritten(writtenNanos - arrivedNanos);
    }

    @Override
    public void clientPaused(long nanos) {
        startTimeline(streamRequested);
        timeline.onClientPaused(nanos);
    }

    @Override
    public void clientResumed(long nanos) {
        startTimeline(streamRequested);
        timeline.onClientResumed(nanos);
    }

    @Override
    public void clientStoppedReading() {
        startTimeline(streamRequested);
        timeline.onClientStoppedReading();
    }

    @Override
    public void ended(Outcome outcome, int status, long nanos) {
        traffic.httpRequest("llm", TrafficRecorder.statusClass(status));
        startTimeline(streamRequested);
        if (status / 100 == 2) {
            sources.tenants().admit(tenantName); // the engine accepted it: a tenant of its own from now on
            sources.models().admit(modelName); // and a model of its own
        }
        var result = timeline.finish(nanos, outcome, status);
        // the request's span is current while its results are recorded: histogram exemplars point to it
        try (Scope scope = span.makeCurrent()) {
            var verdict = reporter.finished(live, modelName, declared, result);
            span.finish(nanos, result, verdict, sloClass);
            if (turn != null) {
                try {
                    reporter.conversations().ended(turn, result, timeline.responseId(), nanos);
                } catch (RuntimeException e) {
                    conversationFailed(e);
                }
            }
        } finally {
            if (followed != null) {
                followed.finished(live.labels(), result); // once, whatever recording the metrics did
            }
        }
    }

    /** A defect of the conversation measurements, logged once per process (it would repeat on every request). */
    private static void conversationFailed(RuntimeException e) {
        if (CONVERSATION_FAILURE_LOGGED.compareAndSet(false, true)) {
            LOG.error("conversation measurement failed; the request was served unmeasured (logged once)", e);
        }
    }

    /** Records the live measurements (first token, chunk gaps) with the request's span current, for exemplars. */
    private record SpanScopedListener(RequestTimeline.LiveListener delegate, RequestSpan span)
            implements RequestTimeline.LiveListener {

        @Override
        public void onFirstResponseChunk(long firstResponseChunkNanos) {
            try (Scope scope = span.makeCurrent()) {
                delegate.onFirstResponseChunk(firstResponseChunkNanos);
            }
        }

        @Override
        public void onFirstToken(long ttftNanos) {
            try (Scope scope = span.makeCurrent()) {
                delegate.onFirstToken(ttftNanos);
            }
        }

        @Override
        public void onChunkGap(long gapNanos) {
            try (Scope scope = span.makeCurrent()) {
                delegate.onChunkGap(gapNanos);
            }
        }

        @Override
        public void onFirstReasoningToken(long nanos) {
            try (Scope scope = span.makeCurrent()) {
                delegate.onFirstReasoningToken(nanos);
            }
        }

        @Override
        public void onFirstAnswerToken(long nanos) {
            try (Scope scope = span.makeCurrent()) {
                delegate.onFirstAnswerToken(nanos);
            }
        }

        @Override
        public void onStart(long startNanos) {
            delegate.onStart(startNanos);
        }

        @Override
        public void onToken(long nanos) {
            delegate.onToken(nanos);
        }

        @Override
        public void onClientPaused(long nanos) {
            delegate.onClientPaused(nanos);
        }

        @Override
        public void onClientResumed(long nanos) {
            delegate.onClientResumed(nanos);
        }

        @Override
        public void onEnd() {
            delegate.onEnd();
        }
    }
}
