package dev.llmsidecar.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonToken;
import io.vertx.core.buffer.Buffer;

/**
 * Reads the top-level {@code model}, {@code stream} and {@code priority} members of a JSON request body, and where it
 * sits in its conversation when its format's {@link ConversationShape} reads that; never changes it.
 */
public final class RequestFields {

    private final JsonFactory json;
    private final ConversationShape conversations;

    public RequestFields(JsonFactory json) {
        this(json, ConversationShape.NONE);
    }

    public RequestFields(JsonFactory json, ConversationShape conversations) {
        this.json = json;
        this.conversations = conversations;
    }

    /**
     * @param streamDefault the format's default when {@code stream} is absent or null (Ollama: true)
     */
    public InspectedRequest inspect(Buffer body, boolean streamDefault) {
        InspectedRequest read = JsonReads.read(json, body, p -> { // no copy of the body
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            String model = null;
            boolean stream = streamDefault;
            Integer priority = null;
            ConversationReader conversation = conversations.reader(body.getByteBuf());
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                if (conversation != null && conversations.read(conversation, name, p, v)) {
                    continue;
                }
                if ("model".equals(name) && v == JsonToken.VALUE_STRING) {
                    model = p.getText();
                } else if ("stream".equals(name) && (v == JsonToken.VALUE_TRUE || v == JsonToken.VALUE_FALSE)) {
                    stream = v == JsonToken.VALUE_TRUE;
                } else if ("priority".equals(name)) {
                    priority = JsonReads.intOrNull(p, v);
                } else {
                    p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                return null;
            }
            return new InspectedRequest(true, model, stream, priority, body,
                    conversation == null ? null : conversation.conversation());
        });
        return read != null ? read : InspectedRequest.undecodable(streamDefault, body);
    }
}
