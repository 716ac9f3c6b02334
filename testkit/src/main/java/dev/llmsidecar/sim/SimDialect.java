package dev.llmsidecar.sim;

import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * How the simulated engine speaks one wire format. The engine owns the schedule (slots, prefill, one chunk per
 * interval, reasoning tokens first); a dialect only renders request fields and response frames. Each frame is
 * written as one write, so a frame is what a real server would flush at that moment.
 */
interface SimDialect {

    /** Id prefix, e.g. {@code chatcmpl-}. */
    String idPrefix();

    /** Whether this request streams: its {@code stream} member, false when absent (Ollama and TGI differ). */
    default boolean stream(JsonObject request) {
        return request.getBoolean("stream", false);
    }

    /** The requested output length, or null. */
    Integer maxTokens(JsonObject request);

    /** The model the request names, or null (TGI names none). */
    default String model(JsonObject request) {
        return request.getString("model");
    }

    /** Whether the format can carry reasoning separately; if not, x-sim-reasoning-tokens is ignored. */
    default boolean reasoning() {
        return true;
    }

    /** Content type of a streamed response. */
    default String streamContentType() {
        return "text/event-stream; charset=utf-8";
    }

    /** Frames written at slot start, before the first token (role chunk, message_start, response.created). */
    default List<String> prelude(SimTurn t) {
        return List.of();
    }

    /**
     * One token chunk.
     *
     * @param sentBefore output tokens sent before this chunk
     * @param n tokens in this chunk
     * @param reasoning the chunk's tokens are reasoning tokens
     */
    String token(SimTurn t, int sentBefore, int n, String text, boolean reasoning);

    /** Frames after the last token (usage, final object, [DONE]). */
    default List<String> end(SimTurn t, SimTimes times) {
        return List.of();
    }

    /** A whole non-streaming body. */
    JsonObject whole(SimTurn t, SimTimes times, String reasoningText, String answerText);

    /** Response headers of a non-streaming answer besides content-type (TGI reports its timings there). */
    default void wholeHeaders(SimTurn t, SimTimes times, MultiMap headers) {
    }
}
