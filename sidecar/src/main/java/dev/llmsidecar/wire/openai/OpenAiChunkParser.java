package dev.llmsidecar.wire.openai;

import static dev.llmsidecar.wire.JsonReads.nonEmptyContainer;
import static dev.llmsidecar.wire.JsonReads.nonEmptyString;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.llmsidecar.wire.JsonReads;
import dev.llmsidecar.wire.ResponseModelProbe;
import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.Usage;
import java.io.IOException;

/**
 * Reads only the members that matter for timing out of an OpenAI chat/completions object with Jackson's
 * streaming parser; everything else is skipped without building a tree.
 */
public final class OpenAiChunkParser {

    private final JsonFactory json;

    public OpenAiChunkParser(JsonFactory json) {
        this.json = json;
    }

    /** A probe for the answering model, reading with this parser's factory. */
    public ResponseModelProbe responseModelProbe() {
        return new ResponseModelProbe(json);
    }

    /**
     * Returns null when the bytes are not a JSON object. A single-pass scanner ({@link OpenAiChunkScanner}) answers
     * the common chunk without a parser or any garbage; anything unusual is parsed here with Jackson.
     */
    public OpenAiChunk parse(byte[] bytes, int offset, int length) {
        OpenAiChunk fast = OpenAiChunkScanner.scan(bytes, offset, length);
        if (fast != OpenAiChunkScanner.BAIL) {
            return fast;
        }
        return parseWithJackson(bytes, offset, length);
    }

    /** The reference implementation (and fallback): Jackson's streaming parser. */
    OpenAiChunk parseWithJackson(byte[] bytes, int offset, int length) {
        return JsonReads.read(json, bytes, offset, length, p -> {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            State s = new State();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                switch (name) {
                    case "choices" -> readChoices(p, value, s);
                    case "usage" -> {
                        s.usageMember = true;
                        s.usage = value == JsonToken.START_OBJECT ? readUsage(p) : null;
                        p.skipChildren(); // a usage of another type (an array) says nothing
                    }
                    case "metrics" -> s.timings = value == JsonToken.START_OBJECT
                            ? readTimings(p, "queue_time_ms", "time_to_first_token_ms", null) : skip(p);
                    case "timings" -> readLlamaCppTimings(p, value, s);
                    case "error" -> {
                        s.error = value != JsonToken.VALUE_NULL;
                        p.skipChildren();
                    }
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT) {
                return null;
            }
            return new OpenAiChunk(s.choicesPresent, s.choicesEmpty, s.content, s.reasoning, s.finishReason,
                    s.usage != null ? s.usage : s.timingsUsage, s.error, s.timings, s.usageMember);
        });
    }

    private static final class State {
        boolean choicesPresent;
        boolean choicesEmpty = true;
        boolean content;
        boolean reasoning;
        String finishReason;
        Usage usage;
        boolean usageMember;
        boolean error;
        ServerTimings timings;
        Usage timingsUsage;
    }

