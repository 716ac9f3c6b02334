package dev.llmsidecar.wire.llamacpp;

import static dev.llmsidecar.wire.WireHarness.assertUsage;
import static dev.llmsidecar.wire.WireHarness.decode;
import static dev.llmsidecar.wire.WireHarness.endOfEventWith;
import static dev.llmsidecar.wire.WireHarness.everySplit;
import static dev.llmsidecar.wire.WireHarness.response;
import static dev.llmsidecar.wire.WireHarness.stamp;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.RecordingSink;
import com.fasterxml.jackson.core.JsonFactory;
import org.junit.jupiter.api.Test;

/** llama.cpp server /completion, shaped after tools/server/README.md. */
class LlamaCppFormatTest {

    static final LlamaCppFormat FORMAT = new LlamaCppFormat(new JsonFactory());

    static String content(String text) {
        return "data: {\"index\":0,\"content\":\"" + text + "\",\"tokens\":[],\"stop\":false,\"id_slot\":0,"
                + "\"tokens_predicted\":0,\"tokens_evaluated\":0}\n\n";
    }

    static final String FINAL = "data: {\"index\":0,\"content\":\"\",\"tokens\":[],\"id_slot\":0,\"stop\":true,"
            + "\"model\":\"gpt-3.5-turbo\",\"tokens_predicted\":4,\"tokens_evaluated\":9,\"generation_settings\":"
            + "{\"n_predict\":4,\"temperature\":0.8},\"prompt\":\"<s>Once\",\"has_new_line\":false,\"truncated\":false,"
            + "\"stop_type\":\"limit\",\"stopping_word\":\"\",\"tokens_cached\":12,\"timings\":{\"cache_n\":3,"
            + "\"prompt_n\":6,\"prompt_ms\":20.5,\"prompt_per_token_ms\":3.4,\"prompt_per_second\":292.6,"
            + "\"predicted_n\":4,\"predicted_ms\":60.25,\"predicted_per_token_ms\":15.06,\"predicted_per_second\":66.4}}\n\n";

    /** Three content events and an empty-content event carrying a token id (half a UTF-8 character). */
    static final String STREAM = content(" upon") + content(" a") + "data: {\"index\":0,\"content\":\"\",\"tokens\":[235],"
            + "\"stop\":false}\n\n" + content(" tïme") + FINAL;

    @Test
    void contentEventsAreTokensAndTheFinalEventHasUsageAndTimingsAtEverySplitPoint() {
        int first = endOfEventWith(STREAM, "\" upon\"", "\n\n");
        everySplit(STREAM, FORMAT, "text/event-stream", (cut, sink) -> {
            assertThat(sink.tokenChunks).hasSize(4);
            assertThat(sink.tokenChunks.get(0)).isEqualTo(stamp(first, cut));
            assertUsage(sink, 9, 4, 3);
            assertThat(sink.finishReason).isEqualTo("length");
            assertThat(sink.serverTimings.firstTokenNanos()).isEqualTo(20_500_000L);
            assertThat(sink.serverTimings.decodeNanos()).isEqualTo(60_250_000L);
            assertThat(sink.undecodable).isZero();
        });
    }

    @Test
    void olderServersStopFlagsAndTimingsOnlyCounts() {
        String s = content("x") + "data: {\"content\":\"\",\"stop\":true,\"stopped_eos\":true,\"stopped_limit\":false,"
                + "\"timings\":{\"prompt_n\":5,\"prompt_ms\":7,\"predicted_n\":1,\"predicted_ms\":2}}\n\n";
        RecordingSink sink = decode(FORMAT, response("text/event-stream"), s, 3);
        assertThat(sink.finishReason).isEqualTo("stop");
        assertThat(sink.usage.completionTokens()).isEqualTo(1);
        assertThat(sink.usage.promptTokens()).isEqualTo(5);
    }

    @Test
    void errorsAndMalformedEvents() {
        String s = content("x") + "data: {\"error\":{\"code\":500,\"message\":\"slot unavailable\",\"type\":\"server_error\"}}\n\n"
                + "data: {\"content\":\n\n";
        RecordingSink sink = decode(FORMAT, response("text/event-stream"), s, 50);
        assertThat(sink.streamErrors).isEqualTo(1);
        assertThat(sink.undecodable).isEqualTo(1);
    }

    @Test
    void nonStreamingCompletion() {
        String body = FINAL.substring("data: ".length(), FINAL.length() - 2).replace("\"content\":\"\"", "\"content\":\" upon a time\"");
        everySplit(body, FORMAT, "application/json; charset=utf-8", (cut, sink) -> {
            assertThat(sink.tokenChunks).isEmpty();
            assertThat(sink.usage.completionTokens()).isEqualTo(4);
            assertThat(sink.serverTimings.firstTokenNanos()).isEqualTo(20_500_000L);
            assertThat(sink.finishReason).isEqualTo("length");
        });
    }

    @Test
    void theNonStandardErrorLineIsAStreamError() {
        String s = content("x") + "error: {\"code\":500,\"message\":\"context shift is disabled\",\"type\":\"server_error\"}\n\n";
        everySplit(s, FORMAT, "text/event-stream", (cut, sink) -> {
            assertThat(sink.streamErrors).isEqualTo(1);
            assertThat(sink.tokenChunks).hasSize(1);
            assertThat(sink.undecodable).isZero();
        });
    }
}
