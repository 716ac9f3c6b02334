package dev.llmsidecar.metrics.prometheus;

import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Renders a Prometheus registry in the format the scraper asked for, as the Prometheus client libraries negotiate
 * it: Prometheus with native histograms on asks for protobuf first (the only format that carries them), then
 * OpenMetrics (with the trace-id exemplars); a client that asks for nothing in particular gets the 0.0.4 text format.
 *
 * <p>client_java finds its protobuf writer by name, so a native image needs it registered for reflection
 * ({@code app/NativeImageRegistrations}, docs/native.md).
 */
public final class MetricsScrape {

    private final ExpositionFormats formats = ExpositionFormats.init();

    /**
     * @param accept the scraper's Accept header, or null
     * @return the content type chosen and the body
     */
    public Rendered render(PrometheusRegistry registry, String accept) {
        ExpositionFormatWriter writer = formats.findWriter(accept);
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
        try {
            writer.write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Rendered(writer.getContentType(), out.toByteArray());
    }

    public record Rendered(String contentType, byte[] body) {
        /** The body as text (not for protobuf). */
        public String text() {
            return new String(body, java.nio.charset.StandardCharsets.UTF_8);
        }
    }
}
