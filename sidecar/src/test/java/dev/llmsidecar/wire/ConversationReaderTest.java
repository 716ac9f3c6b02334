package dev.llmsidecar.wire;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.llmsidecar.wire.ConversationReader.Conversation;
import dev.llmsidecar.wire.TurnCounter.After;
import dev.llmsidecar.wire.TurnCounter.Position;
import org.junit.jupiter.api.Test;

/** Turns and the history digests that link a request to the turn before, read from request bodies. */
class ConversationReaderTest {

    static final JsonFactory JSON = new JsonFactory();
    static final long KEY = 0x5eed;

    /**
     * Reads {@code body}'s messages (or Responses input) as the inspector does, under one fixed key: its texts hashed
     * where they lie in the UTF-8 bytes, and the same reading from the characters of the body in UTF-16 must agree.
     */
    static Conversation read(String body) throws Exception {
        byte[] utf8 = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Conversation inPlace = read(JSON.createParser(utf8), BodyText.of(utf8));
        Conversation fromCharacters = read(JSON.createParser(body.getBytes(java.nio.charset.StandardCharsets.UTF_16)),
                BodyText.of(body.getBytes(java.nio.charset.StandardCharsets.UTF_16)));
        assertThat(inPlace).as("hashed in the UTF-8 bytes and from the UTF-16 body's characters").isEqualTo(
                fromCharacters);
        return inPlace;
    }

