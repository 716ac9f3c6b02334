package dev.llmsidecar.otel;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OtelPipelineTest {

    @Test
    void offWithoutAnEndpoint() {
        try (OtelPipeline p = OtelPipeline.create(Map.of(), new SimpleMeterRegistry())) {
            assertThat(p.enabled()).isFalse();
            assertThat(RequestTracing.of(p, "openai").enabled()).isFalse();
        }
    }

    @Test
    void onWithAnEndpointOrWhenExplicitlyEnabled() {
        var registry = new SimpleMeterRegistry();
        try (OtelPipeline p = OtelPipeline.create(Map.of("otel.exporter.otlp.endpoint", "http://127.0.0.1:1",
                "otel.metrics.exporter", "none"), registry)) {
            assertThat(p.enabled()).isTrue();
            assertThat(registry.find("llm_sidecar.otlp.span_queue_capacity").gauge().value()).isEqualTo(2048);
        }
        try (OtelPipeline p = OtelPipeline.create(Map.of("otel.sdk.disabled", "false", "otel.traces.exporter", "none",
                "otel.metrics.exporter", "none"), new SimpleMeterRegistry())) {
            assertThat(p.enabled()).isTrue();
        }
        try (OtelPipeline p = OtelPipeline.create(Map.of("otel.sdk.disabled", "true",
                "otel.exporter.otlp.endpoint", "http://127.0.0.1:1"), new SimpleMeterRegistry())) {
            assertThat(p.enabled()).isFalse();
        }
    }

    @Test
    void aConfigurationTheSdkRejectsTurnsOtlpOffInsteadOfFailing() {
        try (OtelPipeline p = OtelPipeline.create(Map.of("otel.exporter.otlp.endpoint", "http://127.0.0.1:1",
                "otel.metrics.exporter", "no-such-exporter"), new SimpleMeterRegistry())) {
            assertThat(p.enabled()).isFalse();
        }
    }
}
