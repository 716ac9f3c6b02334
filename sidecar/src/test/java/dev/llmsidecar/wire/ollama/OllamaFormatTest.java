package dev.llmsidecar.wire.ollama;

import static dev.llmsidecar.wire.WireHarness.decode;
import static dev.llmsidecar.wire.WireHarness.endOfEventWith;
import static dev.llmsidecar.wire.WireHarness.everySplit;
import static dev.llmsidecar.wire.WireHarness.perEvent;
import static dev.llmsidecar.wire.WireHarness.response;
import static dev.llmsidecar.wire.WireHarness.stamp;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.RecordingSink;
import dev.llmsidecar.wire.InspectedRequest;
import com.fasterxml.jackson.core.JsonFactory;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

/** Ollama native NDJSON, shaped after ollama/docs/api.md. */
class OllamaFormatTest {

    static final OllamaFormat FORMAT = new OllamaFormat(new JsonFactory());
    static final String NDJSON = "application/x-ndjson";

    static String chat(String message) {
        return "{\"model\":\"qwen3\",\"created_at\":\"2023-08-04T08:52:19.385406455-07:00\",\"message\":" + message
                + ",\"done\":false}\n";
    }

    static final String DONE_CHAT = "{\"model\":\"qwen3\",\"created_at\":\"2023-08-04T19:22:45.499127Z\","
            + "\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\","
            + "\"total_duration\":4883583458,\"load_duration\":1334875,\"prompt_eval_count\":26,"
            + "\"prompt_eval_duration\":342546000,\"eval_count\":282,\"eval_duration\":4535599000}\n";

    /** /api/chat with think=true: 2 thinking lines, 3 content lines (one with ü), then the final object. */
    static final String CHAT = chat("{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"Hmm\"}")
            + chat("{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\", ok\"}")
            + chat("{\"role\":\"assistant\",\"content\":\"The\"}")
            + chat("{\"role\":\"assistant\",\"content\":\" sky ü\"}")
            + chat("{\"role\":\"assistant\",\"content\":\" is blue.\"}")
            + DONE_CHAT;

    @Test
    void chatThinkingAndContentLinesAtEverySplitPoint() {
        int firstThinking = endOfEventWith(CHAT, "Hmm", "\n");
        int firstAnswer = endOfEventWith(CHAT, "\"The\"", "\n");
        everySplit(CHAT, FORMAT, NDJSON, (cut, sink) -> {
            assertThat(sink.tokenChunks).hasSize(5);
            assertThat(sink.reasoningFlags).containsExactly(true, true, false, false, false);
            assertThat(sink.tokenChunks.get(0)).isEqualTo(stamp(firstThinking, cut));
            assertThat(sink.tokenChunks.get(2)).isEqualTo(stamp(firstAnswer, cut));
            assertThat(sink.usage.promptTokens()).isEqualTo(26);
            assertThat(sink.usage.completionTokens()).isEqualTo(282);
            assertThat(sink.finishReason).isEqualTo("stop");
            assertThat(sink.serverTimings.loadNanos()).isEqualTo(1_334_875L);
            assertThat(sink.serverTimings.firstTokenNanos()).isEqualTo(342_546_000L);
            assertThat(sink.serverTimings.decodeNanos()).isEqualTo(4_535_599_000L);
            assertThat(sink.serverTimings.engineTtftNanos()).isEqualTo(1_334_875L + 342_546_000L);
            assertThat(sink.undecodable).isZero();
        });
    }

    @Test
    void generateStreamOneReadPerLine() {
        String s = "{\"model\":\"llama3.2\",\"created_at\":\"2023-08-04T08:52:19.385406455-07:00\",\"response\":\"The\",\"done\":false}\n"
                + "{\"model\":\"llama3.2\",\"created_at\":\"2023-08-04T08:52:19.385406455-07:00\",\"response\":\" sky\",\"done\":false}\n"
                + "{\"model\":\"llama3.2\",\"created_at\":\"2023-08-04T19:22:45.499127Z\",\"response\":\"\",\"done\":true,"
                + "\"done_reason\":\"length\",\"context\":[1,2,3],\"total_duration\":10706818083,\"load_duration\":6338219291,"
                + "\"prompt_eval_count\":26,\"prompt_eval_duration\":130079000,\"eval_count\":2,\"eval_duration\":4232710000}\n";
        RecordingSink sink = perEvent(s, "\n", FORMAT, NDJSON);
        assertThat(sink.tokenChunks).containsExactly(1000L, 1001L);
        assertThat(sink.dataChunks).containsExactly(1000L, 1001L, 1002L);
        assertThat(sink.usage.completionTokens()).isEqualTo(2);
        assertThat(sink.finishReason).isEqualTo("length");
        assertThat(sink.serverTimings.engineTtftNanos()).isEqualTo(6_338_219_291L + 130_079_000L);
    }

    @Test
    void toolCallsAreAnswerTokensAndFinishAsToolCalls() {
        String s = chat("{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"get_weather\","
                + "\"arguments\":{\"city\":\"Tokyo\"}}}]}") + DONE_CHAT;
        RecordingSink sink = decode(FORMAT, response(NDJSON), s, 30);
        assertThat(sink.tokenChunks).hasSize(1);
        assertThat(sink.reasoningFlags).containsExactly(false);
        assertThat(sink.finishReason).isEqualTo("tool_calls");
    }

    @Test
    void errorLinesMalformedLinesAndCrlf() {
        String s = chat("{\"role\":\"assistant\",\"content\":\"a\"}").replace("\n", "\r\n") + "\n{\"error\":\"model crashed\"}\n"
                + "{broken\n";
        RecordingSink sink = decode(FORMAT, response(NDJSON), s, 12);
        assertThat(sink.tokenChunks).hasSize(1);
        assertThat(sink.streamErrors).isEqualTo(1);
        assertThat(sink.undecodable).isEqualTo(1);
    }

    @Test
    void nonStreamingGenerateGivesUsageAndTimingsButNoTokenChunks() {
        String body = "{\"model\":\"llama3.2\",\"created_at\":\"2023-08-04T19:22:45.499127Z\",\"response\":\"The sky is blue.\","
                + "\"done\":true,\"done_reason\":\"stop\",\"context\":[1,2,3],\"total_duration\":5043500667,"
                + "\"load_duration\":5025959,\"prompt_eval_count\":26,\"prompt_eval_duration\":325953000,"
                + "\"eval_count\":290,\"eval_duration\":4709213000}";
        everySplit(body, FORMAT, "application/json; charset=utf-8", (cut, sink) -> {
            assertThat(sink.tokenChunks).isEmpty();
            assertThat(sink.usage.completionTokens()).isEqualTo(290);
            assertThat(sink.usage.promptTokens()).isEqualTo(26);
            assertThat(sink.serverTimings.decodeNanos()).isEqualTo(4_709_213_000L);
        });
    }

    @Test
    void streamDefaultsToTrue() {
        InspectedRequest r = FORMAT.inspect(Buffer.buffer("{\"model\":\"llama3.2\",\"prompt\":\"Why?\"}"));
        assertThat(r.model()).isEqualTo("llama3.2");
        assertThat(r.stream()).isTrue();
        assertThat(FORMAT.inspect(Buffer.buffer("{\"model\":\"x\",\"stream\":false}")).stream()).isFalse();
        assertThat(FORMAT.streamingResponse("application/x-ndjson")).isTrue();
        assertThat(FORMAT.streamingResponse("application/json; charset=utf-8")).isFalse();
    }
}
