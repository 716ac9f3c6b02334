package dev.llmsidecar.sim;

import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;

/**
 * TGI /generate_stream (SSE "data:" without a space, one token per event, details on the last) and /generate
 * (generated_text; counts and timings in x-* headers). Requests name no model.
 */
final class TgiDialect implements SimDialect {

    private final boolean streamPath;

    TgiDialect(boolean streamPath) {
        this.streamPath = streamPath;
    }

    @Override
    public String idPrefix() {
        return "tgi-";
    }

    @Override
    public boolean stream(JsonObject request) {
        return streamPath;
    }

    @Override
    public Integer maxTokens(JsonObject request) {
        JsonObject parameters = request.getJsonObject("parameters");
        return parameters == null ? null : parameters.getInteger("max_new_tokens");
    }

    @Override
    public String model(JsonObject request) {
        return null;
    }

    @Override
    public boolean reasoning() {
        return false;
    }

    @Override
    public String token(SimTurn t, int sentBefore, int n, String text, boolean reasoning) {
        int sent = sentBefore + n;
        boolean last = sent >= t.outputTokens();
        JsonObject event = new JsonObject().put("index", sent).put("token", new JsonObject().put("id", 1000 + sent)
                .put("text", text).put("logprob", -0.25).put("special", false));
        if (last) {
            event.put("generated_text", SimulatedEngine.text(0, t.outputTokens())).put("details", new JsonObject()
                    .put("finish_reason", "length").put("generated_tokens", t.outputTokens()).putNull("seed")
                    .put("input_length", t.promptTokens()));
        } else {
            event.putNull("generated_text").putNull("details");
        }
        return "data:" + event.encode() + t.eol() + t.eol();
    }

    @Override
    public JsonObject whole(SimTurn t, SimTimes times, String reasoningText, String answerText) {
        return new JsonObject().put("generated_text", answerText);
    }

    @Override
    public void wholeHeaders(SimTurn t, SimTimes times, MultiMap headers) {
        long queueMs = Math.round(times.queueMs());
        long inferenceMs = Math.round((times.lastSent() - times.slotStart()) / 1e6);
        headers.set("x-compute-type", "sim").set("x-total-time", Long.toString(queueMs + inferenceMs))
                .set("x-validation-time", "0").set("x-queue-time", Long.toString(queueMs))
                .set("x-inference-time", Long.toString(inferenceMs))
                .set("x-time-per-token", Long.toString(inferenceMs / Math.max(1, t.outputTokens())))
                .set("x-prompt-tokens", Integer.toString(t.promptTokens()))
                .set("x-generated-tokens", Integer.toString(t.outputTokens()));
    }
}
