package dev.llmsidecar.wire;

import com.fasterxml.jackson.core.JsonFactory;
import io.vertx.core.buffer.Buffer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * What the JSON wire formats share, so that each format class holds only its own reading: a fixed label,
 * {@code model} / {@code stream} read from the request by {@link RequestFields}, and the choice between the
 * format's streaming decoder and one JSON body copied aside ({@link JsonBodyDecoder}).
 */
public abstract class JsonWireFormat implements WireFormat {

    protected final JsonFactory json;
    private final String name;
    private final RequestFields fields;
    private final boolean streamDefault;

    /** @param streamDefault the format's default when the request has no {@code stream} (Ollama: true) */
    protected JsonWireFormat(String name, JsonFactory json, boolean streamDefault) {
        this(name, json, streamDefault, ConversationShape.NONE);
    }

    /** @param conversations what of a conversation its requests say (NONE when sidecar.conversations is off) */
    protected JsonWireFormat(String name, JsonFactory json, boolean streamDefault, ConversationShape conversations) {
        this.name = name;
        this.json = json;
        this.fields = new RequestFields(json, conversations);
        this.streamDefault = streamDefault;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public InspectedRequest inspect(Buffer body) {
        return fields.inspect(body, streamDefault);
    }

    @Override
    public final StreamDecoder decoder(TokenEventSink sink, UpstreamResponse response) {
        if (streamingResponse(response.contentType())) {
            return streamDecoder(sink, response);
        }
        return new JsonBodyDecoder(sink, bodyHandler(sink, response), response.maxBodyBytes(), responseModel());
    }

    /** Finds the answering model in a response's first objects (one probe per response). */
    protected final ResponseModelProbe responseModel() {
        return new ResponseModelProbe(json);
    }

    /**
     * The decoder of a response {@link #streamingResponse} accepts. Only reached for formats that stream, which
     * override it; a format that never streams says so in {@code streamingResponse}.
     */
    protected StreamDecoder streamDecoder(TokenEventSink sink, UpstreamResponse response) {
        throw new UnsupportedOperationException(name + " does not stream");
    }

    /** The reading of a non-streaming body; built with the decoder, so response headers can be read here. */
    protected abstract JsonBodyDecoder.BodyHandler bodyHandler(TokenEventSink sink, UpstreamResponse response);

    /**
     * A body handler that parses the body and reports what it says; a body that {@code parse} returns null for
     * is undecodable.
     */
    protected static <T> JsonBodyDecoder.BodyHandler reading(Function<byte[], T> parse, Consumer<T> report) {
        return (bytes, nanos) -> {
            T parsed = parse.apply(bytes);
            if (parsed == null) {
                return false;
            }
            report.accept(parsed);
            return true;
        };
    }
}
