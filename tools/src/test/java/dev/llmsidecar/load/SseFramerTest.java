package dev.llmsidecar.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** SSE framing across reads: every split of the bytes gives the same events, each at its completing read. */
class SseFramerTest {

    record Event(String text, long nanos) {
    }

    static List<Event> frame(String stream, int... cuts) {
        List<Event> out = new ArrayList<>();
        SseFramer f = new SseFramer((b, from, to, nanos) -> out.add(new Event(
                new String(b, from, to - from, StandardCharsets.UTF_8), nanos)));
        byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
        int start = 0;
        long read = 0;
        for (int cut : cuts) {
            f.feed(Buffer.buffer().appendBytes(bytes, start, cut - start), ++read);
            start = cut;
        }
        f.feed(Buffer.buffer().appendBytes(bytes, start, bytes.length - start), ++read);
        return out;
    }

    @Test
    void eventsEndAtABlankLineWhateverTheReads() {
        String s = "data: {\"a\":1}\n\ndata: {\"b\":2}\r\n\r\n: comment\n\ndata: [DONE]\n\n";
        List<String> whole = frame(s).stream().map(Event::text).toList();
        assertThat(whole).containsExactly("data: {\"a\":1}", "data: {\"b\":2}\r", ": comment", "data: [DONE]");
        for (int i = 1; i < s.length(); i++) {
            for (int j = i + 1; j < s.length(); j += 3) {
                assertThat(frame(s, i, j).stream().map(Event::text).toList()).as("cuts %d %d", i, j)
                        .isEqualTo(whole);
            }
        }
    }

    @Test
    void anEventCarriesTheTimeOfTheReadThatCompletedIt() {
        String s = "data: one\n\ndata: two\n\n";
        // read 1: "data: one\n\ndata: ", read 2: "two", read 3: "\n\n"
        List<Event> events = frame(s, 17, 20);
        assertThat(events).containsExactly(new Event("data: one", 1), new Event("data: two", 3));
        // a CRLF blank line split after "\n\r" waits for the next read to decide
        assertThat(frame("data: x\r\n\r\n", 10)).containsExactly(new Event("data: x\r", 2));
    }

    @Test
    void dataJoinsTheDataLines() {
        byte[] b = "event: delta\r\ndata: {\"x\":\r\ndata:1}\r\nid: 7".getBytes(StandardCharsets.UTF_8);
        assertThat(SseFramer.data(b, 0, b.length)).isEqualTo("{\"x\":\n1}");
        byte[] comment = ": keep-alive".getBytes(StandardCharsets.UTF_8);
        assertThat(SseFramer.data(comment, 0, comment.length)).isNull();
        byte[] done = "xxdata: [DONE]yy".getBytes(StandardCharsets.UTF_8);
        assertThat(SseFramer.data(done, 2, done.length - 2)).isEqualTo("[DONE]");
    }
}
