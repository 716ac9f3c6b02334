package dev.llmsidecar.fuzz;

import static dev.llmsidecar.fuzz.JsonTree.nonEmptyContainer;
import static dev.llmsidecar.fuzz.JsonTree.nonEmptyText;
import static dev.llmsidecar.fuzz.JsonTree.text;
import static dev.llmsidecar.fuzz.JsonTree.truncatedOrMinusOne;
import static java.nio.charset.StandardCharsets.UTF_8;

import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.ollama.OllamaFormat;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.invoke.MethodHandle;

/** {@code OllamaChunk} (one NDJSON line of /api/chat or /api/generate, or a whole body) against Jackson's tree. */
class OllamaChunkFuzzTest {

    private static final String CHUNK = "dev.llmsidecar.wire.ollama.OllamaChunk";
    private static final MethodHandle NEW_CHUNK = Hidden.recordConstructor(Hidden.type(CHUNK));

    /** A line holds exactly one object: bytes after it (but whitespace) make it malformed. */
    private final EventOracle oracle = new EventOracle(CHUNK, OllamaChunkFuzzTest::expected, true);
    private final OllamaFormat format = new OllamaFormat(EventOracle.JSON);

    @FuzzTest(maxDuration = "5m")
    void generatedLine(FuzzedDataProvider data) {
        JsonGen g = new JsonGen(data);
        oracle.check((line(g) + g.ws().replace("\n", " ")).getBytes(UTF_8));
    }

    @FuzzTest(maxDuration = "5m")
    void anyBytes(byte[] data) {
        oracle.check(data);
        EventOracle.decoders(format, "application/x-ndjson", data);
    }

    /** By OllamaChunk's documentation. */
    static Object expected(ObjectNode root) {
        var r = new Object() {
            boolean answer;
            boolean thinking;
            boolean toolCalls;
            boolean done;
            boolean error;
            String doneReason;
            long promptEvalCount = -1;
            long evalCount = -1;
            long load = -1;
            long promptEval = -1;
            long eval = -1;
        };
        JsonTree.members(root, (name, v) -> {
            switch (name) {
                case "response" -> r.answer |= nonEmptyText(v);
                case "thinking" -> r.thinking |= nonEmptyText(v);
                case "message" -> {
                    if (v.isObject()) {
                        JsonTree.members(v, (m, mv) -> {
                            switch (m) {
                                case "content" -> r.answer |= nonEmptyText(mv);
                                case "thinking" -> r.thinking |= nonEmptyText(mv);
                                case "tool_calls" -> r.toolCalls |= nonEmptyContainer(mv);
                                default -> {
                                }
                            }
                        });
                    }
                }
                case "done" -> r.done = v.isBoolean() && v.booleanValue();
                case "error" -> r.error = !v.isNull();
                case "done_reason" -> r.doneReason = text(v);
                case "prompt_eval_count" -> r.promptEvalCount = truncatedOrMinusOne(v);
                case "eval_count" -> r.evalCount = truncatedOrMinusOne(v);
                case "load_duration" -> r.load = truncatedOrMinusOne(v);
                case "prompt_eval_duration" -> r.promptEval = truncatedOrMinusOne(v);
                case "eval_duration" -> r.eval = truncatedOrMinusOne(v);
                default -> {
                }
            }
        });
        ServerTimings timings = r.load < 0 && r.promptEval < 0 && r.eval < 0 ? null
                : new ServerTimings(-1, r.load, r.promptEval, r.eval);
        return EventOracle.record(NEW_CHUNK, r.answer || r.toolCalls, r.thinking, r.toolCalls, r.done, r.error,
                r.doneReason, r.promptEvalCount, r.evalCount, timings);
    }

    // ------------------------------------------------------------------------------------------ the generator

    private static String line(JsonGen g) {
        return g.object(
                g.maybe("model", () -> g.string(g.text())),
                g.maybe("created_at", () -> g.string("2024-01-01T00:00:00Z")),
                g.maybe("message", () -> g.typed(() -> g.object(
                        g.maybe("role", () -> g.string("assistant")),
                        g.maybe("content", () -> g.typed(() -> g.string(g.text()))),
                        g.maybe("thinking", () -> g.typed(() -> g.string(g.text()))),
                        g.maybe("tool_calls", () -> g.typed(() -> g.array(g.upTo(2), () -> g.object(
                                g.maybe("function", () -> g.object(
                                        g.maybe("name", () -> g.string(g.text())),
                                        g.maybe("arguments", () -> g.anyValue(2))))))))))),
                g.maybe("response", () -> g.typed(() -> g.string(g.text()))),
                g.maybe("thinking", () -> g.typed(() -> g.string(g.text()))),
                g.maybe("done", () -> g.typed(() -> g.chance() ? "true" : "false")),
                g.maybe("done_reason", () -> g.typed(() -> g.string(g.pick("stop", "length", "load", "unload")))),
                g.maybe("total_duration", g::count),
                g.maybe("load_duration", g::count),
                g.maybe("prompt_eval_count", g::count),
                g.maybe("prompt_eval_duration", g::count),
                g.maybe("eval_count", g::count),
                g.maybe("eval_duration", g::count),
                g.maybe("context", () -> g.array(g.upTo(3), () -> g.integer(g.upTo(50_000)))),
                g.maybe("error", () -> g.typed(() -> g.string(g.text()))));
    }
}
