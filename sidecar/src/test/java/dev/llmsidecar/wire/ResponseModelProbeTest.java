package dev.llmsidecar.wire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.RecordingSink;
import com.fasterxml.jackson.core.JsonFactory;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ResponseModelProbeTest {

    static final JsonFactory JSON = new JsonFactory();

    static String find(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        return ResponseModelProbe.find(JSON, b, 0, b.length);
    }

    @Test
    void readsTheModelWhereEachFormatNamesIt() {
        assertThat(find("{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"llama-3\","
                + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}")).isEqualTo("llama-3");
        assertThat(find("{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":"
                + "\"assistant\",\"content\":[],\"model\":\"claude-x\",\"usage\":{\"input_tokens\":3}}}"))
                .isEqualTo("claude-x");
        assertThat(find("{\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"r\","
                + "\"status\":\"in_progress\",\"model\":\"gpt-oss\",\"output\":[]}}")).isEqualTo("gpt-oss");
        assertThat(find("{\"model\":\"qwen3:8b\",\"created_at\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":"
                + "\"assistant\",\"content\":\"Hi\"},\"done\":false}")).isEqualTo("qwen3:8b");
    }

    @Test
    void aTopLevelModelWinsOverANestedOneAndEmptyOrNonStringValuesAreNotModels() {
        assertThat(find("{\"message\":{\"model\":\"inner\"},\"model\":\"outer\"}")).isEqualTo("outer");
        assertThat(find("{\"model\":\"\",\"message\":{\"model\":\"inner\"}}")).isEqualTo("inner");
        assertThat(find("{\"model\":null}")).isNull();
        assertThat(find("{\"model\":{\"name\":\"x\"}}")).isNull();
        assertThat(find("{\"token\":{\"id\":1,\"text\":\"a\"},\"details\":{\"model\":\"deep\"}}")).isNull();
        assertThat(find("[1,2]")).isNull();
        assertThat(find("{\"model\":\"trunc")).isNull();
    }

    @Test
    void reportsOnceAndStopsLookingAfterTheFirstObjects() {
        RecordingSink sink = new RecordingSink();
        ResponseModelProbe probe = new ResponseModelProbe(JSON);
        byte[] none = "{\"token\":{\"text\":\"a\"}}".getBytes(StandardCharsets.UTF_8);
        byte[] named = "{\"model\":\"late\"}".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < ResponseModelProbe.ATTEMPTS; i++) {
            probe.look(none, 0, none.length, sink);
        }
        probe.look(named, 0, named.length, sink);
        assertThat(sink.responseModels).isEmpty();

        ResponseModelProbe second = new ResponseModelProbe(JSON);
        byte[] other = "{\"model\":\"other\"}".getBytes(StandardCharsets.UTF_8);
        second.look(named, 0, named.length, sink);
        second.look(other, 0, other.length, sink);
        assertThat(sink.responseModels).containsExactly("late");
    }

    /** Through each format's own decoder, as the proxy runs it. */
    @Test
    void everyFormatThatNamesTheModelReportsIt() {
        LlmRoutes routes = new LlmRoutes(JSON);
        String sse = "text/event-stream";
        assertThat(WireHarness.decode(routes.match("POST", "/v1/chat/completions").format(),
                WireHarness.response(sse), "data: {\"model\":\"a\",\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"
                        + "data: {\"model\":\"a\",\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n")
                .responseModels).containsExactly("a");
        assertThat(WireHarness.decode(routes.match("POST", "/v1/chat/completions").format(),
                WireHarness.response("application/json"), "{\"model\":\"b\",\"choices\":[{\"message\":{\"content\":\"x\"}}]}")
                .responseModels).containsExactly("b");
        assertThat(WireHarness.decode(routes.match("POST", "/v1/messages").format(),
                WireHarness.response(sse), "event: message_start\ndata: {\"type\":\"message_start\",\"message\":"
                        + "{\"model\":\"c\",\"usage\":{\"input_tokens\":1}}}\n\n").responseModels).containsExactly("c");
        assertThat(WireHarness.decode(routes.match("POST", "/v1/responses").format(),
                WireHarness.response(sse), "event: response.created\ndata: {\"type\":\"response.created\",\"response\":"
                        + "{\"model\":\"d\",\"status\":\"in_progress\"}}\n\n").responseModels).containsExactly("d");
        assertThat(WireHarness.decode(routes.match("POST", "/api/chat").format(),
                WireHarness.response("application/x-ndjson"), "{\"model\":\"e\",\"message\":{\"content\":\"x\"},"
                        + "\"done\":false}\n").responseModels).containsExactly("e");
    }

    @Test
    void aLargeObjectIsScannedOnlyAtItsStartAndANestedModelSurvivesTheCut() {
        String data = "{\"object\":\"embedding\",\"embedding\":[" + "0.125,".repeat(20_000) + "0.5]}";
        // an embeddings list names its model after the data: past the scan limit, not found (no second full parse)
        assertThat(looked("{\"object\":\"list\",\"data\":[" + data + "],\"model\":\"e5\"}")).isEmpty();
        assertThat(looked("{\"model\":\"e5\",\"object\":\"list\",\"data\":[" + data + "]}")).containsExactly("e5");
        // a nested model read before the cut is kept
        RecordingSink sink = new RecordingSink();
        byte[] b = ("{\"type\":\"message_start\",\"message\":{\"model\":\"c\"},\"pad\":\"" + "x".repeat(100_000)
                + "\"}").getBytes(StandardCharsets.UTF_8);
        new ResponseModelProbe(JSON).look(b, 0, b.length, sink);
        assertThat(sink.responseModels).containsExactly("c");
    }

    static java.util.List<String> looked(String json) {
        RecordingSink sink = new RecordingSink();
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        new ResponseModelProbe(JSON).look(b, 0, b.length, sink);
        return sink.responseModels;
    }

    @Test
    void aVeryLongNameIsCutNeverInsideASurrogatePair() {
        assertThat(ResponseModelProbe.cut("m".repeat(255) + "\uD83D\uDE00" + "x")).hasSize(255);
        assertThat(ResponseModelProbe.cut("m".repeat(300))).hasSize(ResponseModelProbe.MAX_CHARS);
    }

    @Test
    void aVeryLongNameIsCut() {
        RecordingSink sink = new RecordingSink();
        byte[] b = ("{\"model\":\"" + "m".repeat(1000) + "\"}").getBytes(StandardCharsets.UTF_8);
        new ResponseModelProbe(JSON).look(b, 0, b.length, sink);
        assertThat(sink.responseModels).singleElement().asString().hasSize(ResponseModelProbe.MAX_CHARS);
    }
}
