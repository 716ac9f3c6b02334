package dev.llmsidecar.wire.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The Jackson path of {@link OpenAiChunkParser} (which answers whatever the scanner bails on) on values of an
 * unexpected type: each is skipped whole and the rest of the chunk is still read. Found by
 * {@code dev.llmsidecar.fuzz.OpenAiChunkFuzzTest}.
 */
class OpenAiChunkParserTest {

    final OpenAiChunkParser parser = new OpenAiChunkParser(new JsonFactory());

    OpenAiChunk parse(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        return parser.parse(b, 0, b.length);
    }

    @Test
    void aChoiceThatIsNotAnObjectIsSkipped() {
        assertThat(parse("{\"choices\":[null]}"))
                .isEqualTo(new OpenAiChunk(true, false, false, false, null, null, false, null, false));
        assertThat(parse("{\"choices\":[1,[{\"delta\":{}}],{\"delta\":{\"content\":\"a\"}}],\"error\":{}}"))
                .isEqualTo(new OpenAiChunk(true, false, true, false, null, null, true, null, false));
    }

    @Test
    void aUsageThatIsNotAnObjectIsSkipped() {
        assertThat(parse("{\"usage\":[null],\"choices\":[{\"delta\":{\"content\":\"a\"}}]}"))
                .isEqualTo(new OpenAiChunk(true, false, true, false, null, null, false, null, true));
        assertThat(parse("{\"usage\":[],\"choices\":[]}"))
                .isEqualTo(new OpenAiChunk(true, true, false, false, null, null, false, null, true));
    }

    @Test
    void aFinishReasonThatIsNotAStringIsSkipped() {
        // read as members of the choice, the nested delta made this a content chunk
        assertThat(parse("{\"choices\":[{\"finish_reason\":{\"delta\":{\"content\":\"x\"}}}],\"error\":1}"))
                .isEqualTo(new OpenAiChunk(true, false, false, false, null, null, true, null, false));
        assertThat(parse("{\"choices\":[{\"finish_reason\":\"stop\"},{\"finish_reason\":[\"length\"]}]}"))
                .isEqualTo(new OpenAiChunk(true, false, false, false, "stop", null, false, null, false));
    }
}
