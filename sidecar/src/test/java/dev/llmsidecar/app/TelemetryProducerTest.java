package dev.llmsidecar.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TelemetryProducerTest {

    @Test
    void otelAndQuarkusOtelPropertiesBecomeSdkSettingsWithOtelWinning() {
        var config = new SmallRyeConfigBuilder().withSources(new PropertiesConfigSource(Map.of(
                "quarkus.otel.exporter.otlp.endpoint", "http://collector:4317",
                "quarkus.otel.metric.export.interval", "5s",
                "quarkus.otel.exporter.otlp.protocol", "grpc",
                "otel.exporter.otlp.protocol", "http/protobuf",
                "sidecar.upstream.url", "http://127.0.0.1:8000",
                "quarkus.http.port", "8080"), "test", 100)).build();
        assertThat(TelemetryProducer.otelSettings(config)).containsExactlyInAnyOrderEntriesOf(Map.of(
                "otel.exporter.otlp.endpoint", "http://collector:4317",
                "otel.metric.export.interval", "5s",
                "otel.exporter.otlp.protocol", "http/protobuf"));
    }
}
