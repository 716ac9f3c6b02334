package dev.llmsidecar.otel;

import dev.llmsidecar.observe.UpstreamHeaders;
import dev.llmsidecar.slo.SloVerdict;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.TokenCountSource;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The span of one LLM request. Attributes follow the OTel GenAI conventions where they exist and use the
 * {@code llm_sidecar.} prefix otherwise. Never carries prompt or completion text.
 */
public interface RequestSpan {

    RequestSpan NOOP = new RequestSpan() {
    };

    /** Writes this span's trace context into the upstream request headers (replacing the client's). */
    default void inject(UpstreamHeaders upstreamHeaders) {
    }

    /** Makes the span current on this thread, so histogram exemplars recorded meanwhile point to it. */
    default Scope makeCurrent() {
        return Scope.noop();
    }

    /** What the request body said. */
    default void request(String model, boolean stream) {
    }

    default void finish(long endNanos, RequestResult result, SloVerdict verdict, String sloClass) {
    }

    /**
     * Where the request sits in its conversation (sidecar.conversations).
     *
     * @param turn its turn, 0 when unknown
     * @param gapNanos since the end of the turn before, or -1 when there is none
     */
    default void conversation(int turn, String after, boolean warm, String link, long gapNanos) {
    }

    /** The trace id, or null. */
    default String traceId() {
        return null;
    }

    final class Live implements RequestSpan {
        private static final int MAX_MODEL_CHARS = 256;

        private final Span span;
        private final TextMapPropagator propagator;
        private final String operation;
        private final long receivedNanos;
        private final long receivedEpochNanos;
        private final Context context;

        Live(Span span, TextMapPropagator propagator, String operation, long receivedNanos, long receivedEpochNanos) {
            this.span = span;
            this.propagator = propagator;
            this.operation = operation;
            this.receivedNanos = receivedNanos;
            this.receivedEpochNanos = receivedEpochNanos;
            this.context = Context.root().with(span);
        }

        @Override
        public void inject(UpstreamHeaders upstreamHeaders) {
            upstreamHeaders.remove("traceparent");
            upstreamHeaders.remove("tracestate");
            propagator.inject(context, upstreamHeaders, UpstreamHeaders::set);
        }

        @Override
        public Scope makeCurrent() {
            return context.makeCurrent();
        }

        @Override
        public void request(String model, boolean stream) {
            if (model != null) {
                String m = model.length() > MAX_MODEL_CHARS ? model.substring(0, MAX_MODEL_CHARS) : model;
                span.setAttribute("gen_ai.request.model", m);
                span.updateName(operation + " " + m);
            }
            span.setAttribute("gen_ai.request.stream", stream);
        }

        @Override
        public void conversation(int turn, String after, boolean warm, String link, long gapNanos) {
            if (turn > 0) {
                span.setAttribute("llm_sidecar.conversation.turn", (long) turn);
            }
            span.setAttribute("llm_sidecar.conversation.after", after);
            span.setAttribute("llm_sidecar.conversation.prefix", warm ? "warm" : "cold");
            span.setAttribute("llm_sidecar.conversation.link", link);
            if (gapNanos >= 0) {
                span.setAttribute("llm_sidecar.conversation.turn_gap", gapNanos / 1e9);
            }
        }

        @Override
        public void finish(long endNanos, RequestResult r, SloVerdict verdict, String sloClass) {
            span.setAttribute("http.response.status_code", (long) r.status());
            span.setAttribute("llm_sidecar.outcome", r.outcome().label());
            span.setAttribute("llm_sidecar.streaming", r.streaming());
            if (r.ttftNanos() >= 0) {
                double ttft = seconds(r.ttftNanos());
                span.setAttribute("llm_sidecar.time_to_first_token", ttft);
                span.addEvent("llm_sidecar.first_token",
                        Attributes.of(AttributeKey.doubleKey("llm_sidecar.time_to_first_token"), ttft),
                        receivedEpochNanos + r.ttftNanos(), TimeUnit.NANOSECONDS);
            }
            if (r.streaming() && r.ttftNanos() >= 0) {
                // semantic-conventions#3483: the first chunk of generated content, not a role-only prelude
                span.setAttribute("gen_ai.response.time_to_first_chunk", seconds(r.ttftNanos()));
            }
            if (r.firstResponseChunkNanos() >= 0) {
                span.setAttribute("llm_sidecar.time_to_first_response_chunk", seconds(r.firstResponseChunkNanos()));
            }
            if (r.responseModel() != null) {
                span.setAttribute("gen_ai.response.model", r.responseModel());
            }
            if (r.tpotNanos() >= 0) {
                span.setAttribute("llm_sidecar.time_per_output_token", seconds(r.tpotNanos()));
            }
            if (r.promptTokens() >= 0) {
                span.setAttribute("gen_ai.usage.input_tokens", r.promptTokens());
            }
            if (r.outputTokenSource() != TokenCountSource.NONE) {
                span.setAttribute("gen_ai.usage.output_tokens", r.outputTokens());
                span.setAttribute("llm_sidecar.output_tokens_source", r.outputTokenSource().label());
            }
            if (r.cachedTokens() >= 0) {
                span.setAttribute("gen_ai.usage.cache_read.input_tokens", r.cachedTokens());
            }
            if (r.reasoningTokens() >= 0) {
                span.setAttribute("gen_ai.usage.reasoning.output_tokens", r.reasoningTokens());
            }
            if (r.finishReason() != null) {
                span.setAttribute(AttributeKey.stringArrayKey("gen_ai.response.finish_reasons"),
                        List.of(r.finishReason()));
            }
            if (sloClass != null) {
                span.setAttribute("llm_sidecar.slo_class", sloClass);
            }
            if (verdict != null && !verdict.objectives().isEmpty()) {
                span.setAttribute("llm_sidecar.slo.good", verdict.good());
                List<String> violated = new ArrayList<>();
                for (SloVerdict.ObjectiveResult o : verdict.objectives()) {
                    o.violated().forEach(c -> violated.add(o.objective().name() + ":" + c.label()));
                }
                if (!violated.isEmpty()) {
                    span.setAttribute(AttributeKey.stringArrayKey("llm_sidecar.slo.violated"), violated);
                }
            }
            if (r.outcome() != Outcome.OK) {
                span.setAttribute("error.type", r.errorType());
                span.setStatus(StatusCode.ERROR, r.outcome().label());
            }
            span.end(receivedEpochNanos + (endNanos - receivedNanos), TimeUnit.NANOSECONDS);
        }

        @Override
        public String traceId() {
            return span.getSpanContext().getTraceId();
        }

        private static double seconds(long nanos) {
            return nanos / 1e9;
        }
    }
}
