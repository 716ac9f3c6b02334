package dev.llmsidecar.fuzz;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmsidecar.wire.InspectedRequest;
import dev.llmsidecar.wire.RequestFields;
import dev.llmsidecar.wire.openai.BodyEdit;
import dev.llmsidecar.wire.openai.OpenAiRequest;
import dev.llmsidecar.wire.openai.OpenAiRequestInspector;
import dev.llmsidecar.wire.openai.UsageRequest;
import io.vertx.core.buffer.Buffer;
import java.nio.charset.Charset;
import java.util.Arrays;
import java.util.List;

/**
 * {@link OpenAiRequestInspector} (model, stream, stream_options, and the include_usage edit) and the other formats'
 * {@link RequestFields} against Jackson's tree of the same body. Where the inspector describes an edit, the edited
 * body must be one JSON object equal to the original plus {@code stream_options.include_usage = true}, and every
 * byte outside the edit must be the client's.
 */
class OpenAiRequestFuzzTest {

    private static final List<byte[]> EDITS = List.of(
            "\"stream_options\":{\"include_usage\":true},".getBytes(UTF_8),
            "\"include_usage\":true".getBytes(UTF_8),
            "{\"include_usage\":true}".getBytes(UTF_8));
    private static final byte[] NULL = "null".getBytes(UTF_8);
    /** Encodings a JSON body may come in: UTF-8 (RFC 8259), and those Jackson (and Python's json) also detect. */
    private static final String[] CHARSETS = {"UTF-8", "UTF-16BE", "UTF-16LE", "UTF-32BE", "UTF-32LE"};

    private final OpenAiRequestInspector inspector = new OpenAiRequestInspector(new JsonFactory());
    private final RequestFields fields = new RequestFields(new JsonFactory());
    /** With sidecar.conversations on: the messages are read too, and nothing else read may change. */
    private final OpenAiRequestInspector withConversations =
            new OpenAiRequestInspector(new JsonFactory(), dev.llmsidecar.wire.ConversationShape.MESSAGES);

    /** Valid request bodies: every member order, spacing and escaping, stream_options in all its forms. */
    @FuzzTest(maxDuration = "5m")
    void generatedRequest(FuzzedDataProvider data) {
        JsonGen g = new JsonGen(data);
        String json = g.ws() + request(g) + g.ws();
        boolean bom = g.upTo(15) == 15;
        Charset charset = Charset.forName(g.upTo(15) == 15 ? g.pick(CHARSETS) : "UTF-8");
        byte[] body = ((bom ? "\uFEFF" : "") + json).getBytes(charset);
        JsonTree.Reading reading = JsonTree.read(body, 0, body.length, true);
        assertThat(reading.verdict()).as("generated: %s", json).isEqualTo(JsonTree.Verdict.TREE);
        check(body);
    }

    /** Whatever a client sends as a request body. */
    @FuzzTest(maxDuration = "5m")
    void anyBytes(byte[] body) {
        check(body);
    }

