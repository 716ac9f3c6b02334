package dev.llmsidecar.fuzz;

import static dev.llmsidecar.fuzz.JsonTree.nonEmptyText;
import static dev.llmsidecar.fuzz.JsonTree.text;
import static dev.llmsidecar.fuzz.JsonTree.truncatedOrMinusOne;
import static java.nio.charset.StandardCharsets.UTF_8;

import dev.llmsidecar.fuzz.JsonGen.Member;
import dev.llmsidecar.wire.Usage;
import dev.llmsidecar.wire.openai.OpenAiResponsesFormat;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;
import java.util.stream.Stream;

/** {@code ResponsesEvent} (OpenAI Responses stream events and whole response bodies) against Jackson's tree. */
class ResponsesEventFuzzTest {

    private static final String EVENT = "dev.llmsidecar.wire.openai.ResponsesEvent";
    private static final MethodHandle NEW_EVENT = Hidden.recordConstructor(Hidden.type(EVENT));
    private static final MethodHandle NEW_RESPONSE = Hidden.recordConstructor(Hidden.type(EVENT + "$Response"));
    private static final String[] TYPES = {"response.created", "response.in_progress", "response.output_text.delta",
        "response.reasoning_text.delta", "response.function_call_arguments.delta", "response.completed",
        "response.incomplete", "response.failed", "error", "response.output_item.added"};
    private static final String[] STATUSES = {"completed", "incomplete", "failed", "cancelled", "in_progress",
        "queued"};

    private final EventOracle oracle = new EventOracle(EVENT, ResponsesEventFuzzTest::expected, false);
    private final OpenAiResponsesFormat format = new OpenAiResponsesFormat(EventOracle.JSON);

    @FuzzTest(maxDuration = "5m")
    void generatedEvent(FuzzedDataProvider data) {
        JsonGen g = new JsonGen(data);
        String json = g.chance() ? event(g) : g.object(responseMembers(g)); // a stream event, or a whole body
        oracle.check(json.getBytes(UTF_8));
    }

    @FuzzTest(maxDuration = "5m")
    void anyBytes(byte[] data) {
        oracle.check(data);
        EventOracle.decoders(format, "text/event-stream", data);
    }

    /**
     * By ResponsesEvent's documentation: an event's type, delta and embedded response; the other top-level members
     * are those of a whole response body, which counts as the response when its {@code object} says so.
     */
    static Object expected(ObjectNode root) {
        var r = new Object() {
            String type;
            boolean delta;
            Object response;
            final ResponseReading body = new ResponseReading();
        };
        JsonTree.members(root, (name, v) -> {
            switch (name) {
                case "type" -> r.type = text(v);
                case "delta" -> r.delta = nonEmptyText(v);
                case "response" -> r.response = v.isObject() ? new ResponseReading().read(v) : null;
                default -> r.body.member(name, v);
            }
        });
        if (r.response == null && "response".equals(r.body.object)) {
            r.response = r.body.build();
        }
        return EventOracle.record(NEW_EVENT, r.type, r.delta, r.response);
    }

    private static final class ResponseReading {
        String object;
        String id;
        String status;
        String incompleteReason;
        boolean error;
        boolean functionCall;
        Usage usage;

        Object read(JsonNode response) {
            JsonTree.members(response, this::member);
            return build();
        }

        void member(String name, JsonNode v) {
            switch (name) {
                case "object" -> object = text(v);
                case "id" -> id = text(v);
                case "status" -> status = text(v);
                case "error" -> error = v.isObject();
                case "incomplete_details" -> incompleteReason = v.isObject() && v.has("reason")
                        ? text(v.get("reason")) : null;
                case "output" -> {
                    functionCall = false;
                    if (v.isArray()) {
                        for (JsonNode item : v) {
                            String type = item.isObject() ? text(item.path("type")) : null;
                            functionCall |= "function_call".equals(type) || "custom_tool_call".equals(type);
                        }
                    }
                }
                case "usage" -> usage = v.isObject() ? new Usage(count(v, "input_tokens"), count(v, "output_tokens"),
                        v.path("input_tokens_details").isObject() ? count(v.get("input_tokens_details"),
                                "cached_tokens") : -1,
                        v.path("output_tokens_details").isObject() ? count(v.get("output_tokens_details"),
                                "reasoning_tokens") : -1) : null;
                default -> {
                }
            }
        }

        Object build() {
            return EventOracle.record(NEW_RESPONSE, id, status, incompleteReason, error, functionCall, usage);
        }
    }

    private static long count(JsonNode o, String name) {
        return o.has(name) ? truncatedOrMinusOne(o.get(name)) : -1;
    }

    // ------------------------------------------------------------------------------------------ the generator

    private static String event(JsonGen g) {
        return g.object(
                g.maybe("type", () -> g.typed(() -> g.string(g.pick(TYPES)))),
                g.maybe("sequence_number", () -> g.integer(g.upTo(99))),
                g.maybe("item_id", () -> g.string("msg_1")),
                g.maybe("output_index", () -> g.integer(0)),
                g.maybe("delta", () -> g.typed(() -> g.string(g.text()))),
                g.maybe("response", () -> g.typed(() -> g.object(responseMembers(g)))),
                g.maybe("code", () -> g.string("server_error")),
                g.maybe("message", () -> g.string(g.text())));
    }

    private static Member[] responseMembers(JsonGen g) {
        Member[] own = {
            g.maybe("id", () -> g.string("resp_1")),
            g.maybe("object", () -> g.typed(() -> g.string(g.chance() ? "response" : "list"))),
            g.maybe("created_at", () -> g.integer(1_700_000_000L)),
            g.maybe("status", () -> g.typed(() -> g.string(g.pick(STATUSES)))),
            g.maybe("error", () -> g.typed(() -> g.chance() ? "null" : g.object(
                    g.maybe("code", () -> g.string("server_error")),
                    g.maybe("message", () -> g.string(g.text()))))),
            g.maybe("incomplete_details", () -> g.typed(() -> g.chance() ? "null" : g.object(
                    g.maybe("reason", () -> g.typed(() -> g.string(g.pick("max_output_tokens", "content_filter",
                            "other"))))))),
            g.maybe("output", () -> g.typed(() -> g.array(g.upTo(3), () -> g.typed(() -> g.object(
                    g.maybe("type", () -> g.typed(() -> g.string(g.pick("message", "reasoning", "function_call",
                            "custom_tool_call", "web_search_call")))),
                    g.maybe("id", () -> g.string("item_1")),
                    g.maybe("arguments", () -> g.string(g.text()))))))),
            g.maybe("usage", () -> g.typed(() -> g.chance() ? "null" : g.object(
                    g.maybe("input_tokens", g::count),
                    g.maybe("input_tokens_details", () -> g.typed(() -> g.object(
                            g.maybe("cached_tokens", g::count)))),
                    g.maybe("output_tokens", g::count),
                    g.maybe("output_tokens_details", () -> g.object(g.maybe("reasoning_tokens", g::count))),
                    g.maybe("total_tokens", g::count)))),
            g.maybe("model", () -> g.string(g.text()))
        };
        return Stream.concat(Arrays.stream(own), Stream.of(g.maybe("type", () -> g.string(g.pick(TYPES)))))
                .toArray(Member[]::new);
    }
}
