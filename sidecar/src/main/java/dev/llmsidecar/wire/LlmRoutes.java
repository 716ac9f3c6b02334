package dev.llmsidecar.wire;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.anthropic.AnthropicMessagesFormat;
import dev.llmsidecar.wire.llamacpp.LlamaCppFormat;
import dev.llmsidecar.wire.ollama.OllamaFormat;
import dev.llmsidecar.wire.openai.OpenAiEmbeddingsFormat;
import dev.llmsidecar.wire.openai.OpenAiFormat;
import dev.llmsidecar.wire.openai.OpenAiResponsesFormat;
import dev.llmsidecar.wire.tgi.TgiFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/** The route table: which POST paths are LLM calls, with their operation label and wire format (docs/formats.md). */
public final class LlmRoutes {

    public static final String CHAT = "chat";
    public static final String TEXT_COMPLETION = "text_completion";
    public static final String EMBEDDINGS = "embeddings";

    private final Map<String, LlmOperation> byPath;

    public LlmRoutes(JsonFactory json) {
        this(json, false);
    }

    /**
     * @param conversations read where each chat request sits in its conversation (sidecar.conversations.enabled);
     *     off, no request body is read for it
     */
    public LlmRoutes(JsonFactory json, boolean conversations) {
        ConversationShape messages = conversations ? ConversationShape.MESSAGES : ConversationShape.NONE;
        OpenAiFormat openAiChat = new OpenAiFormat("openai_chat", json, messages);
        OpenAiFormat openAiCompletions = new OpenAiFormat("openai_completions", json);
        OllamaFormat ollama = new OllamaFormat(json);
        LlamaCppFormat llamaCpp = new LlamaCppFormat(json);
        this.byPath = List.of(
                new LlmOperation("/v1/chat/completions", CHAT, openAiChat),
                new LlmOperation("/v1/completions", TEXT_COMPLETION, openAiCompletions),
                new LlmOperation("/v1/responses", CHAT, new OpenAiResponsesFormat(json,
                        conversations ? ConversationShape.RESPONSES : ConversationShape.NONE)),
                new LlmOperation("/v1/embeddings", EMBEDDINGS, new OpenAiEmbeddingsFormat(json)),
                new LlmOperation("/v1/messages", CHAT, new AnthropicMessagesFormat(json, messages)),
                new LlmOperation("/api/chat", CHAT, new OllamaFormat(json, messages)),
                new LlmOperation("/api/generate", TEXT_COMPLETION, ollama),
                new LlmOperation("/generate_stream", TEXT_COMPLETION, new TgiFormat(json, true)),
                new LlmOperation("/generate", TEXT_COMPLETION, new TgiFormat(json, false)),
                new LlmOperation("/completion", TEXT_COMPLETION, llamaCpp),
                new LlmOperation("/completions", TEXT_COMPLETION, llamaCpp))
                .stream().collect(Collectors.toUnmodifiableMap(LlmOperation::path, Function.identity()));
    }

    /**
     * Returns the operation for an LLM call, or null for traffic that is only proxied and counted.
     *
     * @param method the request method, as sent (methods are case-sensitive)
     */
    public LlmOperation match(String method, String path) {
        if (!"POST".equals(method) || path == null) {
            return null;
        }
        String p = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        return byPath.get(p);
    }

    /** Every route, for documentation and tests. */
    public List<LlmOperation> all() {
        return byPath.values().stream().sorted(java.util.Comparator.comparing(LlmOperation::path)).toList();
    }
}
