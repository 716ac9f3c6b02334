package dev.llmsidecar.fuzz;

import static dev.llmsidecar.fuzz.JsonTree.coercedOrMinusOne;
import static dev.llmsidecar.fuzz.JsonTree.integerOrMinusOne;
import static dev.llmsidecar.fuzz.JsonTree.nonEmptyContainer;
import static dev.llmsidecar.fuzz.JsonTree.nonEmptyText;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.fuzz.JsonGen.Member;
import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.Usage;
import dev.llmsidecar.wire.openai.OpenAiChunk;
import dev.llmsidecar.wire.openai.OpenAiChunkParser;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code OpenAiChunkScanner} (the garbage-free fast path) and {@code OpenAiChunkParser} (scanner, else Jackson's
 * streaming parser) against what Jackson's tree of the same bytes says, read by the rules {@link OpenAiChunk}
 * documents. Malformed bytes must give null (the scanner: bail), nothing may escape, and no byte outside the given
 * range may change the answer (the SSE splitter hands over a reused array with stale bytes after the event).
 */
class OpenAiChunkFuzzTest {

    private static final Class<?> SCANNER = Hidden.type("dev.llmsidecar.wire.openai.OpenAiChunkScanner");
    private static final MethodHandle SCAN = Hidden.method(SCANNER, "scan", byte[].class, int.class, int.class);
    private static final Object BAIL = Hidden.staticField(SCANNER, "BAIL");
    private static final MethodHandle PARSE_WITH_JACKSON = Hidden.method(OpenAiChunkParser.class,
            "parseWithJackson", byte[].class, int.class, int.class);
    /** Stale bytes around an event that would change the answer if read. */
    private static final byte[] BEFORE = "{\"choices\":[{\"delta\":{\"content\":\"stale\"}}],\"x\":".getBytes(UTF_8);
    private static final byte[] AFTER = "\"}]}]}} ,\"usage\":{\"prompt_tokens\":1},\"error\":{}}\n\n".getBytes(UTF_8);

    private static final String[] FINISH = {"stop", "length", "tool_calls", "content_filter", "function_call", "abort",
        "error", "custom", "", "st\"op"};

    private final OpenAiChunkParser parser = new OpenAiChunkParser(new JsonFactory());

    /** Valid chunks of every shape the servers send, and of the shapes around them. */
    @FuzzTest(maxDuration = "5m")
    void generatedChunk(FuzzedDataProvider data) {
        JsonGen g = new JsonGen(data);
        byte[] chunk = chunk(g).getBytes(UTF_8);
        JsonTree.Reading reading = JsonTree.read(chunk, 0, chunk.length, false);
        assertThat(reading.verdict()).as("generated: %s", new String(chunk, UTF_8)).isEqualTo(JsonTree.Verdict.TREE);
        check(chunk);
    }

    /** Whatever bytes an upstream sends as one event's data. */
    @FuzzTest(maxDuration = "5m")
    void anyBytes(byte[] data) {
        check(data);
    }

    private void check(byte[] bytes) {
        int n = bytes.length;
        OpenAiChunk parsed = parser.parse(bytes, 0, n);
        Object scanned = Hidden.call(SCAN, bytes, 0, n);
        String shown = new String(bytes, UTF_8);

        byte[] framed = new byte[BEFORE.length + n + AFTER.length];
        System.arraycopy(BEFORE, 0, framed, 0, BEFORE.length);
        System.arraycopy(bytes, 0, framed, BEFORE.length, n);
        System.arraycopy(AFTER, 0, framed, BEFORE.length + n, AFTER.length);
        assertThat(parser.parse(framed, BEFORE.length, n)).as("framed by stale bytes: %s", shown).isEqualTo(parsed);
        assertThat(Hidden.call(SCAN, framed, BEFORE.length, n)).as("scanned, framed: %s", shown).isEqualTo(scanned);

        JsonTree.Reading reading = JsonTree.read(bytes, 0, n, false);
        switch (reading.verdict()) {
            case TREE -> {
                OpenAiChunk expected = expected(reading.object());
                assertThat(parsed).as("parsed: %s", shown).isEqualTo(expected);
                if (scanned != BAIL) {
                    assertThat(scanned).as("scanned: %s", shown).isEqualTo(expected);
                }
                if (reading.object() != null) {
                    List<String> names = new ArrayList<>();
                    reading.object().fieldNames().forEachRemaining(names::add);
                    assertThat(parser.memberNames(bytes, 0, n)).as("member names: %s", shown)
                            .containsExactlyElementsOf(names);
                }
            }
            case MALFORMED -> {
                assertThat(parsed).as("malformed, parsed: %s", shown).isNull();
                assertThat(scanned).as("malformed, scanned: %s", shown).isSameAs(BAIL);
            }
            case REPEATED_NAME, NOT_UTF8 -> {
                // no reference; the two paths still agree, as the scanner promises
                if (scanned != BAIL) {
                    assertThat(scanned).as("scanned: %s", shown)
                            .isEqualTo(Hidden.call(PARSE_WITH_JACKSON, parser, bytes, 0, n));
                }
            }
            case BEYOND_LIMITS -> {
                // Jackson will not read it: no reference; the scanner may answer
            }
        }
    }

