package dev.llmsidecar.wire;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.Set;

/**
 * Reads a request's messages (Chat Completions, Ollama chat and Anthropic Messages {@code messages}; the Responses
 * API's {@code input}) inside the inspector's one pass, for where the request sits in its conversation: its turn
 * ({@link TurnCounter}) and the two history digests that link it to the turn before ({@link HistoryDigest}):
 * <ul>
 *   <li>{@link Conversation#key}: its messages but a trailing model run, what the next turn will look up;</li>
 *   <li>{@link Conversation#previousKey}: its messages before its last model run that a non-model message follows,
 *       the key the turn before stored (0: none, a first turn). That covers plain chat, an assistant message with tool
 *       calls followed by one or more tool results, parallel calls, and a user message after a tool.</li>
 * </ul>
 * Keeps no text: a message's text is hashed where it lies in the body ({@link BodyText}), or as the parser decodes
 * it, and let go.
 */
public final class ConversationReader {

    /** What links a request to the turn before it. */
    public enum Linked {
        /** Its history: the messages it resends (chat, a stateless Responses request). */
        HISTORY,
        /** The Responses API's {@code previous_response_id}: the id of the response the turn before got. */
        PREVIOUS_RESPONSE,
        /** The Responses API's {@code conversation}: an id every turn of the conversation names. */
        CONVERSATION
    }

    /**
     * Where a request sits in its conversation, as its body tells.
     *
     * @param position its turn and what it answers; for a request linked by an id its turn is the linked turn's + 1,
     *     which only the table of turns knows ({@code turn} 0 here)
     * @param key what the next turn will look up (under the id, for a request linked by one); 0: it holds no message
     *     of a conversation (none, or instructions only), nothing to link
     * @param previousKey what it looks up: the key the turn before stored, or the digest of the id it names; 0: none
     */
    public record Conversation(TurnCounter.Position position, long key, long previousKey, Linked linked) {

        /** A history-linked conversation (tests). */
        public Conversation(TurnCounter.Position position, long key, long previousKey) {
            this(position, key, previousKey, Linked.HISTORY);
        }

        /** The alias the request's entry takes at once: a conversation's id, which moves to its newest turn. */
        public long alias() {
            return linked == Linked.CONVERSATION ? previousKey : 0;
        }
    }

    /** The kinds of id digests ({@link HistoryDigest#ofId}): a response's and a conversation's never meet. */
    public static final String RESPONSE_ID = "response";
    public static final String CONVERSATION_ID = "conversation";

    /** Members that change between turns without changing the conversation, or are the model's thinking. */
    private static final Set<String> LEFT_OUT = Set.of("cache_control", "signature", "reasoning_content", "thinking",
            "reasoning", "reasoning_details");
    /** Content parts and Responses items that are the model's thinking: not part of the history's digest. */
    private static final Set<String> THINKING = Set.of("thinking", "redacted_thinking", "reasoning");

    private final TurnCounter turns = new TurnCounter();
    private final HistoryDigest digest;
    /** The body's bytes, to hash a message's text where it lies; null: from the parser's characters. */
    private final BodyText body;
    private boolean inModelRun;
    private long modelRunStart;
    private long previousKey;
    private long key;
    /** The digest of the id the request names ({@code previous_response_id}, {@code conversation}), or 0. */
    private long idKey;
    private Linked linked = Linked.HISTORY;
    /** A message of the conversation was read (not only instructions): without one there is no history to link. */
    private boolean anyMessage;

    /**
     * @param body the bytes the parser reads, to hash texts where they lie, undecoded (the same digests); null: from
     *     the characters the parser decodes
     */
    public ConversationReader(BodyText body) {
        this(new HistoryDigest(), body);
    }

    ConversationReader(HistoryDigest digest, BodyText body) {
        this.digest = digest;
        this.body = body;
        this.key = digest.value();
    }

    /** Reads a {@code messages} array (the parser at its START_ARRAY; other tokens are skipped). */
    public void messages(JsonParser p, JsonToken at) throws IOException {
        items(p, at, false);
    }