    private void check(byte[] body) {
        String shown = new String(body, UTF_8);
        OpenAiRequest inspected = inspector.inspect(Buffer.buffer(body));
        assertThat(inspected.body().getBytes()).as("the body itself is never changed").isEqualTo(body);
        OpenAiRequest conversation = withConversations.inspect(Buffer.buffer(body));
        assertThat(new OpenAiRequest(conversation.decodable(), conversation.model(), conversation.stream(),
                conversation.priority(), conversation.usage(), conversation.usageEdit(), conversation.body()))
                .as("reading the conversation changes nothing else read: %s", shown).isEqualTo(inspected);
        assertThat(conversation.conversation() != null).as("a conversation for every object read: %s", shown)
                .isEqualTo(conversation.decodable());
        InspectedRequest streamByDefault = fields.inspect(Buffer.buffer(body), true);
        InspectedRequest notByDefault = fields.inspect(Buffer.buffer(body), false);

        JsonTree.Reading reading = JsonTree.read(body, 0, body.length, true);
        ObjectNode root = reading.object();
        if (reading.verdict() == JsonTree.Verdict.MALFORMED
                || (reading.verdict() == JsonTree.Verdict.TREE && root == null)) {
            assertThat(inspected).as("not a JSON object: %s", shown).isEqualTo(new OpenAiRequest(false, null, false,
                    UsageRequest.NOT_APPLICABLE, null, inspected.body()));
            assertThat(notByDefault).as("not a JSON object: %s", shown)
                    .isEqualTo(InspectedRequest.undecodable(false, notByDefault.body()));
            assertThat(streamByDefault).as("not a JSON object: %s", shown)
                    .isEqualTo(InspectedRequest.undecodable(true, streamByDefault.body()));
            return;
        }
        if (root == null) {
            if (inspected.usageEdit() != null) {
                assertEditIsMinimal(body, inspected.usageEdit(), shown);
            }
            return; // a repeated name, not UTF-8, or beyond Jackson's limits: no reference
        }

        String model = JsonTree.text(root.path("model"));
        JsonNode stream = root.path("stream");
        // vLLM's scheduling priority: an integer in int range, else none
        Integer priority = root.path("priority").isInt() ? root.path("priority").intValue() : null;
        assertThat(notByDefault).as("RequestFields, stream by default false: %s", shown).isEqualTo(new InspectedRequest(
                true, model, stream.isBoolean() ? stream.booleanValue() : false, priority, notByDefault.body()));
        assertThat(streamByDefault).as("RequestFields, stream by default true: %s", shown).isEqualTo(
                new InspectedRequest(true, model, stream.isBoolean() ? stream.booleanValue() : true, priority,
                        streamByDefault.body()));
        assertThat(inspected.priority()).as("priority: %s", shown).isEqualTo(priority);

        assertThat(inspected.decodable()).as("decodable: %s", shown).isTrue();
        assertThat(inspected.model()).as("model: %s", shown).isEqualTo(model);
        assertThat(inspected.stream()).as("stream: %s", shown).isEqualTo(stream.isBoolean() && stream.booleanValue());
        UsageRequest expected = !inspected.stream() ? UsageRequest.NOT_APPLICABLE : usageRequest(root);
        if (expected == UsageRequest.ABSENT && !isUtf8(body)) {
            expected = UsageRequest.NOT_APPLICABLE; // documented: a UTF-16 or UTF-32 body is never edited
        }
        assertThat(inspected.usage()).as("usage: %s", shown).isEqualTo(expected);
        if (expected != UsageRequest.ABSENT) {
            assertThat(inspected.usageEdit()).as("no edit: %s", shown).isNull();
            return;
        }
        assertThat(inspected.usageEdit()).as("edit: %s", shown).isNotNull();
        byte[] edited = inspected.bodyWithUsage().getBytes();
        assertEditIsMinimal(body, inspected.usageEdit(), shown);
        JsonTree.Reading after = JsonTree.read(edited, 0, edited.length, true);
        ObjectNode wanted = root.deepCopy();
        wanted.set("stream_options", JsonNodeFactory.instance.objectNode().put("include_usage", true));
        assertThat(after.tree()).as("edited %s into %s", shown, new String(edited, UTF_8)).isEqualTo(wanted);
    }

    /** By UsageRequest's documentation; only asked of a streaming request. */
    private static UsageRequest usageRequest(ObjectNode root) {
        JsonNode options = root.get("stream_options");
        if (options == null || options.isNull()) {
            return UsageRequest.ABSENT;
        }
        if (!options.isObject()) {
            return UsageRequest.OTHER_OPTIONS;
        }
        JsonNode include = options.get("include_usage");
        if (include != null && include.isBoolean()) {
            return include.booleanValue() ? UsageRequest.ASKED : UsageRequest.DECLINED;
        }
        return options.isEmpty() ? UsageRequest.ABSENT : UsageRequest.OTHER_OPTIONS;
    }

    /**
     * JSON in UTF-8 has no zero byte (a raw control character is not allowed in a string); in UTF-16 or UTF-32 every
     * ASCII character, the braces included, has one.
     */
    private static boolean isUtf8(byte[] json) {
        for (byte b : json) {
            if (b == 0) {
                return false;
            }
        }
        return true;
    }

    /** One of the three edits, at one place; every other byte as the client sent it. */
    private static void assertEditIsMinimal(byte[] body, BodyEdit edit, String shown) {
        assertThat(EDITS).as("inserted: %s", shown).anySatisfy(e -> assertThat(edit.inserted()).isEqualTo(e));
        assertThat(edit.at()).as("edit position: %s", shown).isBetween(0, body.length - edit.removed());
        if (edit.removed() > 0) {
            assertThat(Arrays.copyOfRange(body, edit.at(), edit.at() + edit.removed())).as("removed: %s", shown)
                    .isEqualTo(NULL);
        }
    }

    // ------------------------------------------------------------------------------------------ the generator

    private static String request(JsonGen g) {
        return g.object(
                g.maybe("model", () -> g.typed(() -> g.string(g.chance() ? "m-1" : g.text()))),
                g.maybe("messages", () -> g.array(g.upTo(2), () -> g.object(
                        g.member("role", () -> g.string(g.pick("user", "system", "assistant"))),
                        g.member("content", () -> g.typed(() -> g.string(g.text())))))),
                g.maybe("prompt", () -> g.string(g.text())),
                g.maybe("stream", () -> g.typed(() -> g.pick("true", "true", "false"))),
                g.maybe("stream_options", () -> g.typed(() -> g.chance() ? "null" : g.object(
                        g.maybe("include_usage", () -> g.typed(() -> g.chance() ? "true" : "false")),
                        g.maybe("continuous_usage_stats", () -> g.pick("true", "false"))))),
                g.maybe("max_tokens", g::count),
                g.maybe("temperature", g::number),
                g.maybe("tools", () -> g.anyValue(3)));
    }
}
