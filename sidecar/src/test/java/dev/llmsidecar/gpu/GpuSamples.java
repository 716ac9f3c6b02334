package dev.llmsidecar.gpu;

import dev.llmsidecar.engine.ExpositionParser.Sample;
import dev.llmsidecar.engine.ExpositionParser;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Test support: the DCGM exporter answers under src/test/resources/gpu-metrics, in the exact text dcgm-exporter
 * 4.5.3-4.8.2 writes (the header of each file says where the format comes from). One node, four A100s:
 * dcgm-exporter-kubernetes.txt with the exporter's pod mapping (GPUs 0 and 1 of {@link #POD}, GPU 2 of
 * {@link #OTHER_POD}, GPU 3 of no pod), dcgm-exporter-no-pod-labels.txt the same without it.
 */
final class GpuSamples {

    static final String KUBERNETES = "dcgm-exporter-kubernetes.txt";
    static final String NO_POD_LABELS = "dcgm-exporter-no-pod-labels.txt";
    static final String POD = "vllm-llama-70b-6d5f7c9b8-x2kqp";
    static final String OTHER_POD = "embedder-5c8d9f7b6-q4wzt";
    static final double MIB = 1024.0 * 1024.0;

    private GpuSamples() {
    }

    static String text(String file) {
        try (InputStream in = GpuSamples.class.getResourceAsStream("/gpu-metrics/" + file)) {
            if (in == null) {
                throw new IllegalArgumentException("no test resource gpu-metrics/" + file);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The samples the scraper keeps, as it parses them. */
    static List<Sample> samples(String text) {
        return ExpositionParser.parse(text, DcgmNormaliser::relevant).samples();
    }
}
