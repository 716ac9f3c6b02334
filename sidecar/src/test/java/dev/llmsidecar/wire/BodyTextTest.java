package dev.llmsidecar.wire;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A string's text hashed where it lies in the body's bytes must be the digest of the text the parser decodes: every
 * escape JSON has, characters of one to four UTF-8 bytes, surrogates paired and alone, and a body gathered in parts cut
 * anywhere (a string, an escape, a character across two buffers).
 */
class BodyTextTest {

    static final JsonFactory JSON = new JsonFactory();
    static final long KEY = 0x0b0d_7e47L;

    /** Pieces of JSON string content and the text each stands for. */
    static final String[][] PIECES = {
        {"a", "a"}, {"hello world ", "hello world "}, {"0123456789abcdefghijklmnopqrstuvwxyz", null},
        {"\\n", "\n"}, {"\\t", "\t"}, {"\\r", "\r"}, {"\\b", "\b"}, {"\\f", "\f"}, {"\\\"", "\""}, {"\\\\", "\\"},
        {"\\/", "/"}, {"\\u0041", "A"}, {"\\u00e9", "é"}, {"é", "é"}, {"\\u20AC", "€"}, {"€", "€"}, {"中文", "中文"},
        {"\\uD83D\\uDE00", "😀"}, {"😀", "😀"}, {"\\ud83d\\ude00", "😀"}, {"\\uD83D", "\uD83D"},
        {"\\uDE00", "\uDE00"}, {"\\uD83Dx", "\uD83Dx"}, {"\\uD83D\\n", "\uD83D\n"}, {"\\u0000", "\u0000"},
    };

    /** The digest of {@code text} from its characters, as one message. */
    static long ofCharacters(String text) {
        HistoryDigest d = new HistoryDigest(KEY);
        d.text(text.toCharArray(), 0, text.length());
        d.endMessage(TurnCounter.Message.USER);
        return d.value();
    }

    /** The digest of the value of {@code json}'s member {@code content}, hashed in place in {@code body}. */
    static long inPlace(String json, BodyText body) throws Exception {
        HistoryDigest d = new HistoryDigest(KEY);
        try (JsonParser p = JSON.createParser(json.getBytes(StandardCharsets.UTF_8))) {
            JsonToken t;
            while ((t = p.nextToken()) != JsonToken.VALUE_STRING || !p.currentName().equals("content")) {
                assertThat(t).isNotNull();
            }
            assertThat(body.digest(p.currentTokenLocation().getByteOffset(), d)).isTrue();
            assertThat(p.getText()).as("the parser reads it too").isNotNull();
        }
        d.endMessage(TurnCounter.Message.USER);
        return d.value();
    }

    /** {@code bytes} as a composite of buffers cut at {@code cuts}, as the proxy gathers a body. */
    static ByteBuf gathered(byte[] bytes, int[] cuts) {
        CompositeByteBuf c = Unpooled.compositeBuffer(Integer.MAX_VALUE);
        int from = 0;
        for (int cut : cuts) {
            c.addComponent(true, Unpooled.directBuffer(cut - from).writeBytes(bytes, from, cut - from));
            from = cut;
        }
        c.addComponent(true, Unpooled.directBuffer(bytes.length - from).writeBytes(bytes, from, bytes.length - from));
        return c;
    }

    @Test
    void everyEscapeAndCharacterHashesAsTheTextItStandsFor() throws Exception {
        for (String[] piece : PIECES) {
            String text = piece[1] == null ? piece[0] : piece[1];
            String json = "{\"content\":\"" + piece[0] + "\"}";
            assertThat(inPlace(json, BodyText.of(json.getBytes(StandardCharsets.UTF_8)))).as(piece[0])
                    .isEqualTo(ofCharacters(text));
        }
    }

