package dev.llmsidecar.sim;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/** llama.cpp server native /completion: content events, a final stop event with counts and timings. */
final class LlamaCppDialect implements SimDialect {

    @Override
    public String idPrefix() {
        return "llamacpp-";
    }

    @Override
    public Integer maxTokens(JsonObject request) {
        return request.getInteger("n_predict");
    }

    @Override
    public boolean reasoning() {
        return false;
    }

    @Override
    public String token(SimTurn t, int sentBefore, int n, String text, boolean reasoning) {
        return t.sse(new JsonObject().put("index", 0).put("content", text).put("tokens", new JsonArray())
                .put("stop", false).put("id_slot", 0).put("tokens_predicted", sentBefore + n)
                .put("tokens_evaluated", t.promptTokens()));
    }

    @Override
    public List<String> end(SimTurn t, SimTimes times) {
        return List.of(t.sse(done(t, times, "")));
    }

    @Override
    public JsonObject whole(SimTurn t, SimTimes times, String reasoningText, String answerText) {
        return done(t, times, answerText);
    }

    private static JsonObject done(SimTurn t, SimTimes times, String content) {
        double promptMs = times.prefillMs();
        double predictedMs = times.decodeMs();
        int n = t.outputTokens();
        int promptN = t.promptTokens() - t.cachedTokens();
        JsonObject timings = new JsonObject().put("cache_n", t.cachedTokens()).put("prompt_n", promptN)
                .put("prompt_ms", promptMs).put("prompt_per_token_ms", promptMs / Math.max(1, promptN))
                .put("predicted_n", n).put("predicted_ms", predictedMs)
                .put("predicted_per_token_ms", predictedMs / Math.max(1, n));
        return new JsonObject().put("index", 0).put("content", content).put("tokens", new JsonArray())
                .put("id_slot", 0).put("stop", true).put("model", t.model()).put("tokens_predicted", n)
                .put("tokens_evaluated", t.promptTokens()).put("generation_settings", new JsonObject().put("n_predict", n))
                .put("prompt", "").put("has_new_line", false).put("truncated", false).put("stop_type", "limit")
                .put("stopping_word", "").put("tokens_cached", t.promptTokens() + n).put("timings", timings);
    }
}
