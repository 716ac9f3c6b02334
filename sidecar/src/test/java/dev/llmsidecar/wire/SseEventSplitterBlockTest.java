package dev.llmsidecar.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The splitter copies reads in 8 KB blocks and appends whole runs of line bytes: a stream must split into the same
 * events, offsets and oversize flags whether it comes in one read, byte by byte, or in random pieces larger and
 * smaller than a block.
 */
class SseEventSplitterBlockTest {

    record Event(String data, String type, boolean oversize, long start, long end) {
    }

    static List<Event> split(byte[] bytes, int maxEventBytes, int[] pieces) {
        List<Event> events = new ArrayList<>();
        SseEventSplitter splitter = new SseEventSplitter((data, len, type, oversize, start, end) ->
                events.add(new Event(new String(data, 0, len, StandardCharsets.UTF_8), type, oversize, start, end)),
                maxEventBytes);
        int from = 0;
        int k = 0;
        while (from < bytes.length) {
            int len = Math.min(bytes.length - from, pieces[k++ % pieces.length]);
            // direct, as sockets read: copied block by block (a heap buffer is read in place)
            ByteBuf read = Unpooled.directBuffer(len).writeBytes(bytes, from, len);
            splitter.feed(read);
            read.release();
            from += len;
        }
        return events;
    }

    @Test
    void anyReadBoundariesGiveTheSameEvents() {
        StringBuilder sb = new StringBuilder();
        Random random = new Random(3);
        String[] eols = {"\n", "\r\n", "\r"};
        for (int i = 0; i < 400; i++) {
            String eol = eols[random.nextInt(eols.length)];
            int size = random.nextInt(10) == 0 ? 5000 + random.nextInt(20_000) : random.nextInt(300);
            sb.append(i % 7 == 0 ? ": comment" + eol : "").append(i % 5 == 0 ? "event: e" + i + eol : "")
                    .append("data: {\"i\":").append(i).append(",\"pad\":\"").append("x".repeat(size)).append("\"}")
                    .append(eol).append(eol);
        }
        byte[] bytes = sb.toString().getBytes(StandardCharsets.UTF_8);
        for (int max : new int[] {1 << 20, 4096}) {
            List<Event> whole = split(bytes, max, new int[] {bytes.length});
            assertThat(whole).hasSize(400);
            assertThat(split(bytes, max, new int[] {1})).isEqualTo(whole);
            assertThat(split(bytes, max, new int[] {8191, 8192, 8193, 3, 20_000, 17})).isEqualTo(whole);
            assertThat(whole.get(whole.size() - 1).end()).isEqualTo(bytes.length);
            if (max == 4096) {
                assertThat(whole).anyMatch(Event::oversize);
            }
        }
    }
}
