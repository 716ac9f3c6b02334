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
        return JsonReads.parseObject(json, bytes, offset, length, false, Reader::new);
    }

    private static final class Reader implements JsonReads.ObjectReader<AnthropicEvent> {
        String type;
        boolean answer;
        boolean thinking;
        String stopReason;
        Counts usage;
        boolean toolUse;

        @Override
        public void member(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "type" -> type = JsonReads.string(p, v);
                case "message" -> JsonReads.members(p, v, this::messageMember);
                case "delta" -> JsonReads.members(p, v, this::deltaMember);
                case "usage" -> usage = JsonReads.object(p, v, new CountsReader());
                case "stop_reason" -> stopReason = JsonReads.string(p, v);
                case "content" -> {
                    toolUse = false;
                    JsonReads.elementMembers(p, v, this::contentBlockMember);
                }
                default -> p.skipChildren();
            }
        }

        private void messageMember(JsonParser p, String name, JsonToken v) throws IOException {
            if ("usage".equals(name)) {
                usage = JsonReads.object(p, v, new CountsReader());
            } else {
                p.skipChildren();
            }
        }

        private void deltaMember(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "text", "partial_json" -> answer |= JsonReads.nonEmptyString(p, v);
                case "thinking" -> thinking |= JsonReads.nonEmptyString(p, v);
                case "stop_reason" -> stopReason = JsonReads.string(p, v);
                default -> p.skipChildren();
            }
        }

        private void contentBlockMember(JsonParser p, String name, JsonToken v) throws IOException {
            if ("type".equals(name)) {
                toolUse |= "tool_use".equals(JsonReads.string(p, v));
            } else {
                p.skipChildren();
            }
        }

        @Override
        public AnthropicEvent build() {
            return new AnthropicEvent(type, answer, thinking, stopReason, usage, toolUse);
        }
    }

    private static final class CountsReader implements JsonReads.ObjectReader<Counts> {
        long input = -1;
        long output = -1;
        long cacheRead = -1;
        long cacheCreation = -1;

        @Override
        public void member(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "input_tokens" -> input = JsonReads.longValue(p, v);
                case "output_tokens" -> output = JsonReads.longValue(p, v);
                case "cache_read_input_tokens" -> cacheRead = JsonReads.longValue(p, v);
                case "cache_creation_input_tokens" -> cacheCreation = JsonReads.longValue(p, v);
                default -> p.skipChildren();
            }
        }

        @Override
        public Counts build() {
            return new Counts(input, output, cacheRead, cacheCreation);
        }
    }
}
