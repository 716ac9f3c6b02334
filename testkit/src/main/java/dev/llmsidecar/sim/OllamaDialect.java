package dev.llmsidecar.sim;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;

/** Ollama native /api/chat and /api/generate: NDJSON, streaming by default, nanosecond durations at the end. */
final class OllamaDialect implements SimDialect {

    /** Reported load_duration: the model is already loaded. */
    static final long LOAD_NANOS = 1_000_000;

    private final boolean chat;

    OllamaDialect(boolean chat) {
        this.chat = chat;
    }

    @Override
    public String idPrefix() {
        return "ollama-";
    }

    @Override
    public boolean stream(JsonObject request) {
        return request.getBoolean("stream", true);
    }

    @Override
    public Integer maxTokens(JsonObject request) {
        JsonObject options = request.getJsonObject("options");
        return options == null ? null : options.getInteger("num_predict");
    }

    @Override
    public String streamContentType() {
        return "application/x-ndjson";
    }

    @Override
    public String token(SimTurn t, int sentBefore, int n, String text, boolean reasoning) {
        return line(head(t).put("done", false), reasoning ? "" : text, reasoning ? text : "");
    }

    @Override
    public List<String> end(SimTurn t, SimTimes times) {
        return List.of(line(done(t, times), "", ""));
    }

    @Override
    public JsonObject whole(SimTurn t, SimTimes times, String reasoningText, String answerText) {
        return put(done(t, times), answerText, reasoningText);
    }

    private String line(JsonObject o, String text, String thinking) {
        return put(o, text, thinking).encode() + "\n";
    }

    private JsonObject put(JsonObject o, String text, String thinking) {
        if (chat) {
            JsonObject message = new JsonObject().put("role", "assistant").put("content", text);
            if (!thinking.isEmpty()) {
                message.put("thinking", thinking);
            }
            o.put("message", message);
        } else {
            o.put("response", text);
            if (!thinking.isEmpty()) {
                o.put("thinking", thinking);
            }
        }
        return o;
    }

    private static JsonObject head(SimTurn t) {
        return new JsonObject().put("model", t.model()).put("created_at", Instant.ofEpochSecond(t.created()).toString());
    }

    private static JsonObject done(SimTurn t, SimTimes times) {
        long prefill = Math.round(times.prefillMs() * 1e6);
        long decode = Math.round(times.decodeMs() * 1e6);
        return head(t).put("done", true).put("done_reason", "length")
                .put("total_duration", Math.max(0, times.lastSent() - times.arrival()))
                .put("load_duration", LOAD_NANOS).put("prompt_eval_count", t.promptTokens())
                .put("prompt_eval_duration", prefill).put("eval_count", t.outputTokens()).put("eval_duration", decode);
    }
}
