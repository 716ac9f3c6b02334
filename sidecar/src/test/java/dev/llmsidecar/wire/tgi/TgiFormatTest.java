package dev.llmsidecar.wire.tgi;

import static dev.llmsidecar.wire.WireHarness.decode;
import static dev.llmsidecar.wire.WireHarness.endOfEventWith;
import static dev.llmsidecar.wire.WireHarness.everySplit;
import static dev.llmsidecar.wire.WireHarness.response;
import static dev.llmsidecar.wire.WireHarness.stamp;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.RecordingSink;
import com.fasterxml.jackson.core.JsonFactory;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

/** TGI /generate_stream and /generate, shaped after TGI's OpenAPI (StreamResponse, GenerateResponse). */
class TgiFormatTest {

    static final TgiFormat STREAM_FORMAT = new TgiFormat(new JsonFactory(), true);
    static final TgiFormat FORMAT = new TgiFormat(new JsonFactory(), false);

    static String token(int index, String text, boolean special, String details) {
        return "data:{\"index\":" + index + ",\"token\":{\"id\":" + (1000 + index) + ",\"text\":\"" + text
                + "\",\"logprob\":-0.3,\"special\":" + special + "},\"generated_text\":"
                + (details == null ? "null" : "\"Hello wörld</s>\"") + ",\"details\":" + (details == null ? "null" : details)
                + "}\n\n";
    }

    /** axum's SSE writes "data:" without a space. The last event is the special EOS token with details. */
    static final String STREAM = token(1, "Hello", false, null) + token(2, " wörld", false, null)
            + token(3, "</s>", true, "{\"finish_reason\":\"eos_token\",\"generated_tokens\":3,\"seed\":null,\"input_length\":7}");

    @Test
    void everyTokenEventIsOneTokenAtEverySplitPoint() {
        int first = endOfEventWith(STREAM, "\"Hello\"", "\n\n");
        everySplit(STREAM, STREAM_FORMAT, "text/event-stream", (cut, sink) -> {
            assertThat(sink.tokenChunks).hasSize(3);
            assertThat(sink.cumulative).containsExactly(1L, 2L, 3L);
            assertThat(sink.tokenChunks.get(0)).isEqualTo(stamp(first, cut));
            assertThat(sink.usage.completionTokens()).isEqualTo(3);
            assertThat(sink.usage.promptTokens()).isEqualTo(7);
            assertThat(sink.finishReason).isEqualTo("stop");
            assertThat(sink.undecodable).isZero();
        });
    }

    @Test
    void errorEventsAndMalformedEvents() {
        String s = token(1, "a", false, null) + "data:{\"error\":\"Request failed during generation: out of memory\","
                + "\"error_type\":\"generation\"}\n\n" + "data:{\"index\":2,\"token\":\n\n";
        RecordingSink sink = decode(STREAM_FORMAT, response("text/event-stream"), s, 9, 90);
        assertThat(sink.streamErrors).isEqualTo(1);
        assertThat(sink.undecodable).isEqualTo(1);
        assertThat(sink.tokenChunks).hasSize(1);
    }

    @Test
    void generateBodyWithDetails() {
        String body = "{\"generated_text\":\"test\",\"details\":{\"finish_reason\":\"length\",\"generated_tokens\":20,"
                + "\"seed\":null,\"prefill\":[{\"id\":0,\"logprob\":null,\"text\":\"<s>\"}],\"tokens\":[{\"id\":1,"
                + "\"logprob\":-0.3,\"special\":false,\"text\":\"test\"}]}}";
        everySplit(body, FORMAT, "application/json", (cut, sink) -> {
            assertThat(sink.tokenChunks).isEmpty();
            assertThat(sink.usage.completionTokens()).isEqualTo(20);
            assertThat(sink.finishReason).isEqualTo("length");
        });
    }

    @Test
    void generateWithoutDetailsReadsTheTimingAndTokenHeaders() {
        MultiMap headers = MultiMap.caseInsensitiveMultiMap().add("x-compute-type", "1-nvidia-a10g")
                .add("x-total-time", "1210").add("x-validation-time", "1").add("x-queue-time", "12")
                .add("x-inference-time", "1197").add("x-time-per-token", "59").add("x-prompt-tokens", "5")
                .add("x-generated-tokens", "20");
        RecordingSink sink = decode(FORMAT, response("application/json", headers),
                "{\"generated_text\":\" Deep learning is ...\"}", 10);
        assertThat(sink.usage.promptTokens()).isEqualTo(5);
        assertThat(sink.usage.completionTokens()).isEqualTo(20);
        assertThat(sink.serverTimings.queueNanos()).isEqualTo(12_000_000L);
        assertThat(sink.serverTimings.decodeNanos()).isEqualTo(1_197_000_000L);
        assertThat(sink.serverTimings.engineTtftNanos()).isEqualTo(-1);
    }

    @Test
    void thePathDecidesStreamingAndThereIsNoModel() {
        Buffer body = Buffer.buffer("{\"inputs\":\"What is Deep Learning?\",\"parameters\":{\"max_new_tokens\":20}}");
        assertThat(STREAM_FORMAT.inspect(body).stream()).isTrue();
        assertThat(FORMAT.inspect(body).stream()).isFalse();
        assertThat(FORMAT.inspect(body).model()).isNull();
        assertThat(STREAM_FORMAT.inspect(body).body()).isSameAs(body);
    }
}
