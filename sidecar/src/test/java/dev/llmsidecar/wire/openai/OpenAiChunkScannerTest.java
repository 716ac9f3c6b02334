package dev.llmsidecar.wire.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.Usage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The single-pass scanner agrees with the Jackson parser on every input it accepts, and accepts the usual chunks. */
class OpenAiChunkScannerTest {

    final OpenAiChunkParser parser = new OpenAiChunkParser(new JsonFactory());

    static final List<String> USUAL = List.of(
            "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"m\","
                    + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" quick\"},\"logprobs\":null,\"finish_reason\":null}]}",
            "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}",
            "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"},\"finish_reason\":null}]}",
            "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\\\"\"}}]}}]}",
            "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[]}}]}",
            "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}",
            "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"length\"}],"
                    + "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19}}",
            "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":8,"
                    + "\"total_tokens\":24,\"completion_tokens\":16,\"prompt_tokens_details\":{\"cached_tokens\":4}}}",
            "{\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":16,"
                    + "\"prompt_tokens_details\":{\"cached_tokens\":4,\"audio_tokens\":0},"
                    + "\"completion_tokens_details\":{\"audio_tokens\":0,\"reasoning_tokens\":10}}}",
            "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\" fox\",\"logprobs\":null,"
                    + "\"finish_reason\":null}]}",
            "{\"id\":\"c\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Ünïcödé 😀 \\\"q\\\"\\n\"},"
                    + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}",
            "{\"error\":{\"message\":\"boom\",\"code\":500}}",
            "{\"error\":null,\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
            " \r\n\t{ \"choices\" : [ { \"delta\" : { \"content\" : \"spaced\" } } ] } ",
            "{\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"custom_reason\"}],\"x\":[1,-2.5e+3,true,false,null,{}]}",
            "{\"usage\":{\"prompt_tokens\":1.5,\"completion_tokens\":-0,\"prompt_tokens_details\":null},\"choices\":null}",
            "{\"usage\":null,\"choices\":[{\"delta\":{\"content\":\"a\"}},{\"delta\":{\"reasoning\":\"b\"}}]}",
            "{}");

    static final List<String> ODD = List.of(
            "", "   ", "[DONE]", "[1,2]", "\"str\"", "{", "{\"a\":}", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":01}",
            "{\"a\":1.}", "{\"a\":tru}", "{\"a\":\"\\x\"}", "{\"a\":\"\u0001\"}", "{\"choices\":[1,2]}",
            "{\"choices\":[{\"finish_reason\":{\"a\":1}}]}", "{\"usage\":[1,{\"completion_tokens\":3}]}",
            "{\"usage\":[]}", "{\"usage\":{\"completion_tokens\":123456789012345678901234}}",
            "{\"metrics\":{\"queue_time_ms\":1.5,\"time_to_first_token_ms\":20}}",
            "{\"timings\":{\"prompt_ms\":12.5},\"choices\":[]}", "{\"cho\\u0069ces\":[{\"delta\":{\"content\":\"a\"}}]}",
            "{\"choices\":[{\"finish_reason\":\"st\\u006fp\"}]}", "{\"a\":1} trailing", "{\"a\":[}", "{\"a\":{]}",
            "{\"a\":\"unterminated}");

    /** OpenAI's usage details: cached prompt tokens and reasoning output tokens, both ways of reading. */
    @Test
    void usageDetailsGiveCachedAndReasoningTokens() {
        String json = "{\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":16,"
                + "\"prompt_tokens_details\":{\"audio_tokens\":0,\"cached_tokens\":4},"
                + "\"completion_tokens_details\":{\"reasoning_tokens\":10,\"accepted_prediction_tokens\":0}}}";
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        Usage expected = new Usage(8, 16, 4, 10);
        assertThat(OpenAiChunkScanner.scan(b, 0, b.length).usage()).isEqualTo(expected);
        assertThat(parser.parseWithJackson(b, 0, b.length).usage()).isEqualTo(expected);
        byte[] none = "{\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":16}}"
                .getBytes(StandardCharsets.UTF_8);
        assertThat(OpenAiChunkScanner.scan(none, 0, none.length).usage().reasoningTokens()).isEqualTo(-1);
    }

    @Test
    void usualChunksTakeTheFastPathAndAgreeWithJackson() {
        for (String json : USUAL) {
            byte[] b = json.getBytes(StandardCharsets.UTF_8);
            OpenAiChunk fast = OpenAiChunkScanner.scan(b, 0, b.length);
            assertThat(fast).as(json).isNotSameAs(OpenAiChunkScanner.BAIL);
            assertThat(fast).as(json).isEqualTo(parser.parseWithJackson(b, 0, b.length));
        }
    }

    @Test
    void oddInputsAgreeWithJackson() {
        for (String json : ODD) {
            assertAgrees(json.getBytes(StandardCharsets.UTF_8), 0, json.getBytes(StandardCharsets.UTF_8).length);
        }
    }

    @Test
    void bytesAfterTheGivenLengthAreNeverRead() {
        // the SSE splitter reuses its data array: stale bytes of an earlier, longer event follow the current one
        String stale = "{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}";
        byte[] b = (stale.substring(0, 20) + stale.substring(20)).getBytes(StandardCharsets.UTF_8);
        for (int len = 0; len < b.length; len++) {
            assertAgrees(b, 0, len);
        }
    }

    @Test
    void randomMutationsOfRealChunksAgreeWithJackson() {
        Random random = new Random(7);
        List<byte[]> seeds = new ArrayList<>();
        USUAL.forEach(s -> seeds.add(s.getBytes(StandardCharsets.UTF_8)));
        byte[] alphabet = "{}[]\",:\\ 0123456789-+.eEtruefalsn\u00e9xu\n\t".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 30_000; i++) {
            byte[] b = seeds.get(random.nextInt(seeds.size())).clone();
            int edits = 1 + random.nextInt(3);
            for (int e = 0; e < edits; e++) {
                int at = random.nextInt(b.length);
                switch (random.nextInt(3)) {
                    case 0 -> b[at] = alphabet[random.nextInt(alphabet.length)];
                    case 1 -> b[at] = (byte) random.nextInt(256);
                    default -> b = java.util.Arrays.copyOf(b, at); // truncate
                }
                if (b.length == 0) {
                    break;
                }
            }
            assertAgrees(b, 0, b.length);
        }
    }

    private void assertAgrees(byte[] b, int offset, int length) {
        OpenAiChunk reference = parser.parseWithJackson(b, offset, length);
        OpenAiChunk fast = OpenAiChunkScanner.scan(b, offset, length);
        if (fast != OpenAiChunkScanner.BAIL) {
            assertThat(fast).as(new String(b, offset, length, StandardCharsets.UTF_8)).isEqualTo(reference);
        }
        assertThat(parser.parse(b, offset, length)).isEqualTo(reference);
    }
}
