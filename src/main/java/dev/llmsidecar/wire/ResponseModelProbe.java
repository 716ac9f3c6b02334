package dev.llmsidecar.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * Finds the model that answered (OTel {@code gen_ai.response.model}) in the first JSON objects of a response: a
 * top-level {@code model} (OpenAI chat/completions chunks and bodies, Ollama, llama.cpp) or one inside
 * {@code message} (Anthropic {@code message_start}) or {@code response} (OpenAI Responses {@code response.created}).
 * Only the first few objects are looked at, so a long stream costs nothing after its start; a format that never
 * names the model (TGI) gives up after them.
 */
public final class ResponseModelProbe {

    /** Objects looked at per response before giving up. */
    static final int ATTEMPTS = 3;
    /** Longer names are cut: the value is a span attribute, not a label, but still bounded. */
    static final int MAX_CHARS = 256;

    private final JsonFactory json;
    private int attemptsLeft = ATTEMPTS;

    public ResponseModelProbe(JsonFactory json) {
        this.json = json;
    }

    /** Looks at one JSON object of the response; reports the model to {@code sink} once, when found. */
    public void look(byte[] bytes, int offset, int length, TokenEventSink sink) {
        if (attemptsLeft <= 0) {
            return;
        }
        attemptsLeft--;
        String model = find(json, bytes, offset, length);
        if (model != null) {
            attemptsLeft = 0;
            sink.onResponseModel(model.length() > MAX_CHARS ? model.substring(0, MAX_CHARS) : model);
        }
    }

    /** The model an object names (top level first, then {@code message} / {@code response}), or null. */
    static String find(JsonFactory json, byte[] bytes, int offset, int length) {
        try (JsonParser p = json.createParser(bytes, offset, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            return modelMember(p, true);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The parser is inside an object: its model member, else (descending) one of message / response. */
    private static String modelMember(JsonParser p, boolean descend) throws IOException {
        String own = null;
        String nested = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (own == null && "model".equals(name) && v == JsonToken.VALUE_STRING && !p.getText().isEmpty()) {
                own = p.getText();
                if (descend) {
                    return own; // top level: nothing else to read
                }
            } else if (descend && nested == null && v == JsonToken.START_OBJECT
                    && ("message".equals(name) || "response".equals(name))) {
                nested = modelMember(p, false);
            } else {
                p.skipChildren();
            }
        }
        return own != null ? own : nested;
    }
}
