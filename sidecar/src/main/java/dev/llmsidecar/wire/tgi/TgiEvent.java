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
        return JsonReads.parseObject(json, bytes, offset, length, false, Reader::new);
    }

    private static final class Reader implements JsonReads.ObjectReader<TgiEvent> {
        boolean token;
        boolean error;
        String finish;
        long generated = -1;
        long input = -1;

        @Override
        public void member(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "token" -> token = JsonReads.isObject(p, v);
                case "error" -> error = JsonReads.nonNull(p, v);
                case "details" -> JsonReads.members(p, v, this::detailsMember);
                default -> p.skipChildren();
            }
        }

        private void detailsMember(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "finish_reason" -> finish = JsonReads.string(p, v);
                case "generated_tokens" -> generated = JsonReads.longValue(p, v);
                case "input_length" -> input = JsonReads.longValue(p, v);
                default -> p.skipChildren();
            }
        }

        @Override
        public TgiEvent build() {
            return new TgiEvent(token, finish, generated, input, error);
        }
    }
}
