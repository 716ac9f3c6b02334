package dev.llmsidecar.wire.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class UsageMemberFinderTest {

    static final ObjectMapper JSON = new ObjectMapper();

    /** Feeds {@code s} in pieces cut at {@code cuts}; returns the text with every reported range removed. */
    static String removed(String s, int... cuts) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        List<long[]> ranges = new ArrayList<>();
        UsageMemberFinder finder = new UsageMemberFinder((from, to) -> ranges.add(new long[] {from, to}));
        int from = 0;
        for (int cut : cuts) {
            finder.feed(bytes, from, cut);
            for (long[] r : ranges) {
                assertThat(r[0]).as("no range starts before what was decided").isGreaterThanOrEqualTo(0);
            }
            from = cut;
        }
        finder.feed(bytes, from, bytes.length);
        StringBuilder out = new StringBuilder();
        byte[] kept = new byte[bytes.length];
        int n = 0;
        int pos = 0;
        for (long[] r : ranges) {
            for (; pos < r[0]; pos++) {
                kept[n++] = bytes[pos];
            }
            pos = (int) r[1];
        }
        for (; pos < bytes.length; pos++) {
            kept[n++] = bytes[pos];
        }
        return out.append(new String(kept, 0, n, StandardCharsets.UTF_8)).toString();
    }

    @Test
    void removesTheMemberWithOneCommaWhereverItIs() {
        assertThat(removed("data: {\"a\":1,\"usage\":null}\n\n")).isEqualTo("data: {\"a\":1}\n\n");
        assertThat(removed("data: {\"usage\":null,\"a\":1}\n\n")).isEqualTo("data: {\"a\":1}\n\n");
        assertThat(removed("data: {\"a\":1,\"usage\":{\"b\":[1,{\"c\":\"}\"}]},\"d\":2}\n\n"))
                .isEqualTo("data: {\"a\":1,\"d\":2}\n\n");
        assertThat(removed("data: { \"a\": 1, \"usage\": {\"x\": 2} }\n\n")).isEqualTo("data: { \"a\": 1 }\n\n");
        assertThat(removed("data: { \"usage\" : \"s\" ,  \"a\": 1 }\n\n")).isEqualTo("data: { \"a\": 1 }\n\n");
        assertThat(removed("data:{\"usage\":null}\r\n\r\n")).isEqualTo("data:{}\r\n\r\n");
    }

    @Test
    void leavesLookalikesAlone() {
        for (String s : List.of(
                "data: {\"a\":\"\\\"usage\\\":null\",\"b\":{\"usage\":1},\"usages\":2,\"usag\":3}\n\n",
                "data: {\"choices\":[{\"usage\":null}],\"x\":[\"usage\"]}\n\n",
                ": {\"usage\":null}\n\nevent: usage\nid: {\"usage\":1}\n\n",
                "data: [\"usage\",{\"usage\":1}]\n\n",
                "data: {\"usa\\u0067e\":1}\n\n")) {
            assertThat(removed(s)).as(s).isEqualTo(s);
        }
    }

    @Test
    void aLeadingByteOrderMarkDoesNotHideTheFirstDataLine() {
        // the SSE splitter ignores a leading BOM (WHATWG), so the first event is a chunk: its usage member goes too
        String s = "\uFEFFdata: {\"a\":1,\"usage\":null}\n\ndata: {\"usage\":null,\"b\":2}\n\n";
        for (int cut = 1; cut <= 4; cut++) {
            assertThat(removed(s, cut)).as("cut %d", cut).isEqualTo("\uFEFFdata: {\"a\":1}\n\ndata: {\"b\":2}\n\n");
        }
        // only a whole leading BOM: "\u00EF" is not one, so that line is not a data line
        String notBom = "\u00EFdata: {\"usage\":null}\n\n";
        assertThat(removed(notBom)).isEqualTo(notBom);
    }

    /** " data:" is no data line (a field name is never preceded by a blank), so the object is not continued. */
    @Test
    void aLineWithABlankBeforeDataDoesNotContinueTheObject() {
        String s = "data: {\"a\":1,\n data: \"usage\":null}\n\n";
        assertThat(removed(s)).isEqualTo(s);
    }

    /** An object spread over contiguous data lines (the SSE client joins them with LF) loses its member as one. */
    @Test
    void aMemberOnTheNextDataLineOfTheSameObjectIsCut() {
        String s = "data: {\"a\":1,\ndata: \"usage\":null}\n\n";
        assertThat(removed(s)).isEqualTo("data: {\"a\":1\ndata: }\n\n");
    }

    @Test
    void agreesWithJacksonOnRandomObjectsAtEverySplit() throws Exception {
        Random random = new Random(42);
        for (int round = 0; round < 300; round++) {
            ObjectNode object = JSON.createObjectNode();
            int members = 1 + random.nextInt(5);
            int usageAt = random.nextInt(members + 1); // == members: no usage member
            for (int i = 0; i < members; i++) {
                if (i == usageAt) {
                    object.set("usage", randomValue(random, 2));
                } else {
                    object.set(randomName(random), randomValue(random, 2));
                }
            }
            String json = random.nextBoolean() ? JSON.writeValueAsString(object)
                    : JSON.writerWithDefaultPrettyPrinter().writeValueAsString(object).replace("\n", " ");
            ObjectNode expected = object.deepCopy();
            expected.remove("usage");
            String event = "data: " + json + "\n\n";
            int n = event.getBytes(StandardCharsets.UTF_8).length;
            for (int cut = 1; cut < n; cut += 1 + random.nextInt(7)) {
                String out = removed(event, cut);
                assertThat(out).startsWith("data: ").endsWith("\n\n");
                JsonNode parsed = JSON.readTree(out.substring(6, out.length() - 2));
                assertThat(parsed).as(json).isEqualTo(expected);
                if (usageAt == members) {
                    assertThat(out).isEqualTo(event);
                }
            }
        }
    }

    static String randomName(Random random) {
        String[] names = {"id", "choices", "usag", "usages", "model", "u\"sage", "object", "x"};
        return names[random.nextInt(names.length)] + random.nextInt(100);
    }

    static JsonNode randomValue(Random random, int depth) {
        switch (random.nextInt(depth > 0 ? 6 : 4)) {
            case 0:
                return JSON.getNodeFactory().nullNode();
            case 1:
                return JSON.getNodeFactory().numberNode(random.nextInt(1000) - 500);
            case 2:
                return JSON.getNodeFactory().textNode("s\"{}[],:usage" + random.nextInt(10));
            case 3:
                return JSON.getNodeFactory().booleanNode(random.nextBoolean());
            case 4: {
                var array = JSON.createArrayNode();
                for (int i = random.nextInt(3); i > 0; i--) {
                    array.add(randomValue(random, depth - 1));
                }
                return array;
            }
            default: {
                var obj = JSON.createObjectNode();
                for (int i = random.nextInt(3); i > 0; i--) {
                    obj.set(random.nextBoolean() ? "usage" : "k" + i, randomValue(random, depth - 1));
                }
                return obj;
            }
        }
    }
}
