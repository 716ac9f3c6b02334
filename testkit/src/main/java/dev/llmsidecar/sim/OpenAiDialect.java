package dev.llmsidecar.sim;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/** OpenAI chat completions and text completions, as vLLM sends them (reasoning in {@code reasoning_content}). */
final class OpenAiDialect implements SimDialect {

    private final boolean chat;

    OpenAiDialect(boolean chat) {
        this.chat = chat;
    }

    @Override
    public String idPrefix() {
        return chat ? "chatcmpl-" : "cmpl-";
    }

    @Override
    public Integer maxTokens(JsonObject request) {
        return request.getInteger("max_tokens", request.getInteger("max_completion_tokens"));
    }

    @Override
    public boolean reasoning() {
        return chat;
    }

    @Override
    public List<String> prelude(SimTurn t) {
        if (!chat || !t.behaviour().roleFirstChunk()) {
            return List.of();
        }
        return List.of(t.sse(chunk(t, new JsonObject().put("role", "assistant").put("content", ""), null, null)));
    }

    @Override
    public String token(SimTurn t, int sentBefore, int n, String text, boolean reasoning) {
        int sent = sentBefore + n;
        boolean last = sent >= t.outputTokens();
        JsonObject usage = null;
        if (t.continuousUsage() && t.includeUsage()) {
            usage = t.openAiUsage(sent);
        } else if (last && t.includeUsage() && t.behaviour().usageMode() == EngineBehaviour.UsageMode.ON_FINISH_CHUNK) {
            usage = t.openAiUsage(sent);
        }
        JsonObject delta = chat ? new JsonObject().put(reasoning ? "reasoning_content" : "content", text) : null;
        JsonObject event = chunk(t, delta, chat ? null : text, last ? "length" : null);
        if (usage != null) {
            event.put("usage", usage);
        }
        return t.sse(event);
    }

    @Override
    public List<String> end(SimTurn t, SimTimes times) {
        List<String> frames = new ArrayList<>();
        if (t.includeUsage() && t.behaviour().usageMode() == EngineBehaviour.UsageMode.SEPARATE_CHUNK) {
            JsonObject usageChunk = new JsonObject().put("id", t.id())
                    .put("object", chat ? "chat.completion.chunk" : "text_completion")
                    .put("created", t.created()).put("model", t.model()).put("choices", new JsonArray())
                    .put("usage", t.openAiUsage(t.outputTokens()));
            if (t.behaviour().perRequestMetrics()) {
                usageChunk.put("metrics", perRequestMetrics(times));
            }
            frames.add(t.sse(usageChunk));
        }
        frames.add("data: [DONE]" + t.eol() + t.eol());
        return frames;
    }

    @Override
    public JsonObject whole(SimTurn t, SimTimes times, String reasoningText, String answerText) {
        JsonObject choice = new JsonObject().put("index", 0);
        if (chat) {
            JsonObject message = new JsonObject().put("role", "assistant").put("content", answerText);
            if (!reasoningText.isEmpty()) {
                message.put("reasoning_content", reasoningText);
            }
            choice.put("message", message);
        } else {
            choice.put("text", answerText);
        }
        choice.putNull("logprobs").put("finish_reason", "length");
        JsonObject response = new JsonObject().put("id", t.id())
                .put("object", chat ? "chat.completion" : "text_completion").put("created", t.created())
                .put("model", t.model()).put("choices", new JsonArray().add(choice))
                .put("usage", t.openAiUsage(t.outputTokens()));
        if (t.behaviour().perRequestMetrics()) {
            response.put("metrics", perRequestMetrics(times));
        }
        return response;
    }

    private JsonObject chunk(SimTurn t, JsonObject delta, String text, String finish) {
        JsonObject choice = new JsonObject().put("index", 0);
        if (delta != null) {
            choice.put("delta", delta);
        } else {
            choice.put("text", text);
        }
        choice.putNull("logprobs");
        choice.put("finish_reason", finish);
        return new JsonObject().put("id", t.id()).put("object", chat ? "chat.completion.chunk" : "text_completion")
                .put("created", t.created()).put("model", t.model()).put("choices", new JsonArray().add(choice));
    }

    /** vLLM --enable-per-request-metrics: times in ms, TTFT measured from scheduling (slot start). */
    private static JsonObject perRequestMetrics(SimTimes times) {
        return new JsonObject().put("queue_time_ms", times.queueMs())
                .put("time_to_first_token_ms", times.prefillMs())
                .put("generation_time_ms", times.lastSent() < 0 ? 0 : (times.lastSent() - times.slotStart()) / 1e6);
    }
}
