package dev.llmsidecar.wire.ollama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@link OllamaChunk} on members of an unexpected type. Found by {@code dev.llmsidecar.fuzz.OllamaChunkFuzzTest}. */
class OllamaChunkTest {

    static OllamaChunk parse(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        return OllamaChunk.parse(new JsonFactory(), b, 0, b.length);
    }

    @Test
    void aDoneThatIsNotABooleanIsSkipped() {
        // not skipped, its members were read as the line's own and the line ended early: undecodable
        assertThat(parse("{\"done\":{\"response\":\"x\",\"done\":true},\"eval_count\":3}"))
                .isEqualTo(new OllamaChunk(false, false, false, false, false, null, -1, 3, null));
        assertThat(parse("{\"done\":[true],\"response\":\"x\"}"))
                .isEqualTo(new OllamaChunk(true, false, false, false, false, null, -1, -1, null));
    }
}