    // ------------------------------------------------------------------------------------------ the reference

    /** What the chunk says by OpenAiChunk's documentation, read from Jackson's tree; null when not an object. */
    static OpenAiChunk expected(ObjectNode root) {
        if (root == null) {
            return null;
        }
        try {
            return new Reading().read(root);
        } catch (JsonTree.Undecodable e) {
            return null;
        }
    }

    private static final class Reading {
        boolean choicesPresent;
        boolean choicesEmpty = true;
        boolean content;
        boolean reasoning;
        String finishReason;
        Usage usage;
        boolean error;
        ServerTimings timings;
        Usage timingsUsage;
        boolean usageMember;

        OpenAiChunk read(ObjectNode root) {
            JsonTree.members(root, (name, v) -> {
                switch (name) {
                    case "choices" -> choices(v);
                    case "usage" -> {
                        usageMember = true;
                        usage = v.isObject() ? usage(v) : null;
                    }
                    // vLLM's per-request metrics; a later member of either kind replaces an earlier one
                    case "metrics" -> timings = v.isObject() ? vllmMetrics(v) : null;
                    case "timings" -> llamaCppTimings(v);
                    case "error" -> error = !v.isNull();
                    default -> {
                    }
                }
            });
            return new OpenAiChunk(choicesPresent, choicesEmpty, content, reasoning, finishReason,
                    usage != null ? usage : timingsUsage, error, timings, usageMember);
        }

        private void choices(JsonNode v) {
            if (!v.isArray()) {
                return;
            }
            choicesPresent = true;
            for (JsonNode choice : v) {
                choicesEmpty = false; // "that array is empty": any element makes it non-empty
                if (!choice.isObject()) {
                    continue;
                }
                JsonTree.members(choice, (name, m) -> {
                    switch (name) {
                        case "delta", "message" -> delta(m);
                        case "text" -> content |= nonEmptyText(m);
                        case "finish_reason" -> {
                            if (m.isTextual()) {
                                finishReason = m.textValue(); // the last non-null one
                            }
                        }
                        default -> {
                        }
                    }
                });
            }
        }

        private void delta(JsonNode delta) {
            if (!delta.isObject()) {
                return;
            }
            JsonTree.members(delta, (name, m) -> {
                switch (name) {
                    case "content", "refusal" -> content |= nonEmptyText(m);
                    case "reasoning_content", "reasoning" -> reasoning |= nonEmptyText(m);
                    case "tool_calls", "function_call" -> content |= nonEmptyContainer(m);
                    default -> {
                    }
                }
            });
        }

        private static Usage usage(JsonNode usage) {
            long prompt = usage.has("prompt_tokens") ? integerOrMinusOne(usage.get("prompt_tokens")) : -1;
            long completion = usage.has("completion_tokens") ? integerOrMinusOne(usage.get("completion_tokens")) : -1;
            return new Usage(prompt, completion, detail(usage, "prompt_tokens_details", "cached_tokens"),
                    detail(usage, "completion_tokens_details", "reasoning_tokens"));
        }

        /** The integer {@code member} of the details object {@code name}; -1 when either is absent or not so. */
        private static long detail(JsonNode usage, String name, String member) {
            JsonNode details = usage.get(name);
            return details != null && details.isObject() && details.has(member)
                    ? integerOrMinusOne(details.get(member)) : -1;
        }

        private static ServerTimings vllmMetrics(JsonNode metrics) {
            long queue = nanos(metrics.get("queue_time_ms"));
            long firstToken = nanos(metrics.get("time_to_first_token_ms"));
            return queue < 0 && firstToken < 0 ? null : new ServerTimings(queue, -1, firstToken, -1);
        }

