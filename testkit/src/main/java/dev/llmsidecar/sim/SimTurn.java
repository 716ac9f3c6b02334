package dev.llmsidecar.sim;

import io.vertx.core.json.JsonObject;

/**
 * The facts of one simulated request that every dialect renders from: fixed when the request arrives.
 *
 * @param id response id (dialect prefix + x-request-id or a counter)
 * @param model the model named by the request, else the engine's
 * @param created the "created" timestamp
 * @param promptTokens prompt length (body bytes / 4)
 * @param cachedTokens prompt tokens reported as prefix-cache hits
 * @param outputTokens tokens generated in total (reasoning included)
 * @param reasoningTokens the first this many of them are reasoning (thinking) tokens
 * @param includeUsage the OpenAI request set stream_options.include_usage
 * @param continuousUsage the OpenAI request set stream_options.continuous_usage_stats
 * @param behaviour the engine's behaviour (usage mode, per-request metrics, cache ratio)
 * @param eol SSE / NDJSON line end
 */
public record SimTurn(String id, String model, long created, int promptTokens, int cachedTokens, int outputTokens,
        int reasoningTokens, boolean includeUsage, boolean continuousUsage, EngineBehaviour behaviour, String eol) {

    /** OpenAI-style usage object. */
    JsonObject openAiUsage(int completion) {
        JsonObject u = new JsonObject().put("prompt_tokens", promptTokens)
                .put("total_tokens", promptTokens + completion).put("completion_tokens", completion);
        if (behaviour.cachedTokenRatio() > 0) {
            u.put("prompt_tokens_details", new JsonObject().put("cached_tokens", cachedTokens));
        }
        return u;
    }

    String sse(JsonObject data) {
        return "data: " + data.encode() + eol + eol;
    }

    String sse(String event, JsonObject data) {
        return "event: " + event + eol + "data: " + data.encode() + eol + eol;
    }

    /** A typed event (Anthropic, Responses): the {@code event:} line and the data's {@code type} both name it. */
    String typedSse(String type, JsonObject fields) {
        return sse(type, new JsonObject().put("type", type).mergeIn(fields));
    }
}
