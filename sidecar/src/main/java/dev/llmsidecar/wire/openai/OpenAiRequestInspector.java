package dev.llmsidecar.wire.openai;


import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.llmsidecar.wire.ConversationReader;
import dev.llmsidecar.wire.ConversationShape;
import dev.llmsidecar.wire.JsonReads;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Reads model / stream / stream_options / priority from an OpenAI request body and describes the minimal textual edit (at
 * Jackson-reported byte offsets) that would turn stream_options.include_usage on; every other byte of the body is
 * left as the client sent it. An explicit {@code "include_usage": false}, or stream_options with members of its own
 * (vLLM's continuous_usage_stats, for one), is never edited; nor is a body in UTF-16 or UTF-32 (JSON between systems
 * is UTF-8, but Jackson, like Python's json, reads those too): it is read, and its usage is
 * {@link UsageRequest#NOT_APPLICABLE}.
 */
public final class OpenAiRequestInspector {

    private static final byte[] STREAM_OPTIONS_MEMBER =
            "\"stream_options\":{\"include_usage\":true},".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] INCLUDE_USAGE_MEMBER = "\"include_usage\":true".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STREAM_OPTIONS_OBJECT = "{\"include_usage\":true}".getBytes(StandardCharsets.US_ASCII);

    private final JsonFactory json;
    private final ConversationShape conversations;

    public OpenAiRequestInspector(JsonFactory json) {
        this(json, ConversationShape.NONE);
    }

    /** @param conversations MESSAGES: it also reads where the request sits in its conversation */
    public OpenAiRequestInspector(JsonFactory json, ConversationShape conversations) {
        this.json = json;
        this.conversations = conversations;
    }

    public OpenAiRequest inspect(Buffer body) {
        Scan scan = scan(body); // no copy of the body
        if (scan == null) {
            return OpenAiRequest.undecodable(body);
        }
        ConversationReader.Conversation conversation = scan.conversation == null ? null
                : scan.conversation.conversation();
        if (!scan.stream) {
            return new OpenAiRequest(true, scan.model, false, scan.priority, UsageRequest.NOT_APPLICABLE, null, body,
                    conversation);
        }
        UsageRequest usage;
        BodyEdit edit = null;
        if (scan.includeUsage == Boolean.TRUE) {
            usage = UsageRequest.ASKED;
        } else if (scan.includeUsage == Boolean.FALSE) {
            usage = UsageRequest.DECLINED;
        } else if (scan.streamOptionsOther) {
            usage = UsageRequest.OTHER_OPTIONS;
        } else if (scan.objectAt < 0) {
            usage = UsageRequest.NOT_APPLICABLE; // not UTF-8: Jackson reports no byte offsets to edit at
        } else {
            usage = UsageRequest.ABSENT;
            if (scan.streamOptionsNullAt >= 0) {
                edit = new BodyEdit(scan.streamOptionsNullAt, 4, STREAM_OPTIONS_OBJECT);
            } else if (scan.streamOptionsObjectAt >= 0) {
                edit = new BodyEdit(scan.streamOptionsObjectAt + 1, 0, INCLUDE_USAGE_MEMBER); // an empty object
            } else {
                edit = new BodyEdit(scan.objectAt + 1, 0, STREAM_OPTIONS_MEMBER);
            }
        }
        return new OpenAiRequest(true, scan.model, true, scan.priority, usage, edit, body, conversation);
    }

    private static final class Scan {
        int objectAt = -1;
        String model;
        boolean stream;
        Integer priority;
        Boolean includeUsage;           // null: absent, or not a boolean
        int streamOptionsObjectAt = -1;
        int streamOptionsNullAt = -1;
        boolean streamOptionsOther;     // not an object or null, or an object with other members
        ConversationReader conversation; // null: not read
    }

    private Scan scan(Buffer body) {
        return JsonReads.read(json, body, p -> {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            Scan s = new Scan();
            s.objectAt = offset(p);
            s.conversation = conversations.reader(body.getByteBuf());
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                if (s.conversation != null && conversations.read(s.conversation, name, p, v)) {
                    continue;
                }
                switch (name) {
                    case "model" -> {
                        if (v == JsonToken.VALUE_STRING) {
                            s.model = p.getText();
                        } else {
                            p.skipChildren(); // an object or array is not a model name
                        }
                    }
                    case "stream" -> s.stream = JsonReads.isTrue(p, v);
                    case "stream_options" -> readStreamOptions(p, v, s);
                    case "priority" -> s.priority = JsonReads.intOrNull(p, v);
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                return null;
            }
            return s;
        });
    }

    private static int offset(JsonParser p) {
        return (int) p.currentTokenLocation().getByteOffset();
    }

    private static void readStreamOptions(JsonParser p, JsonToken v, Scan s) throws IOException {
        if (v == JsonToken.VALUE_NULL) {
            s.streamOptionsNullAt = offset(p);
            return;
        }
        if (v != JsonToken.START_OBJECT) {
            s.streamOptionsOther = true;
            p.skipChildren();
            return;
        }
        s.streamOptionsObjectAt = offset(p);
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            if ("include_usage".equals(name) && (t == JsonToken.VALUE_TRUE || t == JsonToken.VALUE_FALSE)) {
                s.includeUsage = t == JsonToken.VALUE_TRUE;
            } else {
                s.streamOptionsOther = true;
            }
            p.skipChildren();
        }
    }
}
