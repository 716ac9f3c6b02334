package dev.llmsidecar.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * Finds the model that answered (OTel {@code gen_ai.response.model}) in the first JSON objects of a response: a
 * top-level {@code model} (OpenAI chat/completions chunks and bodies, Ollama, llama.cpp bodies) or one inside
 * {@code message} (Anthropic {@code message_start}) or {@code response} (OpenAI Responses {@code response.created}).
 * Only the first few objects, and only their first {@link #MAX_SCANNED_BYTES}, are looked at: a long stream costs
 * nothing after its start, and a large body (an embeddings list, whose {@code model} comes after the data) costs no
 * second full parse. A format that never names the model (TGI, llama.cpp's native stream) gives up after them.
 */
public final class ResponseModelProbe {

    /** Objects looked at per response before giving up. */
    static final int ATTEMPTS = 3;
    /** Bytes of one object scanned at most; a model named later is not found. */
    static final int MAX_SCANNED_BYTES = 64 * 1024;
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
        String model = find(json, bytes, offset, Math.min(length, MAX_SCANNED_BYTES));
        if (model != null) {
            attemptsLeft = 0;
            sink.onResponseModel(cut(model));
        }
    }

    /** At most {@link #MAX_CHARS} characters, never half a surrogate pair. */
    static String cut(String model) {
        if (model.length() <= MAX_CHARS) {
            return model;
        }
        int end = Character.isHighSurrogate(model.charAt(MAX_CHARS - 1)) ? MAX_CHARS - 1 : MAX_CHARS;
        return model.substring(0, end);
    }

    /**
     * The model an object names (top level first, then {@code message} / {@code response}), or null; on bytes that
     * end early (cut at the scan limit, or malformed), what was found before them.
     */
    static String find(JsonFactory json, byte[] bytes, int offset, int length) {
        return JsonReads.read(json, bytes, offset, length, p -> {
            Found found = new Found();
            try {
                if (p.nextToken() == JsonToken.START_OBJECT) {
                    modelMember(p, found, true);
                }
            } catch (IOException | RuntimeException e) {
                // what was read so far
            }
            return found.own != null ? found.own : found.nested;
        });
    }

    /** The top-level model, and the first nested one. */
    private static final class Found {
        String own;
        String nested;
    }

    /** The parser is inside an object: its model member, else (descending) one of message / response. */
    private static void modelMember(JsonParser p, Found found, boolean top) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if ("model".equals(name) && v == JsonToken.VALUE_STRING && !p.getText().isEmpty()) {
                if (top) {
                    found.own = p.getText();
                    return; // nothing else to read
                }
                if (found.nested == null) {
                    found.nested = p.getText();
                }
            } else if (top && v == JsonToken.START_OBJECT && ("message".equals(name) || "response".equals(name))) {
                modelMember(p, found, false);
            } else {
                p.skipChildren();
            }
        }
    }
}
