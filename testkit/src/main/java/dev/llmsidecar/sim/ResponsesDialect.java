package dev.llmsidecar.sim;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/** OpenAI Responses API: typed events; reasoning as {@code response.reasoning_text.delta} (as vLLM streams it). */
final class ResponsesDialect implements SimDialect {

    @Override
    public String idPrefix() {
        return "resp_";
    }

    @Override
    public Integer maxTokens(JsonObject request) {
        return request.getInteger("max_output_tokens");
    }

    @Override
    public List<String> prelude(SimTurn t) {
        JsonObject inProgress = new JsonObject().put("response", response(t, "in_progress", null));
        return List.of(t.typedSse("response.created", inProgress),
                t.typedSse("response.in_progress", inProgress)); // encoded at once: sharing the object is safe
    }

    @Override
    public String token(SimTurn t, int sentBefore, int n, String text, boolean reasoning) {
        StringBuilder sb = new StringBuilder();
        int answerIndex = t.reasoningTokens() > 0 ? 1 : 0;
        if (reasoning && sentBefore == 0) {
            sb.append(t.typedSse("response.output_item.added", new JsonObject().put("output_index", 0)
                    .put("item", new JsonObject().put("id", "rs_" + t.id()).put("type", "reasoning")
                            .put("summary", new JsonArray()))));
        }
        if (!reasoning && sentBefore == t.reasoningTokens()) {
            if (answerIndex > 0) {
                sb.append(t.typedSse("response.output_item.done", new JsonObject().put("output_index", 0)
                        .put("item", new JsonObject().put("id", "rs_" + t.id()).put("type", "reasoning"))));
            }
            sb.append(t.typedSse("response.output_item.added", new JsonObject().put("output_index", answerIndex)
                    .put("item", new JsonObject().put("id", "msg_" + t.id()).put("type", "message")
                            .put("status", "in_progress").put("content", new JsonArray()).put("role", "assistant"))));
            sb.append(t.typedSse("response.content_part.added", new JsonObject().put("item_id", "msg_" + t.id())
                    .put("output_index", answerIndex).put("content_index", 0).put("part", new JsonObject()
                            .put("type", "output_text").put("annotations", new JsonArray()).put("text", ""))));
        }
        JsonObject delta = new JsonObject().put("item_id", (reasoning ? "rs_" : "msg_") + t.id())
                .put("output_index", reasoning ? 0 : answerIndex).put("content_index", 0).put("delta", text);
        sb.append(t.typedSse(reasoning ? "response.reasoning_text.delta" : "response.output_text.delta", delta));
        return sb.toString();
    }

    @Override
    public List<String> end(SimTurn t, SimTimes times) {
        int answerIndex = t.reasoningTokens() > 0 ? 1 : 0;
        List<String> frames = new ArrayList<>();
        frames.add(t.typedSse("response.output_item.done", new JsonObject().put("output_index", answerIndex)
                .put("item", new JsonObject().put("id", "msg_" + t.id()).put("type", "message")
                        .put("status", "completed").put("role", "assistant"))));
        frames.add(t.typedSse("response.completed",
                new JsonObject().put("response", response(t, "completed", usage(t)))));
        return frames;
    }

    @Override
    public JsonObject whole(SimTurn t, SimTimes times, String reasoningText, String answerText) {
        JsonObject r = response(t, "completed", usage(t));
        JsonArray output = new JsonArray();
        if (!reasoningText.isEmpty()) {
            output.add(new JsonObject().put("id", "rs_" + t.id()).put("type", "reasoning").put("content",
                    new JsonArray().add(new JsonObject().put("type", "reasoning_text").put("text", reasoningText))));
        }
        output.add(new JsonObject().put("id", "msg_" + t.id()).put("type", "message").put("status", "completed")
                .put("role", "assistant").put("content", new JsonArray().add(new JsonObject()
                        .put("type", "output_text").put("text", answerText).put("annotations", new JsonArray()))));
        return r.put("output", output);
    }

    private static JsonObject response(SimTurn t, String status, JsonObject usage) {
        return new JsonObject().put("id", t.id()).put("object", "response").put("created_at", t.created())
                .put("status", status).putNull("error").putNull("incomplete_details").put("model", t.model())
                .put("output", new JsonArray()).put("usage", usage);
    }

    private static JsonObject usage(SimTurn t) {
        return new JsonObject().put("input_tokens", t.promptTokens())
                .put("input_tokens_details", new JsonObject().put("cached_tokens", t.cachedTokens()))
                .put("output_tokens", t.outputTokens())
                .put("output_tokens_details", new JsonObject().put("reasoning_tokens", t.reasoningTokens()))
                .put("total_tokens", t.promptTokens() + t.outputTokens());
    }
}
