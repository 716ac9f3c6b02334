package dev.llmsidecar.wire.openai;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Reads model / stream / stream_options from an OpenAI request body and, when asked, turns
 * stream_options.include_usage on by a minimal textual edit at Jackson-reported byte offsets; every other byte
 * of the body is left as the client sent it.
 */
public final class OpenAiRequestInspector {

    private static final byte[] STREAM_OPTIONS_MEMBER =
            "\"stream_options\":{\"include_usage\":true},".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] INCLUDE_USAGE_MEMBER = "\"include_usage\":true".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRUE = "true".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STREAM_OPTIONS_OBJECT = "{\"include_usage\":true}".getBytes(StandardCharsets.US_ASCII);

    private final JsonFactory json;

    public OpenAiRequestInspector(JsonFactory json) {
        this.json = json;
    }

    public InspectedRequest inspect(Buffer body, boolean injectUsage) {
        byte[] bytes = body.getBytes();
        Scan scan = scan(bytes);
        if (scan == null) {
            return new InspectedRequest(false, null, false, false, false, body);
        }
        if (!injectUsage || !scan.stream || scan.includeUsage) {
            return new InspectedRequest(true, scan.model, scan.stream, scan.includeUsage, false, body);
        }
        Buffer edited;
        if (scan.streamOptionsNullAt >= 0) {
            edited = splice(bytes, scan.streamOptionsNullAt, 4, STREAM_OPTIONS_OBJECT, false);
        } else if (scan.includeUsageFalseAt >= 0) {
            edited = splice(bytes, scan.includeUsageFalseAt, 5, TRUE, false);
        } else if (scan.streamOptionsObjectAt >= 0) {
            edited = splice(bytes, scan.streamOptionsObjectAt + 1, 0, INCLUDE_USAGE_MEMBER, !scan.streamOptionsEmpty);
        } else if (scan.streamOptionsOtherType) {
            // stream_options of a wrong type: the server will reject it anyway; do not touch it
            return new InspectedRequest(true, scan.model, true, false, false, body);
        } else {
            edited = splice(bytes, scan.objectAt + 1, 0, STREAM_OPTIONS_MEMBER, false);
        }
        return new InspectedRequest(true, scan.model, true, false, true, edited);
    }

    private static Buffer splice(byte[] bytes, long at, int removed, byte[] inserted, boolean comma) {
        int pos = (int) at;
        Buffer out = Buffer.buffer(bytes.length + inserted.length + 1);
        out.appendBytes(bytes, 0, pos);
        out.appendBytes(inserted);
        if (comma) {
            out.appendByte((byte) ',');
        }
        out.appendBytes(bytes, pos + removed, bytes.length - pos - removed);
        return out;
    }

    private static final class Scan {
        long objectAt = -1;
        String model;
        boolean stream;
        boolean includeUsage;
        long includeUsageFalseAt = -1;
        long streamOptionsObjectAt = -1;
        boolean streamOptionsEmpty = true;
        long streamOptionsNullAt = -1;
        boolean streamOptionsOtherType;
    }

    private Scan scan(byte[] bytes) {
        try (JsonParser p = json.createParser(bytes)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            Scan s = new Scan();
            s.objectAt = p.currentTokenLocation().getByteOffset();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                switch (name) {
                    case "model" -> {
                        if (v == JsonToken.VALUE_STRING) {
                            s.model = p.getText();
                        }
                    }
                    case "stream" -> s.stream = v == JsonToken.VALUE_TRUE;
                    case "stream_options" -> readStreamOptions(p, v, s);
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                return null;
            }
            return s;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static void readStreamOptions(JsonParser p, JsonToken v, Scan s) throws IOException {
        if (v == JsonToken.VALUE_NULL) {
            s.streamOptionsNullAt = p.currentTokenLocation().getByteOffset();
            return;
        }
        if (v != JsonToken.START_OBJECT) {
            s.streamOptionsOtherType = true;
            p.skipChildren();
            return;
        }
        s.streamOptionsObjectAt = p.currentTokenLocation().getByteOffset();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            s.streamOptionsEmpty = false;
            String name = p.currentName();
            JsonToken t = p.nextToken();
            if ("include_usage".equals(name)) {
                if (t == JsonToken.VALUE_TRUE) {
                    s.includeUsage = true;
                } else if (t == JsonToken.VALUE_FALSE) {
                    s.includeUsageFalseAt = p.currentTokenLocation().getByteOffset();
                }
            }
            p.skipChildren();
        }
    }
}
