package dev.llmsidecar.otel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.Scrape;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OtelPipelineTest {

    @Test
    void offWithoutAnEndpoint() {
        try (OtelPipeline p = OtelPipeline.create(Map.of(), new io.prometheus.metrics.model.registry.PrometheusRegistry())) {
            assertThat(p.enabled()).isFalse();
            assertThat(RequestTracing.of(p, "openai").enabled()).isFalse();
        }
    }

    @Test
    void onWithAnEndpointOrWhenExplicitlyEnabled() {
        var registry = new io.prometheus.metrics.model.registry.PrometheusRegistry();
        try (OtelPipeline p = OtelPipeline.create(Map.of("otel.exporter.otlp.endpoint", "http://127.0.0.1:1",
                "otel.metrics.exporter", "none"), registry)) {
            assertThat(p.enabled()).isTrue();
            assertThat(Scrape.of(registry).sum("llm_sidecar_otlp_span_queue_capacity")).isEqualTo(2048);
        }
        try (OtelPipeline p = OtelPipeline.create(Map.of("otel.sdk.disabled", "false", "otel.traces.exporter", "none",
                "otel.metrics.exporter", "none"), new io.prometheus.metrics.model.registry.PrometheusRegistry())) {
            assertThat(p.enabled()).isTrue();
        }
        try (OtelPipeline p = OtelPipeline.create(Map.of("otel.sdk.disabled", "true",
                "otel.exporter.otlp.endpoint", "http://127.0.0.1:1"), new io.prometheus.metrics.model.registry.PrometheusRegistry())) {
            assertThat(p.enabled()).isFalse();
        }
    }

    @Test
    void aConfigurationTheSdkRejectsTurnsOtlpOffInsteadOfFailing() {
        try (OtelPipeline p = OtelPipeline.create(Map.of("otel.exporter.otlp.endpoint", "http://127.0.0.1:1",
                "otel.metrics.exporter", "no-such-exporter"), new io.prometheus.metrics.model.registry.PrometheusRegistry())) {
            assertThat(p.enabled()).isFalse();
        }
    }
}