    static Conversation read(JsonParser parser, BodyText bytes) throws Exception {
        ConversationReader reader = new ConversationReader(new HistoryDigest(KEY), bytes);
        try (JsonParser p = parser) {
            p.nextToken();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.getCurrentName();
                JsonToken v = p.nextToken();
                switch (name) {
                    case "messages" -> reader.messages(p, v);
                    case "input" -> reader.responsesInput(p, v);
                    case "previous_response_id" -> reader.previousResponse(p, v);
                    case "conversation" -> reader.conversationId(p, v);
                    default -> p.skipChildren();
                }
            }
        }
        return reader.conversation();
    }

    static String chat(String... messages) {
        return "{\"model\":\"m\",\"messages\":[" + String.join(",", messages) + "]}";
    }

    static String msg(String role, String content) {
        return "{\"role\":\"" + role + "\",\"content\":\"" + content + "\"}";
    }

    @Test
    void eachTurnLooksUpTheKeyTheTurnBeforeStored() throws Exception {
        Conversation t1 = read(chat(msg("system", "today is Monday"), msg("user", "hi")));
        Conversation t2 = read(chat(msg("system", "today is Tuesday"), msg("user", "hi"), msg("assistant", "hello"),
                msg("user", "how are you")));
        Conversation t3 = read(chat(msg("user", "hi"), msg("assistant", "hello"), msg("user", "how are you"),
                msg("assistant", "fine"), msg("user", "good")));
        assertThat(t1.position()).isEqualTo(new Position(1, After.USER));
        assertThat(t1.previousKey()).isZero();
        assertThat(t2.position()).isEqualTo(new Position(2, After.USER));
        assertThat(t2.previousKey()).as("the system prompt changed, the history did not").isEqualTo(t1.key());
        assertThat(t3.previousKey()).isEqualTo(t2.key());
        assertThat(t3.position().turn()).isEqualTo(3);
        assertThat(t1.key()).isNotEqualTo(t2.key()).isNotEqualTo(t3.key());
        // another conversation shares nothing
        assertThat(read(chat(msg("user", "hi!"))).key()).isNotEqualTo(t1.key());
    }

    @Test
    void anAgentLoopWithParallelToolCallsLinksEveryStep() throws Exception {
        String user = msg("user", "weather in Paris and Rome?");
        String calls = "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
                + "\"function\":{\"name\":\"weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}},{\"id\":\"c2\","
                + "\"type\":\"function\",\"function\":{\"name\":\"weather\",\"arguments\":\"{\\\"city\\\":\\\"Rome\\\"}\"}}]}";
        String r1 = "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"18C\"}";
        String r2 = "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"24C\"}";
        Conversation t1 = read(chat(user));
        Conversation t2 = read(chat(user, calls, r1, r2));
        Conversation t3 = read(chat(user, calls, r1, r2, msg("assistant", "Paris 18C, Rome 24C"), msg("user", "thanks")));
        assertThat(t2.position()).isEqualTo(new Position(2, After.TOOL));
        assertThat(t2.previousKey()).isEqualTo(t1.key());
        assertThat(t3.position()).isEqualTo(new Position(3, After.USER));
        assertThat(t3.previousKey()).isEqualTo(t2.key());
    }

    @Test
    void aRegenerationStoresTheSameKeyAndAPrefillIsNotPartOfIt() throws Exception {
        Conversation asked = read(chat(msg("user", "hi")));
        assertThat(read(chat(msg("user", "hi"))).key()).isEqualTo(asked.key());
        Conversation prefilled = read(chat(msg("user", "hi"), msg("assistant", "Sure,")));
        assertThat(prefilled.key()).isEqualTo(asked.key());
        assertThat(prefilled.position()).isEqualTo(new Position(1, After.USER));
    }

    /** Anthropic: moved cache_control markers, text as a string or as parts, thinking blocks: one history. */
    @Test
    void anthropicMarkersPartsAndThinkingDoNotChangeTheHistory() throws Exception {
        Conversation t1 = read(chat("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"list files\","
                + "\"cache_control\":{\"type\":\"ephemeral\"}}]}"));
        String use = "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"ls it\",\"signature\":"
                + "\"abc\"},{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"bash\",\"input\":{\"cmd\":\"ls\"}}]}";
        String result = "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":"
                + "\"a.txt\",\"cache_control\":{\"type\":\"ephemeral\"}}]}";
        Conversation t2 = read(chat(msg("user", "list files"), use, result));
        assertThat(t2.position()).isEqualTo(new Position(2, After.TOOL));
        assertThat(t2.previousKey()).as("the marker moved and the text became a string").isEqualTo(t1.key());
        String useWithoutThinking = "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":"
                + "\"bash\",\"input\":{\"cmd\":\"ls\"}}]}";
        String resultUnmarked = "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\","
                + "\"content\":\"a.txt\"}]}";
        Conversation t3 = read(chat(msg("user", "list files"), useWithoutThinking, resultUnmarked,
                msg("assistant", "a.txt"), msg("user", "ok")));
        assertThat(t3.previousKey()).as("thinking dropped, marker gone").isEqualTo(t2.key());
        // text parts are one text
        assertThat(read(chat("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"list \"},{\"type\":\"text\","
                + "\"text\":\"files\"}]}")).key()).isEqualTo(t1.key());
    }

    @Test
    void theResponsesApisItemsCountAsTurns() throws Exception {
        Conversation t1 = read("{\"model\":\"m\",\"input\":\"what is 2+2\"}");
        assertThat(t1.position()).isEqualTo(new Position(1, After.USER));
        assertThat(read("{\"input\":[{\"role\":\"user\",\"content\":\"what is 2+2\"}]}").key()).isEqualTo(t1.key());
        Conversation t2 = read("{\"input\":[{\"role\":\"user\",\"content\":\"what is 2+2\"},"
                + "{\"type\":\"reasoning\",\"id\":\"r1\",\"summary\":[]},"
                + "{\"type\":\"function_call\",\"call_id\":\"f1\",\"name\":\"calc\",\"arguments\":\"2+2\"},"
                + "{\"type\":\"function_call_output\",\"call_id\":\"f1\",\"output\":\"4\"}]}");
        assertThat(t2.position()).isEqualTo(new Position(2, After.TOOL));
        assertThat(t2.previousKey()).isEqualTo(t1.key());
    }

    @Test
    void aBodyWithoutMessagesIsAFirstTurn() throws Exception {
        Conversation none = read("{\"model\":\"m\",\"prompt\":\"hi\"}");
        assertThat(none.previousKey()).isZero();
        assertThat(none.position()).isEqualTo(new Position(1, After.USER));
    }

    /**
     * The Responses API's own links: the turn before is the response it names (its turn only the table knows), and
     * the key is the new input under that id, so the same words in two conversations are two keys.
     */
    @Test
    void aResponsesTurnLinksByTheResponseOrConversationItNames() throws Exception {
        Conversation next = read("{\"previous_response_id\":\"resp_1\",\"input\":\"and 3+3?\"}");
        assertThat(next.linked()).isEqualTo(ConversationReader.Linked.PREVIOUS_RESPONSE);
        assertThat(next.previousKey()).isEqualTo(HistoryDigest.ofId(ConversationReader.RESPONSE_ID, "resp_1"));
        assertThat(next.position()).isEqualTo(new Position(0, After.USER));
        assertThat(next.alias()).isZero();
        Conversation elsewhere = read("{\"input\":\"and 3+3?\",\"previous_response_id\":\"resp_2\"}");
        assertThat(elsewhere.key()).as("the same input after another response").isNotEqualTo(next.key());
        assertThat(read("{\"input\":\"and 3+3?\",\"previous_response_id\":\"resp_1\"}").key())
                .as("members in any order").isEqualTo(next.key());

        Conversation inConversation = read("{\"conversation\":{\"id\":\"conv_7\"},\"previous_response_id\":"
                + "\"resp_1\",\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":\"6\"}]}");
        assertThat(inConversation.linked()).isEqualTo(ConversationReader.Linked.CONVERSATION);
        long conv = HistoryDigest.ofId(ConversationReader.CONVERSATION_ID, "conv_7");
        assertThat(inConversation.previousKey()).isEqualTo(conv);
        assertThat(inConversation.alias()).as("the conversation's id moves to this turn").isEqualTo(conv);
        assertThat(inConversation.position().after()).isEqualTo(After.TOOL);
        assertThat(read("{\"conversation\":\"conv_7\",\"input\":\"x\"}").previousKey()).isEqualTo(conv);
        assertThat(HistoryDigest.ofId(ConversationReader.RESPONSE_ID, "conv_7")).as("kinds apart").isNotEqualTo(conv);
    }
}