        /** llama.cpp's timings: prompt / decode time, and the token counts usage would give. */
        private void llamaCppTimings(JsonNode t) {
            if (!t.isObject()) {
                return;
            }
            long promptMs = nanos(t.get("prompt_ms"));
            long predictedMs = nanos(t.get("predicted_ms"));
            long promptN = numberMember(t, "prompt_n");
            long cacheN = numberMember(t, "cache_n");
            long predictedN = numberMember(t, "predicted_n");
            if (promptMs >= 0 || predictedMs >= 0) {
                timings = new ServerTimings(-1, -1, promptMs, predictedMs);
            }
            if (predictedN >= 0 && promptN >= 0) {
                long cached = Math.max(0, cacheN);
                timingsUsage = new Usage(promptN + cached, predictedN, cacheN < 0 ? -1 : cached);
            }
        }

        private static long numberMember(JsonNode o, String name) {
            JsonNode v = o.get(name);
            return v == null ? -1 : coercedOrMinusOne(v);
        }

        /** Milliseconds (any number) to nanoseconds; -1 when absent or not a number. */
        private static long nanos(JsonNode ms) {
            return ms != null && ms.isNumber() ? Math.round(ms.doubleValue() * 1_000_000) : -1;
        }
    }

    // ------------------------------------------------------------------------------------------ the generator

    /** A chat/completions chunk or whole response, an include_usage chunk, an error object, or something near. */
    private static String chunk(JsonGen g) {
        return g.object(
                g.maybe("id", () -> g.string("chatcmpl-" + g.upTo(999))),
                g.maybe("object", () -> g.string(g.pick("chat.completion.chunk", "chat.completion",
                        "text_completion"))),
                g.maybe("created", () -> g.integer(1_700_000_000L + g.upTo(1000))),
                g.maybe("model", () -> g.string(g.text())),
                g.maybe("choices", () -> g.typed(() -> g.array(g.upTo(3), () -> g.typed(() -> choice(g))))),
                g.maybe("usage", () -> g.typed(() -> g.chance() ? usage(g) : "null")),
                g.maybe("metrics", () -> g.typed(() -> g.object(
                        g.maybe("queue_time_ms", g::millis),
                        g.maybe("time_to_first_token_ms", g::millis),
                        g.maybe("arrival_time", g::number)))),
                g.maybe("timings", () -> g.typed(() -> g.object(
                        g.maybe("prompt_n", g::count),
                        g.maybe("cache_n", g::count),
                        g.maybe("predicted_n", g::count),
                        g.maybe("prompt_ms", g::millis),
                        g.maybe("predicted_ms", g::millis),
                        g.maybe("predicted_per_second", g::number)))),
                g.maybe("error", () -> g.typed(() -> g.chance() ? "null" : g.object(
                        g.maybe("message", () -> g.string(g.text())),
                        g.maybe("code", g::count)))));
    }

    private static String choice(JsonGen g) {
        return g.object(
                g.maybe("index", () -> g.integer(g.upTo(3))),
                g.maybe(g.chance() ? "delta" : "message", () -> g.typed(() -> delta(g))),
                g.maybe("text", () -> g.typed(() -> g.string(g.text()))),
                g.maybe("logprobs", () -> g.typed(() -> "null")),
                g.maybe("finish_reason", () -> g.typed(() -> g.chance() ? "null" : g.string(g.pick(FINISH)))));
    }

    private static String delta(JsonGen g) {
        return g.object(
                g.maybe("role", () -> g.string("assistant")),
                g.maybe("content", () -> g.typed(() -> g.chance() ? g.string(g.text()) : "null")),
                g.maybe("refusal", () -> g.typed(() -> g.chance() ? g.string(g.text()) : "null")),
                g.maybe(g.chance() ? "reasoning_content" : "reasoning", () -> g.typed(() -> g.string(g.text()))),
                g.maybe(g.chance() ? "tool_calls" : "function_call", () -> g.typed(() -> g.chance()
                        ? g.array(g.upTo(2), () -> toolCall(g)) : toolCall(g))));
    }

    private static String toolCall(JsonGen g) {
        return g.object(
                g.maybe("index", () -> g.integer(g.upTo(2))),
                g.maybe("id", () -> g.string("call_" + g.upTo(99))),
                g.maybe("type", () -> g.string("function")),
                g.maybe("function", () -> g.object(
                        g.maybe("name", () -> g.string(g.text())),
                        g.maybe("arguments", () -> g.string(g.text())))));
    }

    private static String usage(JsonGen g) {
        Member details = g.maybe("prompt_tokens_details", () -> g.typed(() -> g.object(
                g.maybe("cached_tokens", g::count),
                g.maybe("audio_tokens", g::count))));
        return g.object(
                g.maybe("prompt_tokens", g::count),
                g.maybe("completion_tokens", g::count),
                g.maybe("total_tokens", g::count),
                details,
                g.maybe("completion_tokens_details", () -> g.object(g.maybe("reasoning_tokens", g::count))));
    }
}
