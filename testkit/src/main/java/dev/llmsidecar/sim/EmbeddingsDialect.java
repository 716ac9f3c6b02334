package dev.llmsidecar.sim;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** OpenAI /v1/embeddings: never streamed, no output tokens; answered after the prefill time. */
final class EmbeddingsDialect implements SimDialect {

    @Override
    public String idPrefix() {
        return "emb-";
    }

    @Override
    public boolean stream(JsonObject request) {
        return false;
    }

    @Override
    public Integer maxTokens(JsonObject request) {
        return 0;
    }

    @Override
    public boolean reasoning() {
        return false;
    }

    @Override
    public String token(SimTurn t, int sentBefore, int n, String text, boolean reasoning) {
        return "";
    }

    @Override
    public JsonObject whole(SimTurn t, SimTimes times, String reasoningText, String answerText) {
        JsonArray vector = new JsonArray();
        for (int i = 0; i < 8; i++) {
            vector.add(((t.promptTokens() * 31 + i * 17) % 200 - 100) / 1000.0);
        }
        return new JsonObject().put("object", "list").put("data", new JsonArray().add(new JsonObject()
                .put("object", "embedding").put("index", 0).put("embedding", vector))).put("model", t.model())
                .put("usage", new JsonObject().put("prompt_tokens", t.promptTokens()).put("total_tokens", t.promptTokens()));
    }
}