    @Test
    void randomTextsInBodiesCutAnywhereHashAsTheirDecodedText() throws Exception {
        Random random = new Random(45);
        for (int n = 0; n < 3000; n++) {
            StringBuilder json = new StringBuilder();
            StringBuilder text = new StringBuilder();
            int pieces = random.nextInt(n < 1500 ? 12 : 200);
            for (int i = 0; i < pieces; i++) {
                String[] piece = PIECES[random.nextInt(PIECES.length)];
                json.append(piece[0]);
                text.append(piece[1] == null ? piece[0] : piece[1]);
            }
            // a UTF-8 byte-order mark now and then: the parser counts its offsets from the body's first byte
            String body = (n % 7 == 0 ? "\uFEFF" : "") + "{\"model\":\"m\", \"content\" :  \"" + json + "\"}";
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            int[] cuts = random.ints(random.nextInt(5), 0, bytes.length + 1).sorted().toArray();
            ByteBuf buffers = gathered(bytes, cuts);
            try {
                long expected = ofCharacters(text.toString());
                assertThat(inPlace(body, BodyText.of(buffers))).as("%s cut at %s", json,
                        java.util.Arrays.toString(cuts)).isEqualTo(expected);
            } finally {
                buffers.release();
            }
        }
    }

    @Test
    void aBodyInMoreBuffersThanTheViewsAllowIsReadFromCharactersToTheSameConversation() {
        StringBuilder messages = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            messages.append(i == 0 ? "" : ",").append("{\"role\":\"").append(i % 2 == 0 ? "user" : "assistant")
                    .append("\",\"content\":\"turn ").append(i).append(" caf\\u00e9 é\\n").append("x".repeat(40))
                    .append("\"}");
        }
        byte[] bytes = ("{\"model\":\"m\",\"messages\":[" + messages + "]}").getBytes(StandardCharsets.UTF_8);
        RequestFields fields = new RequestFields(JSON, ConversationShape.MESSAGES);
        int[] everyTwoBytes = java.util.stream.IntStream.iterate(2, c -> c < bytes.length, c -> c + 2).toArray();
        int[] fewerThanTheLimit = java.util.stream.IntStream.rangeClosed(1, BodyText.MAX_PARTS - 1)
                .map(k -> k * bytes.length / BodyText.MAX_PARTS).distinct().toArray();
        ByteBuf whole = gathered(bytes, new int[0]);
        ByteBuf many = gathered(bytes, everyTwoBytes);
        ByteBuf atTheLimit = gathered(bytes, fewerThanTheLimit);
        try {
            assertThat(many.nioBufferCount()).isGreaterThan(BodyText.MAX_PARTS);
            assertThat(BodyText.of(many)).as("no views past the limit").isNull();
            assertThat(atTheLimit.nioBufferCount()).isEqualTo(BodyText.MAX_PARTS);
            assertThat(BodyText.of(atTheLimit)).isNotNull();
            ConversationReader.Conversation expected =
                    fields.inspect(io.vertx.core.buffer.Buffer.buffer(whole), false).conversation();
            assertThat(expected.key()).isNotZero();
            assertThat(fields.inspect(io.vertx.core.buffer.Buffer.buffer(many), false).conversation())
                    .isEqualTo(expected);
            assertThat(fields.inspect(io.vertx.core.buffer.Buffer.buffer(atTheLimit), false).conversation())
                    .isEqualTo(expected);
        } finally {
            whole.release();
            many.release();
            atTheLimit.release();
        }
    }

    @Test
    void nothingIsHashedWhereNoStringStarts() {
        byte[] bytes = "{\"content\":\"abc\"}".getBytes(StandardCharsets.UTF_8);
        HistoryDigest d = new HistoryDigest(KEY);
        long before = state(d);
        assertThat(BodyText.of(bytes).digest(2, d)).isFalse(); // 'c' of "content"
        assertThat(BodyText.of(bytes).digest(bytes.length, d)).isFalse(); // past the end
        assertThat(state(d)).isEqualTo(before);
    }

    static long state(HistoryDigest d) {
        List<Long> all = new ArrayList<>();
        for (long v : d.mark()) {
            all.add(v);
        }
        return all.hashCode();
    }
}
