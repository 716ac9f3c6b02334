package dev.llmsidecar.sweep;

import dev.llmsidecar.load.AbstractResponseReader;
import dev.llmsidecar.load.SseFramer;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;

/**
 * Reads one streaming OpenAI response into a {@link RequestRecord}: the stamps {@code vllm bench serve} takes and the
 * ones the sidecar takes, both on the read times of the SSE messages. Parses every message as JSON: fine for the
 * sweep's rates, too slow for the benchmark's (it reads its engine's stamps from the bytes).
 */
final class RecordReader extends AbstractResponseReader<RequestRecord> {

    private final boolean measured;
    private final SseFramer framer = new SseFramer(this::onEvent);
    private long firstChoices = -1;
    private long firstToken = -1;
    private long lastToken = -1;
    private long lastMessage = -1;
    private final DoubleList benchItl = new DoubleList();
    private final DoubleList chunkGaps = new DoubleList();
    private int tokenChunks;
    private int completionTokens = -1;
    private int promptTokens = -1;
    private boolean sawDone;
    private String streamError;

    RecordReader(boolean measured) {
        this.measured = measured;
    }

    @Override
    public void data(Buffer chunk, long nanos) {
        if (statusCode() == 200) {
            framer.feed(chunk, nanos); // an error body is not timed
        }
    }

    private void onEvent(byte[] bytes, int from, int to, long now) {
        String d = SseFramer.data(bytes, from, to);
        if (d == null) {
            return; // a comment or an event without data
        }
        if (d.equals("[DONE]")) {
            sawDone = true;
            return;
        }
        JsonObject o;
        try {
            o = new JsonObject(d);
        } catch (RuntimeException e) {
            return; // not JSON: vllm bench serve would fail on it; we just do not time it
        }
        if (o.getValue("error") != null) {
            streamError = "stream_error";
        }
        JsonArray choices = o.getValue("choices") instanceof JsonArray a ? a : null;
        if (choices != null && !choices.isEmpty()) {
            // vllm bench serve: TTFT at the first message with choices, then one ITL sample per such message
            if (firstChoices < 0) {
                firstChoices = now;
            } else {
                benchItl.add((now - lastMessage) / 1e9);
            }
            if (tokenBearing(choices)) {
                if (firstToken < 0) {
                    firstToken = now;
                } else {
                    chunkGaps.add((now - lastToken) / 1e9);
                }
                lastToken = now;
                tokenChunks++;
            }
        }
        if (o.getValue("usage") instanceof JsonObject usage) {
            if (usage.getValue("completion_tokens") instanceof Number n) {
                completionTokens = n.intValue();
            }
            if (usage.getValue("prompt_tokens") instanceof Number n) {
                promptTokens = n.intValue();
            }
        }
        lastMessage = now;
    }

    @Override
    public RequestRecord end(String failure, long nanos) {
        String error = failure;
        if (error == null) {
            error = statusCode() != 200 ? "http_" + statusCode() : streamError != null ? streamError : sawDone ? null
                    : "incomplete";
        }
        long sent = sentNanos() < 0 ? nanos : sentNanos();
        return new RequestRecord(sent, firstChoices, firstToken, lastToken, lastMessage, benchItl.toArray(),
                chunkGaps.toArray(), tokenChunks, completionTokens, promptTokens, nanos, error, measured);
    }

    /** A chunk carrying content, reasoning, a refusal, text or a tool call (the sidecar's first-token predicate). */
    static boolean tokenBearing(JsonArray choices) {
        for (int i = 0; i < choices.size(); i++) {
            if (!(choices.getValue(i) instanceof JsonObject c)) {
                continue;
            }
            if (nonEmpty(c.getValue("text"))) {
                return true;
            }
            if (c.getValue("delta") instanceof JsonObject delta) {
                for (String key : new String[] {"content", "reasoning_content", "reasoning", "refusal"}) {
                    if (nonEmpty(delta.getValue(key))) {
                        return true;
                    }
                }
                if (delta.getValue("tool_calls") instanceof JsonArray calls && !calls.isEmpty()) {
                    return true;
                }
                if (delta.getValue("function_call") instanceof JsonObject) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean nonEmpty(Object v) {
        return v instanceof String s && !s.isEmpty();
    }

    /** A growable array of doubles. */
    private static final class DoubleList {
        private double[] values = new double[16];
        private int size;

        void add(double v) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }

        double[] toArray() {
            return Arrays.copyOf(values, size);
        }
    }
}
