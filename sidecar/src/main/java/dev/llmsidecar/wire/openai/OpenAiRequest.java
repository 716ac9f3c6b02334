package dev.llmsidecar.wire.openai;

import dev.llmsidecar.wire.InspectedRequest;
import io.vertx.core.buffer.Buffer;

/**
 * An OpenAI chat or completions request as inspected: besides model and stream, what it says about usage in the
 * stream ({@code stream_options.include_usage}) and the minimal textual edit that would turn it on.
 */
public final class OpenAiRequest extends InspectedRequest {

    private final UsageRequest usage;
    private final BodyEdit usageEdit;

    /**
     * @param usage what the request says about streamed usage
     * @param usageEdit the edit that turns include_usage on; non-null only when {@code usage} is
     *     {@link UsageRequest#ABSENT}
     */
    public OpenAiRequest(boolean decodable, String model, boolean stream, UsageRequest usage, BodyEdit usageEdit,
            Buffer body) {
        this(decodable, model, stream, null, usage, usageEdit, body);
    }

    /** @param priority the integer {@code priority} member (vLLM's scheduling priority), or null */
    public OpenAiRequest(boolean decodable, String model, boolean stream, Integer priority, UsageRequest usage,
            BodyEdit usageEdit, Buffer body) {
        this(decodable, model, stream, priority, usage, usageEdit, body, null);
    }

    /** @param conversation where it sits in its conversation, or null: not read */
    public OpenAiRequest(boolean decodable, String model, boolean stream, Integer priority, UsageRequest usage,
            BodyEdit usageEdit, Buffer body, dev.llmsidecar.wire.ConversationReader.Conversation conversation) {
        super(decodable, model, stream, priority, body, conversation);
        this.usage = usage;
        this.usageEdit = usageEdit;
    }

    static OpenAiRequest undecodable(Buffer body) {
        return new OpenAiRequest(false, null, false, UsageRequest.NOT_APPLICABLE, null, body);
    }

    public UsageRequest usage() {
        return usage;
    }

    public BodyEdit usageEdit() {
        return usageEdit;
    }

    @Override
    public boolean equals(Object o) {
        return super.equals(o) && o instanceof OpenAiRequest r && usage == r.usage
                && java.util.Objects.equals(usageEdit, r.usageEdit);
    }

    @Override
    public int hashCode() {
        return 31 * super.hashCode() + java.util.Objects.hash(usage, usageEdit);
    }

    /** The body with stream_options.include_usage turned on (only where {@link #usageEdit} is set). */
    public Buffer bodyWithUsage() {
        if (usageEdit == null) {
            throw new IllegalStateException("this request has no include_usage edit");
        }
        return usageEdit.applyTo(body());
    }
}
