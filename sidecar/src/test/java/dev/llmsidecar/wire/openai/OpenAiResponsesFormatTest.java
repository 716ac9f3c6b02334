package dev.llmsidecar.wire.openai;

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

/** OpenAI Responses API streams, shaped after the API reference's streaming events. */
class OpenAiResponsesFormatTest {

    static final OpenAiResponsesFormat FORMAT = new OpenAiResponsesFormat(new JsonFactory());

    static String ev(String type, String json) {
        return "event: " + type + "\ndata: {\"type\":\"" + type + "\"," + json + "}\n\n";
    }

    static final String RESPONSE_HEAD = "\"id\":\"resp_1\",\"object\":\"response\",\"created_at\":1741290958,"
            + "\"model\":\"o4-mini\",\"output\":[],\"error\":null,\"incomplete_details\":null,";

    /** Reasoning summary (2 deltas), then an answer (3 deltas), then response.completed with usage. */
    static final String STREAM = ev("response.created", "\"sequence_number\":0,\"response\":{" + RESPONSE_HEAD
            + "\"status\":\"in_progress\",\"usage\":null}")
            + ev("response.in_progress", "\"sequence_number\":1,\"response\":{" + RESPONSE_HEAD
            + "\"status\":\"in_progress\",\"usage\":null}")
            + ev("response.output_item.added", "\"sequence_number\":2,\"output_index\":0,\"item\":{\"id\":\"rs_1\","
            + "\"type\":\"reasoning\",\"summary\":[]}")
            + ev("response.reasoning_summary_part.added", "\"sequence_number\":3,\"item_id\":\"rs_1\","
            + "\"output_index\":0,\"summary_index\":0,\"part\":{\"type\":\"summary_text\",\"text\":\"\"}")
            + ev("response.reasoning_summary_text.delta", "\"sequence_number\":4,\"item_id\":\"rs_1\","
            + "\"output_index\":0,\"summary_index\":0,\"delta\":\"**Thinking**\"")
            + ev("response.reasoning_summary_text.delta", "\"sequence_number\":5,\"item_id\":\"rs_1\","
            + "\"output_index\":0,\"summary_index\":0,\"delta\":\" about it\"")
            + ev("response.reasoning_summary_text.done", "\"sequence_number\":6,\"item_id\":\"rs_1\","
            + "\"output_index\":0,\"summary_index\":0,\"text\":\"**Thinking** about it\"")
            + ev("response.output_item.added", "\"sequence_number\":7,\"output_index\":1,\"item\":{\"id\":\"msg_1\","
            + "\"type\":\"message\",\"status\":\"in_progress\",\"content\":[],\"role\":\"assistant\"}")
            + ev("response.content_part.added", "\"sequence_number\":8,\"item_id\":\"msg_1\",\"output_index\":1,"
            + "\"content_index\":0,\"part\":{\"type\":\"output_text\",\"annotations\":[],\"text\":\"\"}")
            + ev("response.output_text.delta", "\"sequence_number\":9,\"item_id\":\"msg_1\",\"output_index\":1,"
            + "\"content_index\":0,\"delta\":\"Hel\",\"logprobs\":[]")
            + ev("response.output_text.delta", "\"sequence_number\":10,\"item_id\":\"msg_1\",\"output_index\":1,"
            + "\"content_index\":0,\"delta\":\"lo ünï\",\"logprobs\":[]")
            + ev("response.output_text.delta", "\"sequence_number\":11,\"item_id\":\"msg_1\",\"output_index\":1,"
            + "\"content_index\":0,\"delta\":\"!\",\"logprobs\":[]")
            + ev("response.output_text.done", "\"sequence_number\":12,\"item_id\":\"msg_1\",\"output_index\":1,"
            + "\"content_index\":0,\"text\":\"Hello ünï!\",\"logprobs\":[]")
            + ev("response.output_item.done", "\"sequence_number\":13,\"output_index\":1,\"item\":{\"id\":\"msg_1\","
            + "\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[]}")
            + ev("response.completed", "\"sequence_number\":14,\"response\":{\"id\":\"resp_1\",\"object\":\"response\","
            + "\"status\":\"completed\",\"error\":null,\"incomplete_details\":null,\"output\":[{\"id\":\"rs_1\","
            + "\"type\":\"reasoning\",\"summary\":[]},{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[]}],"
            + "\"usage\":{\"input_tokens\":36,\"input_tokens_details\":{\"cached_tokens\":4},\"output_tokens\":25,"
            + "\"output_tokens_details\":{\"reasoning_tokens\":20},\"total_tokens\":61}}");

    static RecordingSink decodeStream(String s, int... cuts) {
        return decode(FORMAT, response("text/event-stream; charset=utf-8"), s, cuts);
    }

    @Test
    void reasoningAndAnswerDeltasAreTokensAtEverySplitPoint() {
        int firstReasoning = endOfEventWith(STREAM, "**Thinking**\"", "\n\n");
        int firstAnswer = endOfEventWith(STREAM, "\"Hel\"", "\n\n");
        int firstEvent = endOfEventWith(STREAM, "response.created", "\n\n");
        everySplit(STREAM, FORMAT, "text/event-stream", (cut, sink) -> {
            assertThat(sink.tokenChunks).hasSize(5);
            assertThat(sink.reasoningFlags).containsExactly(true, true, false, false, false);
            assertThat(sink.tokenChunks.get(0)).isEqualTo(stamp(firstReasoning, cut));
            assertThat(sink.tokenChunks.get(2)).isEqualTo(stamp(firstAnswer, cut));
            assertThat(sink.dataChunks.get(0)).isEqualTo(stamp(firstEvent, cut));
            assertUsage(sink, 36, 25, 4);
            assertThat(sink.usage.reasoningTokens()).as("output_tokens_details.reasoning_tokens").isEqualTo(20);
            assertThat(sink.finishReason).isEqualTo("stop");
            assertThat(sink.undecodable).isZero();
            assertThat(sink.streamErrors).isZero();
        });
    }

