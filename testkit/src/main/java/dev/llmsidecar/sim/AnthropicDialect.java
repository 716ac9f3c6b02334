package dev.llmsidecar.sim;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/** Anthropic Messages: message_start, a thinking block when reasoning, a text block, message_delta with usage. */
final class AnthropicDialect implements SimDialect {

    @Override
    public String idPrefix() {
        return "msg_";
    }

    @Override
    public Integer maxTokens(JsonObject request) {
        return request.getInteger("max_tokens");
    }

    @Override
    public List<String> prelude(SimTurn t) {
        JsonObject message = new JsonObject().put("id", t.id()).put("type", "message").put("role", "assistant")
                .put("content", new JsonArray()).put("model", t.model()).putNull("stop_reason").putNull("stop_sequence")
                .put("usage", usage(t, 1));
        return List.of(t.typedSse("message_start", new JsonObject().put("message", message)),
                t.typedSse("ping", new JsonObject()));
    }

    @Override
    public String token(SimTurn t, int sentBefore, int n, String text, boolean reasoning) {
        StringBuilder sb = new StringBuilder();
        int textIndex = t.reasoningTokens() > 0 ? 1 : 0;
        if (reasoning && sentBefore == 0) {
            sb.append(t.typedSse("content_block_start", new JsonObject().put("index", 0)
                    .put("content_block", new JsonObject().put("type", "thinking").put("thinking", ""))));
        }
        if (!reasoning && sentBefore == t.reasoningTokens()) {
            if (textIndex > 0) {
                sb.append(t.typedSse("content_block_delta", new JsonObject().put("index", 0).put("delta",
                        new JsonObject().put("type", "signature_delta").put("signature", "c2ln"))));
                sb.append(t.typedSse("content_block_stop", new JsonObject().put("index", 0)));
            }
            sb.append(t.typedSse("content_block_start", new JsonObject().put("index", textIndex)
                    .put("content_block", new JsonObject().put("type", "text").put("text", ""))));
        }
        JsonObject delta = reasoning ? new JsonObject().put("type", "thinking_delta").put("thinking", text)
                : new JsonObject().put("type", "text_delta").put("text", text);
        sb.append(t.typedSse("content_block_delta", new JsonObject().put("index", reasoning ? 0 : textIndex)
                .put("delta", delta)));
        return sb.toString();
    }

    @Override
    public List<String> end(SimTurn t, SimTimes times) {
        return List.of(t.typedSse("content_block_stop", new JsonObject().put("index", t.reasoningTokens() > 0 ? 1 : 0)),
                t.typedSse("message_delta", new JsonObject().put("delta", new JsonObject()
                        .put("stop_reason", "max_tokens").putNull("stop_sequence"))
                        .put("usage", new JsonObject().put("output_tokens", t.outputTokens()))),
                t.typedSse("message_stop", new JsonObject()));
    }

    @Override
    public JsonObject whole(SimTurn t, SimTimes times, String reasoningText, String answerText) {
        JsonArray content = new JsonArray();
        if (!reasoningText.isEmpty()) {
            content.add(new JsonObject().put("type", "thinking").put("thinking", reasoningText).put("signature", "c2ln"));
        }
        content.add(new JsonObject().put("type", "text").put("text", answerText));
        return new JsonObject().put("id", t.id()).put("type", "message").put("role", "assistant")
                .put("model", t.model()).put("content", content).put("stop_reason", "max_tokens")
                .putNull("stop_sequence").put("usage", usage(t, t.outputTokens()));
    }

    /** input_tokens excludes the cache reads, as Anthropic reports it. */
    private static JsonObject usage(SimTurn t, int output) {
        return new JsonObject().put("input_tokens", t.promptTokens() - t.cachedTokens())
                .put("cache_creation_input_tokens", 0).put("cache_read_input_tokens", t.cachedTokens())
                .put("output_tokens", output);
    }
}
