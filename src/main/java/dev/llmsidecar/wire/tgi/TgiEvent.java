package dev.llmsidecar.wire.tgi;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.llmsidecar.wire.JsonReads;
import java.io.IOException;

/**
 * One TGI object: a {@code /generate_stream} event ({@code token}, and on the last one {@code details}) or a
 * {@code /generate} body ({@code generated_text}, optional {@code details}).
 *
 * @param token a {@code token} object is present (each stream event carries exactly one generated token)
 * @param finishReason {@code details.finish_reason}
 * @param generatedTokens {@code details.generated_tokens}, -1 when absent
 * @param inputLength {@code details.input_length} (newer TGI), -1 when absent
 * @param error an {@code error} member
 */
record TgiEvent(boolean token, String finishReason, long generatedTokens, long inputLength, boolean error) {

    static TgiEvent parse(JsonFactory json, byte[] bytes, int offset, int length) {
        try (JsonParser p = json.createParser(bytes, offset, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            boolean token = false;
            boolean error = false;
            String finish = null;
            long generated = -1;
            long input = -1;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                switch (name) {
                    case "token" -> {
                        token = v == JsonToken.START_OBJECT;
                        p.skipChildren();
                    }
                    case "error" -> {
                        error = v != JsonToken.VALUE_NULL;
                        p.skipChildren();
                    }
                    case "details" -> {
                        if (v != JsonToken.START_OBJECT) {
                            p.skipChildren();
                            break;
                        }
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String d = p.currentName();
                            JsonToken t = p.nextToken();
                            switch (d) {
                                case "finish_reason" -> finish = JsonReads.string(p, t);
                                case "generated_tokens" -> generated = JsonReads.longValue(p, t);
                                case "input_length" -> input = JsonReads.longValue(p, t);
                                default -> p.skipChildren();
                            }
                        }
                    }
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT) {
                return null;
            }
            return new TgiEvent(token, finish, generated, input, error);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
