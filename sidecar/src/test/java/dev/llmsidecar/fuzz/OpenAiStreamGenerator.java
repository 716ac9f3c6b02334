package dev.llmsidecar.fuzz;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmsidecar.wire.Usage;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * An OpenAI chat-completion SSE stream as an engine sends it without usage, and the same stream as the engine sends
 * it once the sidecar has turned {@code stream_options.include_usage} on, both serialised by Jackson with the same
 * writer, so the only difference is what include_usage adds:
 * <ul>
 *   <li>{@link Injection#OPENAI}: {@code "usage":null} in every chunk, then a {@code "choices":[]} usage chunk;
 *   <li>{@link Injection#VLLM}: only the usage chunk (vLLM, SGLang);
 *   <li>{@link Injection#MERGED}: the usage object merged into the final chunk;
 *   <li>{@link Injection#NONE}: nothing (the engine ignored the option).
 * </ul>
 * The fuzzer picks the content (any text: escapes, quotes, "usage" lookalikes, non-ASCII raw or escaped), member
 * order, where the usage member goes, whitespace style, line ends, keep-alive comments and chunk count.
 * The engine's own chunks never carry a top-level usage member: the sidecar injects only for engines seen not to
 * (IncludeUsagePolicy), so only then can the removal give back the engine's bytes.
 */
final class OpenAiStreamGenerator {

    enum Injection { NONE, OPENAI, VLLM, MERGED }

    /**
     * @param plain the engine's bytes without include_usage: what the client must get
     * @param injected the engine's bytes with include_usage on: what the decoder is fed
     * @param usageOnlyChunks usage-only chunks in {@code injected}
     * @param usageMembers usage members in chunks that stay
     * @param usage the usage the stream reports, or null
     * @param usageChunkBytes bytes of the usage-only chunk's data line (the decoder must be able to hold it), or 0
     * @param usageEventBytes bytes of the data line that carries the usage, or 0: a larger one than the decoder
     *     holds is not read (oversize), though its usage member is still removed
     * @param largestEventBytes bytes of the longest data line of the injected stream
     */
    record Streams(Injection injection, byte[] plain, byte[] injected, int usageOnlyChunks, int usageMembers,
            Usage usage, int usageChunkBytes, int usageEventBytes, int largestEventBytes) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final String[] EOLS = {"\n", "\n", "\r\n", "\r\n", "\r"};
    /** Each whitespace style, with non-ASCII characters written as they are or escaped (immutable writers). */
    private static final ObjectWriter[] WRITERS = {writer(0, false), writer(0, true), writer(1, false),
        writer(1, true), writer(2, false), writer(2, true)};
    /** Members besides choices a chunk may carry; names that look like "usage" but are not it, too. */
    private static final String[] OPTIONAL_MEMBERS = {"system_fingerprint", "service_tier", "usages", "usag", "Usage",
        "obfuscation"};

    private OpenAiStreamGenerator() {
    }

    static Streams generate(FuzzedDataProvider data) {
        Injection injection = data.pickValue(Injection.values());
        String eol = data.pickValue(EOLS);
        ObjectWriter writer = data.pickValue(WRITERS);
        boolean bom = data.consumeInt(0, 7) == 0;
        boolean done = data.consumeInt(0, 7) != 0;
        int chunks = data.consumeInt(1, 8);
        long prompt = data.consumeInt(0, 100_000);
        long completion = data.consumeInt(0, 100_000);
        long cached = data.consumeBoolean() ? data.consumeInt(0, (int) prompt) : -1;

        // the members every chunk of this stream carries besides choices, in the engine's order
        List<String> head = new ArrayList<>(List.of("id", "object", "created", "model"));
        for (String optional : OPTIONAL_MEMBERS) {
            if (data.consumeInt(0, 3) == 0) {
                head.add(optional);
            }
        }
        shuffle(head, data);
        int choicesAt = data.consumeInt(0, head.size());

        Output plain = new Output(bom);
        Output injected = new Output(bom);
        int usageMembers = 0;
        int usageEventBytes = 0;
        for (int i = 0; i < chunks; i++) {
            if (data.consumeInt(0, 7) == 0) {
                plain.comment(": keep-alive" + eol + eol);
                injected.comment(": keep-alive" + eol + eol);
            }
            boolean last = i == chunks - 1;
            ObjectNode chunk = chunk(head, choicesAt, choice(i, last, data), false);
            ObjectNode withUsage = switch (injection) {
                case OPENAI -> withMember(chunk, "usage", NODES.nullNode(), data.consumeInt(0, chunk.size()));
                case MERGED -> last ? withMember(chunk, "usage", usage(prompt, completion, cached, data),
                        data.consumeInt(0, chunk.size())) : chunk;
                case NONE, VLLM -> chunk;
            };
            usageMembers += withUsage == chunk ? 0 : 1;
            plain.event(writer, chunk, eol);
            int lineBytes = injected.event(writer, withUsage, eol);
            usageEventBytes = injection == Injection.MERGED && last ? lineBytes : usageEventBytes;
        }
        int usageChunkBytes = 0;
        if (injection == Injection.OPENAI || injection == Injection.VLLM) {
            ObjectNode usageChunk = chunk(head, choicesAt, NODES.arrayNode(), true);
            usageChunk.set("usage", usage(prompt, completion, cached, data));
            usageChunkBytes = injected.event(writer, usageChunk, eol);
            usageEventBytes = usageChunkBytes;
        }
        if (done) {
            plain.comment("data: [DONE]" + eol + eol);
            injected.comment("data: [DONE]" + eol + eol);
        }
        Usage usage = injection == Injection.NONE ? null : new Usage(prompt, completion, cached);
        int usageOnlyChunks = usageChunkBytes > 0 ? 1 : 0;
        return new Streams(injection, plain.bytes(), injected.bytes(), usageOnlyChunks, usageMembers, usage,
                usageChunkBytes, usageEventBytes, injected.largestEvent);
    }

    /** Compact (what engines send), Python's {@code ", "} / {@code ": "}, or Jackson's one-line pretty style. */
    private static ObjectWriter writer(int style, boolean escapeNonAscii) {
        ObjectWriter writer = switch (style) {
            case 1 -> JSON.writer(new DefaultPrettyPrinter(Separators.createDefaultInstance()
                    .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
                    .withObjectEntrySpacing(Separators.Spacing.AFTER)
                    .withArrayValueSpacing(Separators.Spacing.AFTER)
                    .withObjectEmptySeparator("").withArrayEmptySeparator(""))
                    .withObjectIndenter(new DefaultPrettyPrinter.NopIndenter())
                    .withArrayIndenter(new DefaultPrettyPrinter.NopIndenter()));
            case 2 -> JSON.writer(new DefaultPrettyPrinter().withObjectIndenter(new DefaultIndenter("", " ")));
            default -> JSON.writer();
        };
        return escapeNonAscii ? writer.with(JsonWriteFeature.ESCAPE_NON_ASCII)
                : writer.without(JsonWriteFeature.ESCAPE_NON_ASCII);
    }

    private static ObjectNode chunk(List<String> head, int choicesAt, JsonNode choices, boolean usageChunk) {
        ObjectNode chunk = NODES.objectNode();
        for (int i = 0; i <= head.size(); i++) {
            if (i == choicesAt) {
                chunk.set("choices", choices);
            }
            if (i < head.size()) {
                String name = head.get(i);
                chunk.set(name, headValue(name));
            }
        }
        return chunk;
    }

    private static JsonNode headValue(String name) {
        return switch (name) {
            case "id" -> NODES.textNode("chatcmpl-7usage");
            case "object" -> NODES.textNode("chat.completion.chunk");
            case "created" -> NODES.numberNode(1_700_000_000);
            case "model" -> NODES.textNode("m/usage-7b");
            case "usages", "Usage" -> NODES.objectNode().put("prompt_tokens", 1);
            case "usag" -> NODES.nullNode();
            default -> NODES.textNode("fp_" + name);
        };
    }

    /** One choice: role first, content (any text) in between, an empty delta with finish_reason last. */
    private static ArrayNode choice(int i, boolean last, FuzzedDataProvider data) {
        ObjectNode choice = NODES.objectNode();
        ObjectNode delta = NODES.objectNode();
        if (i == 0) {
            delta.put("role", "assistant");
        }
        String text = validUtf16(data.consumeString(48));
        switch (data.consumeInt(0, 5)) {
            case 0 -> delta.put("reasoning_content", text);
            case 1 -> delta.set("tool_calls", NODES.arrayNode().add(NODES.objectNode().put("index", 0)
                    .set("function", NODES.objectNode().put("arguments", text))));
            case 2 -> delta.set("usage", NODES.objectNode().put("content", text)); // nested: the engine's own
            default -> delta.put("content", last && text.isEmpty() ? null : text);
        }
        choice.put("index", 0);
        choice.set("delta", delta);
        choice.putNull("logprobs");
        if (last) {
            choice.put("finish_reason", "stop");
        } else {
            choice.putNull("finish_reason");
        }
        return NODES.arrayNode().add(choice);
    }

    private static ObjectNode usage(long prompt, long completion, long cached, FuzzedDataProvider data) {
        List<String> order = new ArrayList<>(List.of("prompt_tokens", "completion_tokens", "total_tokens"));
        if (cached >= 0) {
            order.add("prompt_tokens_details");
        }
        shuffle(order, data);
        ObjectNode usage = NODES.objectNode();
        for (String name : order) {
            switch (name) {
                case "prompt_tokens" -> usage.put(name, prompt);
                case "completion_tokens" -> usage.put(name, completion);
                case "total_tokens" -> usage.put(name, prompt + completion);
                default -> usage.set(name, NODES.objectNode().put("cached_tokens", cached));
            }
        }
        return usage;
    }

    /** A copy of {@code object} with {@code name} inserted as member number {@code at}: a Jackson-level rewrite. */
    private static ObjectNode withMember(ObjectNode object, String name, JsonNode value, int at) {
        ObjectNode copy = NODES.objectNode();
        int i = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); i++) {
            if (i == at) {
                copy.set(name, value);
            }
            Map.Entry<String, JsonNode> member = it.next();
            copy.set(member.getKey(), member.getValue());
        }
        if (at >= object.size()) {
            copy.set(name, value);
        }
        return copy;
    }

    private static <T> void shuffle(List<T> list, FuzzedDataProvider data) {
        for (int i = list.size() - 1; i > 0; i--) {
            int j = data.consumeInt(0, i);
            T t = list.get(i);
            list.set(i, list.get(j));
            list.set(j, t);
        }
    }

    /** Unpaired surrogates become '?' (no engine sends them; Jackson would refuse them). */
    private static String validUtf16(String s) {
        return new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
    }

    /** Builds one stream's bytes. */
    private static final class Output {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int largestEvent;

        Output(boolean bom) {
            if (bom) {
                bytes.writeBytes(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF});
            }
        }

        void comment(String raw) {
            bytes.writeBytes(raw.getBytes(StandardCharsets.UTF_8));
        }

        /** Writes {@code data: <json>} and the empty line; returns the data line's bytes. */
        int event(ObjectWriter writer, JsonNode json, String eol) {
            byte[] line;
            try {
                line = ("data: " + writer.writeValueAsString(json)).getBytes(StandardCharsets.UTF_8);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
            bytes.writeBytes(line);
            bytes.writeBytes((eol + eol).getBytes(StandardCharsets.US_ASCII));
            largestEvent = Math.max(largestEvent, line.length);
            return line.length;
        }

        byte[] bytes() {
            return bytes.toByteArray();
        }
    }
}