    /**
     * The names of the top-level members of a JSON object, in order, each once; empty when the bytes are not one. A
     * list (a chunk has a handful of members): twice per stream, no hash set each time.
     */
    public java.util.List<String> memberNames(byte[] bytes, int offset, int length) {
        java.util.List<String> read = JsonReads.read(json, bytes, offset, length, p -> {
            java.util.List<String> names = new java.util.ArrayList<>(8);
            try {
                if (p.nextToken() == JsonToken.START_OBJECT) {
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String name = p.currentName();
                        if (!names.contains(name)) {
                            names.add(name);
                        }
                        p.nextToken();
                        p.skipChildren();
                    }
                }
            } catch (IOException | RuntimeException e) {
                // what was read so far
            }
            return names;
        });
        return read != null ? read : java.util.List.of();
    }

    /**
     * llama.cpp's {@code timings}: prompt and decode time, and token counts ({@code prompt_n} prompt tokens
     * computed, {@code cache_n} taken from the prefix cache, {@code predicted_n} generated), which it sends without
     * include_usage, on the final chunk: the exact counts {@code usage} would give.
     */
    private static void readLlamaCppTimings(JsonParser p, JsonToken value, State s) throws IOException {
        if (value != JsonToken.START_OBJECT) {
            p.skipChildren();
            return;
        }
        long[] v = {-1, -1, -1, -1, -1}; // prompt_ms, predicted_ms (as ns), prompt_n, cache_n, predicted_n
        readNumbers(p, (name, parser) -> {
            switch (name) {
                case "prompt_ms" -> v[0] = Math.round(parser.getDoubleValue() * 1_000_000);
                case "predicted_ms" -> v[1] = Math.round(parser.getDoubleValue() * 1_000_000);
                case "prompt_n" -> v[2] = parser.getLongValue();
                case "cache_n" -> v[3] = parser.getLongValue();
                case "predicted_n" -> v[4] = parser.getLongValue();
                default -> {
                }
            }
        });
        long promptMs = v[0];
        long predictedMs = v[1];
        long promptN = v[2];
        long cacheN = v[3];
        long predictedN = v[4];
        if (promptMs >= 0 || predictedMs >= 0) {
            s.timings = new ServerTimings(-1, -1, promptMs, predictedMs);
        }
        if (predictedN >= 0 && promptN >= 0) {
            long cached = Math.max(0, cacheN);
            s.timingsUsage = new Usage(promptN + cached, predictedN, cacheN < 0 ? -1 : cached);
        }
    }

    private static ServerTimings skip(JsonParser p) throws IOException {
        p.skipChildren();
        return null;
    }

    /** Reads millisecond members (names may be null) of a timings object into nanoseconds. */
    private static ServerTimings readTimings(JsonParser p, String queueName, String firstTokenName, String decodeName)
            throws IOException {
        long[] ms = {-1, -1, -1}; // queue, first token, decode
        readNumbers(p, (name, parser) -> {
            int i = name.equals(queueName) ? 0 : name.equals(firstTokenName) ? 1 : name.equals(decodeName) ? 2 : -1;
            if (i >= 0) {
                ms[i] = Math.round(parser.getDoubleValue() * 1_000_000);
            }
        });
        return ms[0] < 0 && ms[1] < 0 && ms[2] < 0 ? null : new ServerTimings(ms[0], -1, ms[1], ms[2]);
    }

    /** Calls {@code member} for every numeric member of the object being read; skips the others. */
    private static void readNumbers(JsonParser p, NumberMember member) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            if (p.nextToken().isNumeric()) {
                member.read(name, p);
            } else {
                p.skipChildren();
            }
        }
    }

    private interface NumberMember {
        void read(String name, JsonParser p) throws IOException;
    }

    private static void readChoices(JsonParser p, JsonToken value, State s) throws IOException {
        if (value != JsonToken.START_ARRAY) {
            p.skipChildren();
            return;
        }
        s.choicesPresent = true;
        JsonToken element;
        while ((element = p.nextToken()) != JsonToken.END_ARRAY && element != null) {
            s.choicesEmpty = false;
            if (element != JsonToken.START_OBJECT) {
                p.skipChildren(); // a choice of another type says nothing, but the array goes on
                continue;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                switch (name) {
                    // delta: streaming chat; message: non-streaming chat
                    case "delta", "message" -> readDelta(p, v, s);
                    case "text" -> s.content |= nonEmptyString(p, v);
                    case "finish_reason" -> {
                        if (v == JsonToken.VALUE_STRING) {
                            s.finishReason = p.getText();
                        } else {
                            p.skipChildren(); // an object or array here is not a finish reason
                        }
                    }
                    default -> p.skipChildren();
                }
            }
        }
    }

    private static void readDelta(JsonParser p, JsonToken value, State s) throws IOException {
        if (value != JsonToken.START_OBJECT) {
            p.skipChildren();
            return;
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            switch (name) {
                case "content", "refusal" -> s.content |= nonEmptyString(p, v);
                case "reasoning_content", "reasoning" -> s.reasoning |= nonEmptyString(p, v);
                case "tool_calls", "function_call" -> s.content |= nonEmptyContainer(p, v);
                default -> p.skipChildren();
            }
        }
    }

    private static Usage readUsage(JsonParser p) throws IOException {
        long prompt = -1;
        long completion = -1;
        long cached = -1;
        long reasoning = -1;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            switch (name) {
                case "prompt_tokens" -> prompt = longValue(p, v);
                case "completion_tokens" -> completion = longValue(p, v);
                case "prompt_tokens_details" -> cached = readDetail(p, v, "cached_tokens");
                case "completion_tokens_details" -> reasoning = readDetail(p, v, "reasoning_tokens");
                default -> p.skipChildren();
            }
        }
        return new Usage(prompt, completion, cached, reasoning);
    }

    /** The integer member {@code wanted} of a usage details object, -1 when absent. */
    private static long readDetail(JsonParser p, JsonToken v, String wanted) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return -1;
        }
        long value = -1;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            if (wanted.equals(name)) {
                value = longValue(p, t);
            } else {
                p.skipChildren();
            }
        }
        return value;
    }

    private static long longValue(JsonParser p, JsonToken v) throws IOException {
        if (v == JsonToken.VALUE_NUMBER_INT) {
            return p.getLongValue();
        }
        p.skipChildren();
        return -1;
    }
}
