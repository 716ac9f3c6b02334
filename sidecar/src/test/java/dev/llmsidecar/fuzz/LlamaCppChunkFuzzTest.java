package dev.llmsidecar.fuzz;

import static dev.llmsidecar.fuzz.JsonTree.doubleOrMinusOne;
import static dev.llmsidecar.fuzz.JsonTree.nonEmptyContainer;
import static dev.llmsidecar.fuzz.JsonTree.nonEmptyText;
import static dev.llmsidecar.fuzz.JsonTree.text;
import static dev.llmsidecar.fuzz.JsonTree.truncatedOrMinusOne;
import static java.nio.charset.StandardCharsets.UTF_8;

import dev.llmsidecar.wire.FinishReason;
import dev.llmsidecar.wire.JsonReads;
import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.Usage;
import dev.llmsidecar.wire.llamacpp.LlamaCppFormat;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.invoke.MethodHandle;

/** {@code LlamaCppChunk} (a native /completion stream event or body) against Jackson's tree. */
class LlamaCppChunkFuzzTest {

    private static final String CHUNK = "dev.llmsidecar.wire.llamacpp.LlamaCppChunk";
    private static final MethodHandle NEW_CHUNK = Hidden.recordConstructor(Hidden.type(CHUNK));

    private final EventOracle oracle = new EventOracle(CHUNK, LlamaCppChunkFuzzTest::expected, false);
    private final LlamaCppFormat format = new LlamaCppFormat(EventOracle.JSON);

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

    /** By LlamaCppChunk's documentation. */
    static Object expected(ObjectNode root) {
        var r = new Object() {
            boolean token;
            boolean stop;
            boolean error;
            String stopType;
            boolean stoppedStop;
            boolean stoppedLimit;
            long predicted = -1;
            long evaluated = -1;
            long promptN = -1;
            long predictedN = -1;
            long cacheN = -1;
            double promptMs = -1;
            double predictedMs = -1;
            boolean timings;
        };
        JsonTree.members(root, (name, v) -> {
            switch (name) {
                case "content" -> r.token |= nonEmptyText(v);
                case "tokens" -> r.token |= nonEmptyContainer(v);
                case "stop" -> r.stop = v.isBoolean() && v.booleanValue();
                case "error" -> r.error = !v.isNull();
                case "stop_type" -> r.stopType = text(v);
                case "stopped_eos", "stopped_word" -> r.stoppedStop |= v.isBoolean() && v.booleanValue();
                case "stopped_limit" -> r.stoppedLimit |= v.isBoolean() && v.booleanValue();
                case "tokens_predicted" -> r.predicted = truncatedOrMinusOne(v);
                case "tokens_evaluated" -> r.evaluated = truncatedOrMinusOne(v);
                case "timings" -> {
                    if (v.isObject()) {
                        r.timings = true;
                        JsonTree.members(v, (m, mv) -> {
                            switch (m) {
                                case "prompt_n" -> r.promptN = truncatedOrMinusOne(mv);
                                case "predicted_n" -> r.predictedN = truncatedOrMinusOne(mv);
                                case "cache_n" -> r.cacheN = truncatedOrMinusOne(mv);
                                case "prompt_ms" -> r.promptMs = doubleOrMinusOne(mv);
                                case "predicted_ms" -> r.predictedMs = doubleOrMinusOne(mv);
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
        String finish = FinishReason.llamaCpp(r.stopType);
        if (finish == null && r.stop) {
            finish = r.stoppedLimit ? FinishReason.LENGTH : r.stoppedStop ? FinishReason.STOP : null;
        }
        long output = r.predicted >= 0 ? r.predicted : r.predictedN;
        long input = r.evaluated >= 0 ? r.evaluated : r.promptN < 0 ? -1 : r.promptN + Math.max(0, r.cacheN);
        Usage usage = r.stop && (output >= 0 || input >= 0) ? new Usage(input, output, r.cacheN) : null;
        ServerTimings timings = r.timings && (r.promptMs >= 0 || r.predictedMs >= 0)
                ? new ServerTimings(-1, -1, JsonReads.msToNanos(r.promptMs), JsonReads.msToNanos(r.predictedMs))
                : null;
        return EventOracle.record(NEW_CHUNK, r.token, r.stop, r.error, finish, usage, timings);
    }

    // ------------------------------------------------------------------------------------------ the generator

    private static String event(JsonGen g) {
        return g.object(
                g.maybe("index", () -> g.integer(0)),
                g.maybe("content", () -> g.typed(() -> g.string(g.text()))),
                g.maybe("tokens", () -> g.typed(() -> g.array(g.upTo(3), () -> g.integer(g.upTo(50_000))))),
                g.maybe("stop", () -> g.typed(() -> g.chance() ? "true" : "false")),
                g.maybe("id_slot", () -> g.integer(0)),
                g.maybe("model", () -> g.string(g.text())),
                g.maybe("stop_type", () -> g.typed(() -> g.string(g.pick("eos", "word", "limit", "none")))),
                g.maybe("stopping_word", () -> g.string(g.text())),
                g.maybe("stopped_eos", () -> g.typed(() -> g.chance() ? "true" : "false")),
                g.maybe("stopped_word", () -> g.typed(() -> g.chance() ? "true" : "false")),
                g.maybe("stopped_limit", () -> g.typed(() -> g.chance() ? "true" : "false")),
                g.maybe("tokens_predicted", g::count),
                g.maybe("tokens_evaluated", g::count),
                g.maybe("timings", () -> g.typed(() -> g.object(
                        g.maybe("prompt_n", g::count),
                        g.maybe("prompt_ms", g::millis),
                        g.maybe("predicted_n", g::count),
                        g.maybe("predicted_ms", g::millis),
                        g.maybe("cache_n", g::count),
                        g.maybe("predicted_per_second", g::number)))),
                g.maybe("error", () -> g.typed(() -> g.object(
                        g.maybe("code", () -> g.integer(500)),
                        g.maybe("message", () -> g.string(g.text())),
                        g.maybe("type", () -> g.string("server_error"))))));
    }
}
