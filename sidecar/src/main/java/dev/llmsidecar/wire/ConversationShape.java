package dev.llmsidecar.wire;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * Where a format's request body says where it sits in a conversation (issue 45, docs/metrics.md "Conversations"), or
 * that it does not: the members a {@link ConversationReader} reads in the inspector's one pass. {@link #NONE} for
 * completions-style formats and whenever sidecar.conversations.enabled is off: nothing is read, nothing costs.
 */
public enum ConversationShape {
    /** No conversation: completions, /api/generate, TGI, llama.cpp /completion, embeddings; or the feature is off. */
    NONE,
    /** A {@code messages} array: Chat Completions, Ollama /api/chat, Anthropic Messages. */
    MESSAGES,
    /** The Responses API: {@code input}, {@code previous_response_id}, {@code conversation}. */
    RESPONSES;

    /**
     * A reader for one request body (the bytes the parser reads: its texts hashed where they lie, when
     * {@link BodyText#of} can), or null when this shape reads nothing.
     */
    public ConversationReader reader(io.netty.buffer.ByteBuf body) {
        return this == NONE ? null : new ConversationReader(BodyText.of(body));
    }

    /**
     * Reads the top-level member {@code name} (the parser at its value {@code v}) when it is one of this shape's.
     *
     * @return false when the member is not one of this shape's (the caller reads or skips it)
     */
    public boolean read(ConversationReader reader, String name, JsonParser p, JsonToken v) throws IOException {
        switch (this) {
            case MESSAGES -> {
                if (name.equals("messages")) {
                    reader.messages(p, v);
                    return true;
                }
            }
            case RESPONSES -> {
                switch (name) {
                    case "input" -> reader.responsesInput(p, v);
                    case "previous_response_id" -> reader.previousResponse(p, v);
                    case "conversation" -> reader.conversationId(p, v);
                    default -> {
                        return false;
                    }
                }
                return true;
            }
            case NONE -> {
            }
        }
        return false;
    }
}