    @Test
    void oneReadPerEventStampsEachDelta() {
        RecordingSink sink = perEvent(STREAM, "\n\n", FORMAT, "text/event-stream");
        // events 0..14 arrive at 1000..1014; deltas are events 4, 5, 9, 10, 11
        assertThat(sink.tokenChunks).containsExactly(1004L, 1005L, 1009L, 1010L, 1011L);
        assertThat(sink.dataChunks.get(0)).isEqualTo(1000L);
    }

    @Test
    void functionCallArgumentsAreAnswerTokensAndFinishAsToolCalls() {
        String s = ev("response.created", "\"response\":{\"status\":\"in_progress\"}")
                + ev("response.output_item.added", "\"output_index\":0,\"item\":{\"type\":\"function_call\","
                + "\"id\":\"fc_1\",\"call_id\":\"call_1\",\"name\":\"get_weather\",\"arguments\":\"\"}")
                + ev("response.function_call_arguments.delta", "\"item_id\":\"fc_1\",\"output_index\":0,\"delta\":\"{\\\"\"")
                + ev("response.function_call_arguments.delta", "\"item_id\":\"fc_1\",\"output_index\":0,\"delta\":\"city\\\":\\\"Paris\\\"}\"")
                + ev("response.function_call_arguments.done", "\"item_id\":\"fc_1\",\"output_index\":0,"
                + "\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"")
                + ev("response.completed", "\"response\":{\"status\":\"completed\",\"output\":[{\"type\":\"function_call\","
                + "\"name\":\"get_weather\"}],\"usage\":{\"input_tokens\":50,\"output_tokens\":9,\"total_tokens\":59}}");
        RecordingSink sink = decodeStream(s, 17, 200);
        assertThat(sink.tokenChunks).hasSize(2);
        assertThat(sink.reasoningFlags).containsExactly(false, false);
        assertThat(sink.finishReason).isEqualTo("tool_calls");
        assertThat(sink.usage.completionTokens()).isEqualTo(9);
    }

    @Test
    void reasoningTextDeltasAreReasoningAndIncompleteIsLength() {
        String s = ev("response.reasoning_text.delta", "\"item_id\":\"rs_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"hm\"")
                + ev("response.output_text.delta", "\"item_id\":\"m\",\"output_index\":1,\"content_index\":0,\"delta\":\"A\"")
                + ev("response.incomplete", "\"response\":{\"status\":\"incomplete\",\"incomplete_details\":"
                + "{\"reason\":\"max_output_tokens\"},\"usage\":{\"input_tokens\":3,\"output_tokens\":16}}");
        RecordingSink sink = decodeStream(s);
        assertThat(sink.reasoningFlags).containsExactly(true, false);
        assertThat(sink.finishReason).isEqualTo("length");
        assertThat(sink.usage.completionTokens()).isEqualTo(16);
    }

    @Test
    void errorAndFailedEventsAreStreamErrorsAndEmptyDeltasAreNotTokens() {
        String s = ev("response.output_text.delta", "\"delta\":\"\"")
                + ev("error", "\"code\":\"server_error\",\"message\":\"boom\",\"param\":null")
                + ev("response.failed", "\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\","
                + "\"message\":\"boom\"}}");
        RecordingSink sink = decodeStream(s);
        assertThat(sink.tokenChunks).isEmpty();
        assertThat(sink.streamErrors).isEqualTo(2);
        assertThat(sink.finishReason).isEqualTo("error");
    }

    @Test
    void malformedEventsAreCountedAndForwarded() {
        String s = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n"
                + ev("response.output_text.delta", "\"delta\":\"x\"") + "data: [1,2]\n\n";
        RecordingSink sink = decodeStream(s, 5, 60);
        assertThat(sink.undecodable).isEqualTo(2);
        assertThat(sink.tokenChunks).hasSize(1);
    }

    @Test
    void nonStreamingResponseGivesUsageAndFinishButNoTokenChunks() {
        String body = "{\"id\":\"resp_1\",\"object\":\"response\",\"created_at\":1741476542,\"status\":\"completed\","
                + "\"error\":null,\"incomplete_details\":null,\"model\":\"gpt-4.1\",\"output\":[{\"type\":\"message\","
                + "\"id\":\"msg_1\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\","
                + "\"text\":\"In a peaceful grove...\",\"annotations\":[]}]}],\"usage\":{\"input_tokens\":36,"
                + "\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":87,\"output_tokens_details\":"
                + "{\"reasoning_tokens\":0},\"total_tokens\":123}}";
        everySplit(body, FORMAT, "application/json", (cut, sink) -> {
            assertThat(sink.tokenChunks).isEmpty();
            assertUsage(sink, 36, 87, 0);
            assertThat(sink.finishReason).isEqualTo("stop");
        });
    }

    @Test
    void requestInspectionReadsModelAndStreamWithoutTouchingTheBody() {
        Buffer body = Buffer.buffer("{\"model\":\"gpt-4.1\",\"input\":\"hi\",\"stream\":true}");
        InspectedRequest r = FORMAT.inspect(body);
        assertThat(r.model()).isEqualTo("gpt-4.1");
        assertThat(r.stream()).isTrue();
        assertThat(r).as("no stream_options to edit").isExactlyInstanceOf(InspectedRequest.class);
        assertThat(r.body()).isSameAs(body);
        assertThat(FORMAT.inspect(Buffer.buffer("{\"model\":\"m\",\"input\":\"hi\"}")).stream()).isFalse();
    }
}
