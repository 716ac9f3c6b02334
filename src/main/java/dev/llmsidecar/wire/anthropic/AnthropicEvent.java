package dev.llmsidecar.wire.anthropic;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.llmsidecar.wire.JsonReads;
import java.io.IOException;

/**
 * What one Anthropic Messages object says: a stream event ({@code message_start}, {@code content_block_delta},
 * {@code message_delta}, ...) or a whole non-streaming message.
 *
 * @param type the {@code type} member
 * @param answerDelta a {@code text_delta} with text or an {@code input_json_delta} with JSON (tool use)
 * @param thinkingDelta a {@code thinking_delta} with text
 * @param stopReason {@code delta.stop_reason} (message_delta) or {@code stop_reason} (a whole message)
 * @param usage {@code message.usage} (message_start) or {@code usage} (message_delta, a whole message); null
 * @param toolUse a whole message's content holds a {@code tool_use} block
 */
record AnthropicEvent(String type, boolean answerDelta, boolean thinkingDelta, String stopReason, Counts usage,
        boolean toolUse) {

    /** Anthropic usage members; -1 when absent. {@code input_tokens} excludes the cache reads and writes. */
    record Counts(long input, long output, long cacheRead, long cacheCreation) {
    }

    static AnthropicEvent parse(JsonFactory json, byte[] bytes, int offset, int length) {
        try (JsonParser p = json.createParser(bytes, offset, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            Reader r = new Reader();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                switch (name) {
                    case "type" -> r.type = JsonReads.string(p, v);
                    case "message" -> readMessage(p, v, r);
                    case "delta" -> readDelta(p, v, r);
                    case "usage" -> r.usage = readUsage(p, v);
                    case "stop_reason" -> r.stopReason = JsonReads.string(p, v);
                    case "content" -> r.toolUse = readContent(p, v);
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT) {
                return null;
            }
            return new AnthropicEvent(r.type, r.answer, r.thinking, r.stopReason, r.usage, r.toolUse);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static final class Reader {
        String type;
        boolean answer;
        boolean thinking;
        String stopReason;
        Counts usage;
        boolean toolUse;
    }

    private static void readMessage(JsonParser p, JsonToken v, Reader r) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return;
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            if ("usage".equals(name)) {
                r.usage = readUsage(p, t);
            } else {
                p.skipChildren();
            }
        }
    }

    private static void readDelta(JsonParser p, JsonToken v, Reader r) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return;
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            switch (name) {
                case "text", "partial_json" -> r.answer |= JsonReads.nonEmptyString(p, t);
                case "thinking" -> r.thinking |= JsonReads.nonEmptyString(p, t);
                case "stop_reason" -> r.stopReason = JsonReads.string(p, t);
                default -> p.skipChildren();
            }
        }
    }

    private static boolean readContent(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.START_ARRAY) {
            p.skipChildren();
            return false;
        }
        boolean toolUse = false;
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.START_OBJECT) {
                p.skipChildren();
                continue;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken m = p.nextToken();
                if ("type".equals(name)) {
                    toolUse |= "tool_use".equals(JsonReads.string(p, m));
                } else {
                    p.skipChildren();
                }
            }
        }
        return toolUse;
    }

    private static Counts readUsage(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return null;
        }
        long input = -1;
        long output = -1;
        long read = -1;
        long creation = -1;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            switch (name) {
                case "input_tokens" -> input = JsonReads.longValue(p, t);
                case "output_tokens" -> output = JsonReads.longValue(p, t);
                case "cache_read_input_tokens" -> read = JsonReads.longValue(p, t);
                case "cache_creation_input_tokens" -> creation = JsonReads.longValue(p, t);
                default -> p.skipChildren();
            }
        }
        return new Counts(input, output, read, creation);
    }
}
