package dev.llmsidecar.wire.anthropic;

import static dev.llmsidecar.wire.WireHarness.assertUsage;
import static dev.llmsidecar.wire.WireHarness.decode;
import static dev.llmsidecar.wire.WireHarness.endOfEventWith;
import static dev.llmsidecar.wire.WireHarness.everySplit;
import static dev.llmsidecar.wire.WireHarness.perEvent;
import static dev.llmsidecar.wire.WireHarness.response;
import static dev.llmsidecar.wire.WireHarness.stamp;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.support.RecordingSink;
import dev.llmsidecar.wire.InspectedRequest;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

/** Anthropic Messages streams, shaped after the streaming-messages documentation. */
class AnthropicMessagesFormatTest {

    static final AnthropicMessagesFormat FORMAT = new AnthropicMessagesFormat(new JsonFactory());

    static String ev(String type, String json) {
        return "event: " + type + "\ndata: {\"type\":\"" + type + "\"" + (json.isEmpty() ? "" : ",") + json + "}\n\n";
    }

    /** Extended thinking (2 thinking deltas + signature), then text (3 deltas), with a ping in between. */
    static final String STREAM = ev("message_start", "\"message\":{\"id\":\"msg_01\",\"type\":\"message\","
            + "\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,"
            + "\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"cache_creation_input_tokens\":10,"
            + "\"cache_read_input_tokens\":100,\"output_tokens\":1}}")
            + ev("content_block_start", "\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}")
            + ev("ping", "")
            + ev("content_block_delta", "\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me \"}")
            + ev("content_block_delta", "\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"think.\"}")
            + ev("content_block_delta", "\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAh\"}")
            + ev("content_block_stop", "\"index\":0")
            + ev("content_block_start", "\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}")
            + ev("content_block_delta", "\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}")
            + ev("content_block_delta", "\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\" wörld\"}")
            + ev("content_block_delta", "\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"!\"}")
            + ev("content_block_stop", "\"index\":1")
            + ev("message_delta", "\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},"
            + "\"usage\":{\"output_tokens\":15}")
            + ev("message_stop", "");

    static RecordingSink decodeStream(String s, int... cuts) {
        return decode(FORMAT, response("text/event-stream; charset=utf-8"), s, cuts);
    }

    @Test
    void thinkingAndTextDeltasAreTokensAndUsageIsAssembledAtEverySplitPoint() {
        int firstThinking = endOfEventWith(STREAM, "Let me ", "\n\n");
        int firstText = endOfEventWith(STREAM, "\"Hello\"", "\n\n");
        int messageStart = endOfEventWith(STREAM, "message_start", "\n\n");
        everySplit(STREAM, FORMAT, "text/event-stream", (cut, sink) -> {
            // the signature delta, block starts/stops, ping and message_stop are not tokens
            assertThat(sink.tokenChunks).hasSize(5);
            assertThat(sink.reasoningFlags).containsExactly(true, true, false, false, false);
            assertThat(sink.tokenChunks.get(0)).isEqualTo(stamp(firstThinking, cut));
            assertThat(sink.tokenChunks.get(2)).isEqualTo(stamp(firstText, cut));
            assertThat(sink.dataChunks.get(0)).isEqualTo(stamp(messageStart, cut));
            // OpenAI-style input: uncached + cache reads + cache writes; cached = cache reads
            assertUsage(sink, 135, 15, 100);
            assertThat(sink.finishReason).isEqualTo("stop");
            assertThat(sink.undecodable).isZero();
        });
    }

    @Test
    void oneReadPerEventStampsEachDelta() {
        RecordingSink sink = perEvent(STREAM, "\n\n", FORMAT, "text/event-stream");
        assertThat(sink.tokenChunks).containsExactly(1003L, 1004L, 1008L, 1009L, 1010L);
        // a stream cut before message_delta has input usage but no output count
        RecordingSink partial = decodeStream(STREAM.substring(0, STREAM.indexOf("event: message_delta")));
        assertThat(partial.usage.promptTokens()).isEqualTo(135);
        assertThat(partial.usage.completionTokens()).isEqualTo(-1);
    }

    @Test
    void toolUseJsonDeltasAreAnswerTokensAndStopReasonMapsToToolCalls() {
        String s = ev("message_start", "\"message\":{\"usage\":{\"input_tokens\":472,\"output_tokens\":2}}")
                + ev("content_block_start", "\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01\","
                + "\"name\":\"get_weather\",\"input\":{}}")
                + ev("content_block_delta", "\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}")
                + ev("content_block_delta", "\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"location\\\":\"}")
                + ev("content_block_delta", "\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\" \\\"Paris\\\"}\"}")
                + ev("content_block_stop", "\"index\":0")
                + ev("message_delta", "\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}")
                + ev("message_stop", "");
        RecordingSink sink = decodeStream(s, 40, 333);
        assertThat(sink.tokenChunks).hasSize(2);
        assertThat(sink.finishReason).isEqualTo("tool_calls");
        assertThat(sink.usage.completionTokens()).isEqualTo(89);
        assertThat(sink.usage.promptTokens()).isEqualTo(472);
    }

    @Test
    void errorEventIsAStreamErrorAndMaxTokensIsLength() {
        String s = ev("message_start", "\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}")
                + ev("content_block_delta", "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}")
                + ev("error", "\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}");
        RecordingSink sink = decodeStream(s);
        assertThat(sink.streamErrors).isEqualTo(1);
        assertThat(sink.tokenChunks).hasSize(1);
        String t = ev("message_delta", "\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":4}");
        assertThat(decodeStream(t).finishReason).isEqualTo("length");
    }

    @Test
    void malformedAndUnknownEvents() {
        String s = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\n\n"
                + ev("some_future_event", "\"x\":1") + "data: not json\n\n"
                + ev("content_block_delta", "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}");
        RecordingSink sink = decodeStream(s, 7);
        assertThat(sink.undecodable).isEqualTo(2);
        assertThat(sink.tokenChunks).hasSize(1);
    }

    @Test
    void nonStreamingMessage() {
        String body = "{\"id\":\"msg_01\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\","
                + "\"content\":[{\"type\":\"thinking\",\"thinking\":\"...\",\"signature\":\"x\"},{\"type\":\"text\","
                + "\"text\":\"Hi!\"}],\"stop_reason\":\"end_turn\",\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,"
                + "\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":8,\"output_tokens\":30}}";
        everySplit(body, FORMAT, "application/json", (cut, sink) -> {
            assertThat(sink.tokenChunks).isEmpty();
            assertUsage(sink, 20, 30, 8);
            assertThat(sink.finishReason).isEqualTo("stop");
        });
        RecordingSink error = decode(FORMAT, response("application/json"),
                "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"x\"}}");
        assertThat(error.streamErrors).isEqualTo(1);
    }

    @Test
    void requestInspectionDefaultsToNotStreaming() {
        InspectedRequest r = FORMAT.inspect(Buffer.buffer("{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":1024,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"stream\":true}"));
        assertThat(r.model()).isEqualTo("claude-sonnet-4-5");
        assertThat(r.stream()).isTrue();
        assertThat(r).as("no stream_options to edit").isExactlyInstanceOf(InspectedRequest.class);
        assertThat(FORMAT.inspect(Buffer.buffer("{\"model\":\"m\"}")).stream()).isFalse();
    }
}
