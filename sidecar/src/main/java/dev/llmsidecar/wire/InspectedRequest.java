package dev.llmsidecar.wire;

import io.vertx.core.buffer.Buffer;

/**
 * What the sidecar learned from an LLM request body: whether it was a JSON object, the model it names, whether it
 * asks for a stream and the scheduling priority it asks for (vLLM's {@code priority}). A format that reads more (OpenAI's stream_options) returns a subclass of its own; the body itself
 * is never changed here.
 */
public class InspectedRequest {

    private final boolean decodable;
    private final String model;
    private final boolean stream;
    private final Buffer body;
    private final Integer priority;
    private final ConversationReader.Conversation conversation;

    /**
     * @param decodable the body was a JSON object
     * @param model the {@code model} member, or null
     * @param stream the request asks for a streamed response ({@code stream}, or the format's default)
     * @param body the bytes the client sent
     */
    public InspectedRequest(boolean decodable, String model, boolean stream, Buffer body) {
        this(decodable, model, stream, null, body);
    }

    /** @param priority the integer {@code priority} member, or null */
    public InspectedRequest(boolean decodable, String model, boolean stream, Integer priority, Buffer body) {
        this(decodable, model, stream, priority, body, null);
    }

    /** @param conversation where it sits in its conversation, or null when its format's shape reads none */
    public InspectedRequest(boolean decodable, String model, boolean stream, Integer priority, Buffer body,
            ConversationReader.Conversation conversation) {
        this.decodable = decodable;
        this.model = model;
        this.stream = stream;
        this.priority = priority;
        this.body = body;
        this.conversation = conversation;
    }

    /** A body that is not a JSON object: forwarded untouched, with the format's default for streaming. */
    public static InspectedRequest undecodable(boolean streamDefault, Buffer body) {
        return new InspectedRequest(false, null, streamDefault, body);
    }

    public boolean decodable() {
        return decodable;
    }

    public String model() {
        return model;
    }

    public boolean stream() {
        return stream;
    }

    /** The integer {@code priority} member (vLLM's scheduling priority), or null when absent or not an integer. */
    public Integer priority() {
        return priority;
    }

    public Buffer body() {
        return body;
    }

    /**
     * Where the request sits in its conversation (sidecar.conversations.enabled, a chat format), or null: not read.
     */
    public ConversationReader.Conversation conversation() {
        return conversation;
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && o instanceof InspectedRequest r && decodable == r.decodable
                && stream == r.stream && java.util.Objects.equals(model, r.model)
                && java.util.Objects.equals(priority, r.priority)
                && java.util.Objects.equals(conversation, r.conversation)
                && java.util.Objects.equals(body, r.body);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(decodable, model, stream, priority, body);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[decodable=" + decodable + ", model=" + model + ", stream=" + stream
                + (priority == null ? "" : ", priority=" + priority) + "]";
    }
}
