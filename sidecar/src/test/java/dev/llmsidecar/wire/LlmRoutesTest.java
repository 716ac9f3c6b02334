package dev.llmsidecar.wire;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.support.RecordingSink;
import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LlmRoutesTest {

    static final LlmRoutes ROUTES = new LlmRoutes(new JsonFactory());

    @Test
    void pathsMapToOperationAndFormat() {
        String[][] expected = {
            {"/v1/chat/completions", "chat", "openai_chat"},
            {"/v1/completions", "text_completion", "openai_completions"},
            {"/v1/responses", "chat", "openai_responses"},
            {"/v1/embeddings", "embeddings", "openai_embeddings"},
            {"/v1/messages", "chat", "anthropic_messages"},
            {"/api/chat", "chat", "ollama"},
            {"/api/generate", "text_completion", "ollama"},
            {"/generate_stream", "text_completion", "tgi"},
            {"/generate", "text_completion", "tgi"},
            {"/completion", "text_completion", "llamacpp"},
            {"/completions", "text_completion", "llamacpp"},
        };
        for (String[] row : expected) {
            LlmOperation op = ROUTES.match("POST", row[0]);
            assertThat(op).as(row[0]).isNotNull();
            assertThat(op.label()).as(row[0]).isEqualTo(row[1]);
            assertThat(op.format().name()).as(row[0]).isEqualTo(row[2]);
            assertThat(ROUTES.match("POST", row[0] + "/")).isSameAs(op);
            assertThat(ROUTES.match("GET", row[0])).isNull();
        }
        assertThat(ROUTES.all()).hasSize(expected.length);
        assertThat(ROUTES.match("POST", "/v1/models")).isNull();
        assertThat(ROUTES.match("POST", "/")).isNull();
        assertThat(ROUTES.match("POST", "/v1/chat/completions/x")).isNull();
    }

    @Test
    void embeddingsCountInputTokensOnly() {
        LlmOperation op = ROUTES.match("POST", "/v1/embeddings");
        assertThat(op.format().inspect(Buffer.buffer("{\"model\":\"text-embedding-3-small\",\"input\":\"hi\"}")))
                .satisfies(r -> {
                    assertThat(r.model()).isEqualTo("text-embedding-3-small");
                    assertThat(r.stream()).isFalse();
                    assertThat(r).as("no stream_options to edit").isExactlyInstanceOf(InspectedRequest.class);
                });
        String body = "{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,\"embedding\":[-0.006929,"
                + "-0.005336,3.1e-05]}],\"model\":\"text-embedding-3-small\",\"usage\":{\"prompt_tokens\":5,\"total_tokens\":5}}";
        WireHarness.everySplit(body, sink -> op.format().decoder(sink, WireHarness.response("application/json")),
                (cut, sink) -> {
                    assertThat(sink.usage.promptTokens()).isEqualTo(5);
                    assertThat(sink.usage.completionTokens()).isEqualTo(-1);
                    assertThat(sink.tokenChunks).isEmpty();
                });
    }

    /** Random bytes, random cuts, every format and content type: forwarded untouched, never an exception. */
    @Test
    void garbageNeverThrowsAndIsForwardedUntouched() {
        Random random = new Random(5);
        String[] types = {"text/event-stream", "application/json", "application/x-ndjson", null};
        String[] fragments = {"data: ", "data:", "{", "}", "\"type\":", "\"delta\":\"x\"", "\n", "\r\n", "\n\n", "[",
            "]", "\"token\":{}", "\"content\":\"a\"", "\"done\":true", "event: error\n", ":", "\"usage\":", "123", "\u00fc"};
        for (LlmOperation op : ROUTES.all()) {
            for (String type : types) {
                for (int round = 0; round < 40; round++) {
                    StringBuilder sb = new StringBuilder();
                    int parts = 1 + random.nextInt(60);
                    for (int i = 0; i < parts; i++) {
                        sb.append(random.nextInt(4) == 0 ? (char) random.nextInt(128) : fragments[random.nextInt(fragments.length)]);
                    }
                    byte[] bytes = sb.toString().getBytes(StandardCharsets.UTF_8);
                    int[] cuts = random.ints(random.nextInt(4), 0, bytes.length + 1).sorted().toArray();
                    RecordingSink sink = new RecordingSink();
                    StreamDecoder d = op.format().decoder(sink, WireHarness.response(type));
                    assertThat(WireHarness.feed(d, bytes, cuts)).as("%s %s", op.path(), type).isEqualTo(bytes);
                }
            }
        }
    }
}
