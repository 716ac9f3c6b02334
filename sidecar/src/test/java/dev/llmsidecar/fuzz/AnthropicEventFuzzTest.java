package dev.llmsidecar.fuzz;

import static dev.llmsidecar.fuzz.JsonTree.nonEmptyText;
import static dev.llmsidecar.fuzz.JsonTree.text;
import static dev.llmsidecar.fuzz.JsonTree.truncatedOrMinusOne;
import static java.nio.charset.StandardCharsets.UTF_8;

import dev.llmsidecar.wire.anthropic.AnthropicMessagesFormat;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.invoke.MethodHandle;

/** {@code AnthropicEvent} (Messages stream events and whole messages) against Jackson's tree. */
class AnthropicEventFuzzTest {

    private static final String EVENT = "dev.llmsidecar.wire.anthropic.AnthropicEvent";
    private static final MethodHandle NEW_EVENT = Hidden.recordConstructor(Hidden.type(EVENT));
    private static final MethodHandle NEW_COUNTS = Hidden.recordConstructor(Hidden.type(EVENT + "$Counts"));
    private static final String[] TYPES = {"message_start", "content_block_start", "content_block_delta",
        "content_block_stop", "message_delta", "message_stop", "ping", "error", "message"};
    private static final String[] STOP_REASONS = {"end_turn", "max_tokens", "stop_sequence", "tool_use", "refusal",
        "pause_turn"};

    private final EventOracle oracle = new EventOracle(EVENT, AnthropicEventFuzzTest::expected, false);
    private final AnthropicMessagesFormat format = new AnthropicMessagesFormat(EventOracle.JSON);

    @FuzzTest(maxDuration = "5m")
    void generatedEvent(FuzzedDataProvider data) {
        JsonGen g = new JsonGen(data);
        oracle.check(event(g).getBytes(UTF_8));
    }

    @FuzzTest(maxDuration = "5m")
    void anyBytes(byte[] data) {
        oracle.check(data);
        EventOracle.decoders(format, "text/event-stream", data);
    }

    /** By AnthropicEvent's documentation: members read in document order, a later one replacing an earlier. */
    static Object expected(ObjectNode root) {
        var r = new Object() {
            String type;
            boolean answer;
            boolean thinking;
            String stopReason;
            Object usage;
            boolean toolUse;
        };
        JsonTree.members(root, (name, v) -> {
            switch (name) {
                case "type" -> r.type = text(v);
                case "message" -> {
                    if (v.isObject()) {
                        JsonTree.members(v, (m, mv) -> {
                            if (m.equals("usage")) {
                                r.usage = counts(mv);
                            }
                        });
                    }
                }
                case "delta" -> {
                    if (v.isObject()) {
                        JsonTree.members(v, (m, mv) -> {
                            switch (m) {
                                case "text", "partial_json" -> r.answer |= nonEmptyText(mv);
                                case "thinking" -> r.thinking |= nonEmptyText(mv);
                                case "stop_reason" -> r.stopReason = text(mv);
                                default -> {
                                }
                            }
                        });
                    }
                }
                case "usage" -> r.usage = counts(v);
                case "stop_reason" -> r.stopReason = text(v);
                case "content" -> {
                    r.toolUse = false;
                    if (v.isArray()) {
                        for (JsonNode block : v) {
                            if (block.isObject()) {
                                JsonTree.members(block, (m, mv) -> r.toolUse |= m.equals("type")
                                        && "tool_use".equals(text(mv)));
                            }
                        }
                    }
                }
                default -> {
                }
            }
        });
        return EventOracle.record(NEW_EVENT, r.type, r.answer, r.thinking, r.stopReason, r.usage, r.toolUse);
    }

    private static Object counts(JsonNode usage) {
        if (!usage.isObject()) {
            return null;
        }
        return EventOracle.record(NEW_COUNTS, count(usage, "input_tokens"), count(usage, "output_tokens"),
                count(usage, "cache_read_input_tokens"), count(usage, "cache_creation_input_tokens"));
    }

    private static long count(JsonNode usage, String name) {
        return usage.has(name) ? truncatedOrMinusOne(usage.get(name)) : -1;
    }

    // ------------------------------------------------------------------------------------------ the generator

    private static String event(JsonGen g) {
        return g.object(
                g.maybe("type", () -> g.typed(() -> g.string(g.pick(TYPES)))),
                g.maybe("index", () -> g.integer(g.upTo(3))),
                g.maybe("message", () -> g.typed(() -> g.object(
                        g.maybe("id", () -> g.string("msg_1")),
                        g.maybe("type", () -> g.string("message")),
                        g.maybe("role", () -> g.string("assistant")),
                        g.maybe("model", () -> g.string(g.text())),
                        g.maybe("content", () -> g.array(g.upTo(2), () -> block(g))),
                        g.maybe("stop_reason", () -> "null"),
                        g.maybe("usage", () -> g.typed(() -> usage(g)))))),
                g.maybe("content_block", () -> block(g)),
                g.maybe("delta", () -> g.typed(() -> g.object(
                        g.maybe("type", () -> g.string(g.pick("text_delta", "input_json_delta", "thinking_delta",
                                "signature_delta", "citations_delta"))),
                        g.maybe("text", () -> g.typed(() -> g.string(g.text()))),
                        g.maybe("partial_json", () -> g.typed(() -> g.string(g.text()))),
                        g.maybe("thinking", () -> g.typed(() -> g.string(g.text()))),
                        g.maybe("signature", () -> g.string(g.text())),
                        g.maybe("stop_reason", () -> g.typed(() -> g.chance() ? "null"
                                : g.string(g.pick(STOP_REASONS)))),
                        g.maybe("stop_sequence", () -> "null")))),
                g.maybe("usage", () -> g.typed(() -> usage(g))),
                g.maybe("stop_reason", () -> g.typed(() -> g.string(g.pick(STOP_REASONS)))),
                g.maybe("content", () -> g.typed(() -> g.array(g.upTo(3), () -> g.typed(() -> block(g))))),
                g.maybe("error", () -> g.object(
                        g.maybe("type", () -> g.string("overloaded_error")),
                        g.maybe("message", () -> g.string(g.text())))));
    }

    private static String block(JsonGen g) {
        return g.object(
                g.maybe("type", () -> g.typed(() -> g.string(g.pick("text", "tool_use", "thinking", "tool_result")))),
                g.maybe("text", () -> g.string(g.text())),
                g.maybe("id", () -> g.string("toolu_1")),
                g.maybe("name", () -> g.string(g.text())),
                g.maybe("input", () -> g.anyValue(2)));
    }

    private static String usage(JsonGen g) {
        return g.object(
                g.maybe("input_tokens", g::count),
                g.maybe("output_tokens", g::count),
                g.maybe("cache_read_input_tokens", g::count),
                g.maybe("cache_creation_input_tokens", g::count),
                g.maybe("service_tier", () -> g.string("standard")));
    }
}
