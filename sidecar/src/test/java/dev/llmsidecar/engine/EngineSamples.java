package dev.llmsidecar.engine;

import dev.llmsidecar.engine.ExpositionParser.Sample;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Test support: the sample expositions under src/test/resources/engine-metrics: vllm, sglang and tgi.txt as those
 * engines write them (make_fixtures.py there, from each engine's own metric definitions), llamacpp-de3ff815ea7d.txt
 * recorded from a real llama-server, llamacpp.txt an older llama-server's names.
 */
final class EngineSamples {

    private EngineSamples() {
    }

    static String text(String file) {
        try (InputStream in = EngineSamples.class.getResourceAsStream("/engine-metrics/" + file)) {
            if (in == null) {
                throw new IllegalArgumentException("no test resource engine-metrics/" + file);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<Sample> samples(String file) {
        return ExpositionParser.parse(text(file)).samples();
    }

}
