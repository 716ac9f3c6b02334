package dev.llmsidecar.wire;

import io.vertx.core.buffer.Buffer;

/**
 * What the sidecar learned from an LLM request body: whether it was a JSON object, the model it names and whether it
 * asks for a stream. A format that reads more (OpenAI's stream_options) returns a subclass of its own; the body itself
 * is never changed here.
 */
public class InspectedRequest {

    private final boolean decodable;
    private final String model;
    private final boolean stream;
    private final Buffer body;

    /**
     * @param decodable the body was a JSON object
     * @param model the {@code model} member, or null
     * @param stream the request asks for a streamed response ({@code stream}, or the format's default)
     * @param body the bytes the client sent
     */
    public InspectedRequest(boolean decodable, String model, boolean stream, Buffer body) {
        this.decodable = decodable;
        this.model = model;
        this.stream = stream;
        this.body = body;
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

    public Buffer body() {
        return body;
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && o instanceof InspectedRequest r && decodable == r.decodable
                && stream == r.stream && java.util.Objects.equals(model, r.model)
                && java.util.Objects.equals(body, r.body);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(decodable, model, stream, body);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[decodable=" + decodable + ", model=" + model + ", stream=" + stream + "]";
    }
}
