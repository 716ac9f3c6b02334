package dev.llmsidecar.otel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.slo.SloVerdict;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.wire.Usage;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The GenAI usage attributes of a request's span, from what the engine's usage reported. */
class RequestSpanTest {

    static final long MS = 1_000_000;

    final List<SpanData> exported = new CopyOnWriteArrayList<>();
    final SdkTracerProvider provider = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(new SpanExporter() {
                @Override
                public CompletableResultCode export(Collection<SpanData> spans) {
                    exported.addAll(spans);
                    return CompletableResultCode.ofSuccess();
                }

                @Override
                public CompletableResultCode flush() {
                    return CompletableResultCode.ofSuccess();
                }

                @Override
                public CompletableResultCode shutdown() {
                    return CompletableResultCode.ofSuccess();
                }
            })).build();

    SpanData span(boolean stream, Usage usage) {
        RequestSpan.Live live = new RequestSpan.Live(provider.get("test").spanBuilder("chat").startSpan(),
                W3CTraceContextPropagator.getInstance(), "chat", 0, System.currentTimeMillis() * MS);
        live.request("m", stream);
        RequestTimeline t = new RequestTimeline(0, stream, RequestTimeline.LiveListener.NONE);
        t.onTokenChunk(10 * MS, true, -1);
        t.onTokenChunk(20 * MS, false, -1);
        t.onUsage(usage);
        RequestResult r = t.finish(30 * MS, Outcome.OK, 200);
        live.finish(30 * MS, r, new SloVerdict(true, List.of()), null);
        assertThat(exported).hasSize(1);
        return exported.remove(0);
    }

    @Test
    void reasoningTokensAndStreamingAreOnTheSpanWhenKnown() {
        SpanData s = span(true, new Usage(100, 40, 60, 25));
        assertThat(s.getAttributes().get(AttributeKey.booleanKey("gen_ai.request.stream"))).isTrue();
        assertThat(s.getAttributes().get(AttributeKey.longKey("gen_ai.usage.input_tokens"))).isEqualTo(100);
        assertThat(s.getAttributes().get(AttributeKey.longKey("gen_ai.usage.output_tokens"))).isEqualTo(40);
        assertThat(s.getAttributes().get(AttributeKey.longKey("gen_ai.usage.cache_read.input_tokens"))).isEqualTo(60);
        assertThat(s.getAttributes().get(AttributeKey.longKey("gen_ai.usage.reasoning.output_tokens"))).isEqualTo(25);

        SpanData plain = span(false, new Usage(100, 40, -1));
        assertThat(plain.getAttributes().get(AttributeKey.booleanKey("gen_ai.request.stream"))).isFalse();
        assertThat(plain.getAttributes().get(AttributeKey.longKey("gen_ai.usage.reasoning.output_tokens")))
                .as("not reported: not on the span").isNull();
        assertThat(plain.getAttributes().get(AttributeKey.longKey("gen_ai.usage.cache_read.input_tokens"))).isNull();
    }
}
