package dev.llmsidecar.wire.llamacpp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@link LlamaCppChunk} on members of an unexpected type. Found by {@code dev.llmsidecar.fuzz.LlamaCppChunkFuzzTest}. */
class LlamaCppChunkTest {

    static LlamaCppChunk parse(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        return LlamaCppChunk.parse(new JsonFactory(), b, 0, b.length);
    }

    @Test
    void stopFlagsThatAreNotBooleansAreSkipped() {
        // not skipped, their members were read as the event's own and the reading ended at their end: a token, and
        // the error after them never seen
        assertThat(parse("{\"stop\":{\"content\":\"x\"},\"error\":\"boom\"}"))
                .isEqualTo(new LlamaCppChunk(false, false, true, null, null, null));
        assertThat(parse("{\"stopped_eos\":[1],\"stopped_limit\":{},\"content\":\"x\",\"stop\":true}"))
                .isEqualTo(new LlamaCppChunk(true, true, false, null, null, null));
    }
}