    /** Reads the Responses API's {@code input}: a string is one user message, an array its items. */
    public void responsesInput(JsonParser p, JsonToken at) throws IOException {
        if (at == JsonToken.VALUE_STRING) {
            text(p);
            end(TurnCounter.Message.USER);
            return;
        }
        items(p, at, true);
    }

    /** An array of messages or Responses items, each an object; anything else in it is skipped. */
    private void items(JsonParser p, JsonToken at, boolean responsesItems) throws IOException {
        if (at != JsonToken.START_ARRAY) {
            p.skipChildren();
            return;
        }
        while (next(p) != JsonToken.END_ARRAY) {
            if (p.currentToken() == JsonToken.START_OBJECT) {
                message(p, responsesItems);
            } else {
                p.skipChildren();
            }
        }
    }

    /** Reads the Responses API's {@code previous_response_id} (a string; anything else is skipped). */
    public void previousResponse(JsonParser p, JsonToken at) throws IOException {
        if (at == JsonToken.VALUE_STRING && linked != Linked.CONVERSATION) {
            idKey = HistoryDigest.ofId(RESPONSE_ID, p.getText());
            linked = Linked.PREVIOUS_RESPONSE;
        } else {
            p.skipChildren();
        }
    }

    /** Reads the Responses API's {@code conversation}: its id, or an object with an {@code id}. */
    public void conversationId(JsonParser p, JsonToken at) throws IOException {
        String id = null;
        if (at == JsonToken.VALUE_STRING) {
            id = p.getText();
        } else if (at == JsonToken.START_OBJECT) {
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                if (p.nextToken() == JsonToken.VALUE_STRING && name.equals("id")) {
                    id = p.getText();
                } else {
                    p.skipChildren();
                }
            }
        } else {
            p.skipChildren();
        }
        if (id != null) {
            idKey = HistoryDigest.ofId(CONVERSATION_ID, id);
            linked = Linked.CONVERSATION; // the conversation decides, whatever previous_response_id says
        }
    }

    /** What was read: nothing read (no messages) gives turn 1 after the user, and no previous key. */
    public Conversation conversation() {
        if (linked == Linked.HISTORY) {
            return new Conversation(turns.position(), anyMessage ? key : 0, previousKey, linked);
        }
        // the new input only: its turn is the linked one's + 1, its key its input under the id it continues
        return new Conversation(new TurnCounter.Position(0, turns.position().after()),
                HistoryDigest.combine(idKey, key), idKey, linked);
    }

    private void message(JsonParser p, boolean responsesItem) throws IOException {
        String role = null;
        String type = null;
        boolean toolResult = false;
        long[] start = digest.mark();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (name.equals("role") && v == JsonToken.VALUE_STRING) {
                role = p.getText();
            } else if (name.equals("type") && v == JsonToken.VALUE_STRING) {
                type = p.getText();
            } else if (name.equals("content")) {
                toolResult |= content(p, v);
            } else if (LEFT_OUT.contains(name)) {
                p.skipChildren();
            } else {
                other(p, name, v);
            }
        }
        TurnCounter.Message kind = responsesItem ? itemKind(type, role) : TurnCounter.ofRole(role);
        if (kind == TurnCounter.Message.USER && toolResult) {
            kind = TurnCounter.Message.TOOL_RESULT; // Anthropic: tool results come in a user message
        }
        if (kind == TurnCounter.Message.INSTRUCTION) {
            digest.reset(start);
            return;
        }
        if (responsesItem && type != null && THINKING.contains(type)) {
            digest.reset(start); // the model's, for the turn count; not part of the history's digest
            turns.message(TurnCounter.Message.MODEL);
            anyMessage = true;
            modelMessage();
            return;
        }
        turns.message(kind);
        anyMessage = true;
        if (kind == TurnCounter.Message.MODEL) {
            modelMessage();
            digest.endMessage(kind);
        } else {
            if (inModelRun) {
                previousKey = modelRunStart;
                inModelRun = false;
            }
            digest.endMessage(kind);
            key = digest.value();
        }
    }

    private void end(TurnCounter.Message kind) {
        turns.message(kind);
        anyMessage = true;
        digest.endMessage(kind);
        key = digest.value();
    }

    private void modelMessage() {
        if (!inModelRun) {
            inModelRun = true;
            modelRunStart = digest.value();
        }
    }

    private static TurnCounter.Message itemKind(String type, String role) {
        if (type == null || type.equals("message")) {
            return TurnCounter.ofRole(role);
        }
        if (type.endsWith("_call_output")) {
            return TurnCounter.Message.TOOL_RESULT;
        }
        if (type.endsWith("_call") || THINKING.contains(type)) {
            return TurnCounter.Message.MODEL;
        }
        return TurnCounter.ofRole(role);
    }

    /** A message's content: a string, or parts; true when a part is a tool's result (Anthropic). */
    private boolean content(JsonParser p, JsonToken v) throws IOException {
        if (v == JsonToken.VALUE_STRING) {
            text(p);
            return false;
        }
        if (v != JsonToken.START_ARRAY) {
            other(p, "content", v);
            return false;
        }
        boolean toolResult = false;
        while (next(p) != JsonToken.END_ARRAY) {
            JsonToken t = p.currentToken();
            if (t == JsonToken.VALUE_STRING) {
                text(p);
            } else if (t == JsonToken.START_OBJECT) {
                toolResult |= part(p);
            } else {
                other(p, "", t);
            }
        }
        return toolResult;
    }

    /** One content part: its text joins the message's text; a thinking part leaves no trace. */
    private boolean part(JsonParser p) throws IOException {
        long[] start = digest.mark();
        String type = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (name.equals("type") && v == JsonToken.VALUE_STRING) {
                type = p.getText(); // not digested: a string and a text part are the same text
            } else if (name.equals("text") && v == JsonToken.VALUE_STRING) {
                text(p);
            } else if (name.equals("content")) {
                content(p, v); // a tool result's own content
            } else if (LEFT_OUT.contains(name)) {
                p.skipChildren();
            } else {
                other(p, name, v);
            }
        }
        if (type != null && THINKING.contains(type)) {
            digest.reset(start);
        }
        return "tool_result".equals(type);
    }

    /**
     * The text of the string the parser is at: from the body's bytes when the parser says where it starts (a UTF-8
     * body), left for the parser to skip undecoded; otherwise from the characters the parser decodes.
     */
    private void text(JsonParser p) throws IOException {
        if (body != null) {
            long quote = p.currentTokenLocation().getByteOffset();
            if (quote >= 0 && body.digest(quote, digest)) {
                return;
            }
        }
        digest.text(p.getTextCharacters(), p.getTextOffset(), p.getTextLength());
    }

    /** Any other member: its name and every scalar under it, in order, but the left-out members. */
    private void other(JsonParser p, String name, JsonToken v) throws IOException {
        digest.other(name);
        value(p, v);
    }

    private void value(JsonParser p, JsonToken v) throws IOException {
        switch (v) {
            case START_OBJECT -> {
                digest.other('{');
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    JsonToken t = p.nextToken();
                    if (LEFT_OUT.contains(name)) {
                        p.skipChildren();
                    } else {
                        digest.other(name);
                        value(p, t);
                    }
                }
                digest.other('}');
            }
            case START_ARRAY -> {
                digest.other('[');
                for (JsonToken t = next(p); t != JsonToken.END_ARRAY; t = next(p)) {
                    value(p, t);
                }
                digest.other(']');
            }
            default -> {
                char[] chars = p.getTextCharacters();
                if (chars != null) {
                    digest.other(chars, p.getTextOffset(), p.getTextLength());
                }
            }
        }
    }

    /** The next token; the end of the input inside an array is an error (Jackson's own, as it would say). */
    private static JsonToken next(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == null) {
            throw new com.fasterxml.jackson.core.io.JsonEOFException(p, null, "the input ended inside an array");
        }
        return t;
    }
}
