package dev.llmsidecar.wire.openai;

import static dev.llmsidecar.wire.JsonReads.nonEmptyContainer;
import static dev.llmsidecar.wire.JsonReads.nonEmptyString;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
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
        try (JsonParser p = json.createParser(bytes, offset, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            State s = new State();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                switch (name) {
                    case "choices" -> readChoices(p, value, s);
                    case "usage" -> s.usage = value == JsonToken.START_OBJECT ? readUsage(p) : null;
                    case "metrics" -> s.timings = value == JsonToken.START_OBJECT
                            ? readTimings(p, "queue_time_ms", "time_to_first_token_ms", null) : skip(p);
                    case "timings" -> s.timings = value == JsonToken.START_OBJECT
                            ? readTimings(p, null, "prompt_ms", "predicted_ms") : skip(p);
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
                    s.usage, s.error, s.timings);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static final class State {
        boolean choicesPresent;
        boolean choicesEmpty = true;
        boolean content;
        boolean reasoning;
        String finishReason;
        Usage usage;
        boolean error;
        ServerTimings timings;
    }

    private static ServerTimings skip(JsonParser p) throws IOException {
        p.skipChildren();
        return null;
    }

    /** Reads millisecond members (names may be null) of a timings object into nanoseconds. */
    private static ServerTimings readTimings(JsonParser p, String queueName, String firstTokenName, String decodeName)
            throws IOException {
        long queue = -1;
        long first = -1;
        long decode = -1;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (v.isNumeric() && (name.equals(queueName) || name.equals(firstTokenName) || name.equals(decodeName))) {
                long nanos = Math.round(p.getDoubleValue() * 1_000_000);
                if (name.equals(queueName)) {
                    queue = nanos;
                } else if (name.equals(firstTokenName)) {
                    first = nanos;
                } else {
                    decode = nanos;
                }
            } else {
                p.skipChildren();
            }
        }
        return first < 0 && queue < 0 && decode < 0 ? null : new ServerTimings(queue, -1, first, decode);
    }

    private static void readChoices(JsonParser p, JsonToken value, State s) throws IOException {
        if (value != JsonToken.START_ARRAY) {
            p.skipChildren();
            return;
        }
        s.choicesPresent = true;
        while (p.nextToken() == JsonToken.START_OBJECT) {
            s.choicesEmpty = false;
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
                        }
                    }
                    default -> p.skipChildren();
                }
            }
        }
        if (p.currentToken() != JsonToken.END_ARRAY) {
            p.skipChildren();
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
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            switch (name) {
                case "prompt_tokens" -> prompt = longValue(p, v);
                case "completion_tokens" -> completion = longValue(p, v);
                case "prompt_tokens_details" -> cached = readCached(p, v);
                default -> p.skipChildren();
            }
        }
        return new Usage(prompt, completion, cached);
    }

    private static long readCached(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return -1;
        }
        long cached = -1;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            if ("cached_tokens".equals(name)) {
                cached = longValue(p, t);
            } else {
                p.skipChildren();
            }
        }
        return cached;
    }

    private static long longValue(JsonParser p, JsonToken v) throws IOException {
        if (v == JsonToken.VALUE_NUMBER_INT) {
            return p.getLongValue();
        }
        p.skipChildren();
        return -1;
    }
}
