package dev.llmsidecar.fuzz;

import static dev.llmsidecar.fuzz.JsonTree.text;
import static dev.llmsidecar.fuzz.JsonTree.truncatedOrMinusOne;
import static java.nio.charset.StandardCharsets.UTF_8;

import dev.llmsidecar.wire.tgi.TgiFormat;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.invoke.MethodHandle;

/** {@code TgiEvent} (a /generate_stream event or a /generate body) against Jackson's tree. */
class TgiEventFuzzTest {

    private static final String EVENT = "dev.llmsidecar.wire.tgi.TgiEvent";
    private static final MethodHandle NEW_EVENT = Hidden.recordConstructor(Hidden.type(EVENT));

    private final EventOracle oracle = new EventOracle(EVENT, TgiEventFuzzTest::expected, false);
    private final TgiFormat streamFormat = new TgiFormat(EventOracle.JSON, true);
    private final TgiFormat bodyFormat = new TgiFormat(EventOracle.JSON, false);

    @FuzzTest(maxDuration = "5m")
    void generatedEvent(FuzzedDataProvider data) {
        JsonGen g = new JsonGen(data);
        oracle.check(event(g).getBytes(UTF_8));
    }

    @FuzzTest(maxDuration = "5m")
    void anyBytes(byte[] data) {
        oracle.check(data);
        EventOracle.decoders(streamFormat, "text/event-stream", data);
        EventOracle.decoders(bodyFormat, "text/event-stream", data);
    }

    /** By TgiEvent's documentation. */
    static Object expected(ObjectNode root) {
        var r = new Object() {
            boolean token;
            boolean error;
            String finish;
            long generated = -1;
            long input = -1;
        };
        JsonTree.members(root, (name, v) -> {
            switch (name) {
                case "token" -> r.token = v.isObject();
                case "error" -> r.error = !v.isNull();
                case "details" -> {
                    if (v.isObject()) {
                        JsonTree.members(v, (m, mv) -> {
                            switch (m) {
                                case "finish_reason" -> r.finish = text(mv);
                                case "generated_tokens" -> r.generated = truncatedOrMinusOne(mv);
                                case "input_length" -> r.input = truncatedOrMinusOne(mv);
                                default -> {
                                }
                            }
                        });
                    }
                }
                default -> {
                }
            }
        });
        return EventOracle.record(NEW_EVENT, r.token, r.finish, r.generated, r.input, r.error);
    }

    // ------------------------------------------------------------------------------------------ the generator

    private static String event(JsonGen g) {
        return g.object(
                g.maybe("index", () -> g.integer(g.upTo(99))),
                g.maybe("token", () -> g.typed(() -> g.object(
                        g.maybe("id", () -> g.integer(g.upTo(50_000))),
                        g.maybe("text", () -> g.string(g.text())),
                        g.maybe("logprob", g::number),
                        g.maybe("special", () -> g.chance() ? "true" : "false")))),
                g.maybe("generated_text", () -> g.typed(() -> g.chance() ? "null" : g.string(g.text()))),
                g.maybe("details", () -> g.typed(() -> g.chance() ? "null" : g.object(
                        g.maybe("finish_reason", () -> g.typed(() -> g.string(g.pick("length", "eos_token",
                                "stop_sequence")))),
                        g.maybe("generated_tokens", g::count),
                        g.maybe("input_length", g::count),
                        g.maybe("seed", () -> "null"),
                        g.maybe("prefill", () -> g.anyValue(2))))),
                g.maybe("error", () -> g.typed(() -> g.string(g.text()))),
                g.maybe("error_type", () -> g.string("validation")));
    }
}
