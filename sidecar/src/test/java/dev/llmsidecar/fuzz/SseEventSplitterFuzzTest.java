package dev.llmsidecar.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.fuzz.ReferenceSseSplitter.Event;
import dev.llmsidecar.wire.SseEventSplitter;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@link SseEventSplitter} against {@link ReferenceSseSplitter}: for the same bytes cut into any reads, fed through
 * either {@code feed} method, the same events with the same offsets. A second splitter on the same thread is fed the
 * same reads from inside the first one's listener (the thread's scratch is then busy), and must agree too.
 */
class SseEventSplitterFuzzTest {

    /** Limits worth telling apart: none in practice, and small ones the fuzzer can cross. */
    private static final int UNLIMITED = 1 << 20;

    @FuzzTest
    // libFuzzer dictionary syntax: escapes are written out (a raw line end would end the entry)
    @DictionaryEntries({"data:", "data: ", "event: ", "error: ", ": ping", "id: ", "\\r\\n", "\\r\\n\\r\\n",
            "\\n\\n", "\\xEF\\xBB\\xBF", "[DONE]"})
    void eventsMatchTheReferenceForAnySplit(FuzzedDataProvider data) {
        int maxEventBytes = data.consumeBoolean() ? data.consumeInt(0, 64) : UNLIMITED;
        long arrayReads = data.consumeLong(0, Long.MAX_VALUE); // bit i: read i goes through feed(byte[], from, to)
        ReadSplits splits = ReadSplits.consume(data, 64);
        byte[] stream = data.consumeRemainingAsBytes();

        List<Event> expected = ReferenceSseSplitter.split(stream, maxEventBytes);
        List<int[]> reads = splits.reads(stream.length);

        Recorder nested = new Recorder();
        SseEventSplitter nestedSplitter = new SseEventSplitter(nested, maxEventBytes);
        int[] nestedReads = {0};
        Recorder outer = new Recorder() {
            @Override
            public void onEvent(byte[] d, int length, String type, boolean oversize, long start, long end) {
                super.onEvent(d, length, type, oversize, start, end);
                // the other stream's next read arrives while this one's listener runs
                if (nestedReads[0] < reads.size()) {
                    feed(nestedSplitter, stream, reads.get(nestedReads[0]), nestedReads[0], arrayReads);
                    nestedReads[0]++;
                }
            }
        };
        SseEventSplitter splitter = new SseEventSplitter(outer, maxEventBytes);

        for (int i = 0; i < reads.size(); i++) {
            int[] read = reads.get(i);
            feed(splitter, stream, read, i, arrayReads);
            Expect.that(splitter.offset() == read[1], () -> "offset " + splitter.offset() + " after " + read[1]);
            Expect.that(splitter.lastBoundary() == outer.lastEnd(),
                    () -> "last boundary " + splitter.lastBoundary() + ", last event end " + outer.lastEnd());
            Expect.that(splitter.lastBoundary() != splitter.offset() || splitter.heldBufferBytes() == 0,
                    () -> "held between events: " + splitter.heldBufferBytes());
        }
        for (; nestedReads[0] < reads.size(); nestedReads[0]++) {
            feed(nestedSplitter, stream, reads.get(nestedReads[0]), nestedReads[0], arrayReads);
        }

        assertThat(outer.events).as(() -> "events of " + Reads.text(stream) + " in reads " + splits)
                .isEqualTo(expected);
        assertThat(nested.events).as("events fed from a listener").isEqualTo(expected);
        assertThat(nestedSplitter.offset()).isEqualTo(stream.length);
    }

    /**
     * One read: a heap ByteBuf (read in place), a direct one (copied into the thread's block), or a range of a larger
     * array; always with bytes around it that must not be read.
     */
    private static void feed(SseEventSplitter splitter, byte[] stream, int[] read, int index, long arrayReads) {
        int length = read[1] - read[0];
        if ((arrayReads >>> (index % 63) & 1) == 0) {
            if (index % 2 == 0) {
                splitter.feed(Unpooled.wrappedBuffer(stream, read[0], length));
            } else {
                ByteBuf direct = new dev.llmsidecar.support.Reads().read(stream, read[0], read[1]);
                splitter.feed(direct);
                direct.release();
            }
            return;
        }
        byte[] padded = new byte[length + 6];
        Arrays.fill(padded, (byte) '\n');
        System.arraycopy(stream, read[0], padded, 3, length);
        splitter.feed(padded, 3, 3 + length);
    }

    /** Records events; a CRLF extension must follow the event it extends, by exactly its LF. */
    private static class Recorder implements SseEventSplitter.Listener {
        final List<Event> events = new ArrayList<>();

        long lastEnd() {
            return events.isEmpty() ? 0 : events.get(events.size() - 1).end();
        }

        @Override
        public void onEvent(byte[] d, int length, String type, boolean oversize, long start, long end) {
            Expect.that(start == lastEnd(), () -> "event start " + start + " after an event ending at " + lastEnd());
            events.add(new Event(new String(d, 0, length, StandardCharsets.ISO_8859_1), type, oversize, start, end));
        }

        @Override
        public void onEventEndExtended(long newEnd, boolean crlfLines) {
            Expect.that(!events.isEmpty(), () -> "an extension without an event");
            Event last = events.remove(events.size() - 1);
            Expect.that(newEnd == last.end() + 1, () -> "extended from " + last.end() + " to " + newEnd);
            events.add(new Event(last.data(), last.type(), last.oversize(), last.start(), newEnd));
        }
    }
}
