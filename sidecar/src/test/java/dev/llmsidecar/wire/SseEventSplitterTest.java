package dev.llmsidecar.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SseEventSplitterTest {

    /** A read as sockets deliver it: direct memory, copied into the splitter's block (never released: a test). */
    static ByteBuf direct(String s) {
        return Unpooled.directBuffer().writeBytes(s.getBytes(StandardCharsets.UTF_8));
    }

    record Event(String data, String type, boolean oversize, long start, long end) {
    }

    static List<Event> split(String stream, int... cuts) {
        return split(stream.getBytes(StandardCharsets.UTF_8), cuts);
    }

    static List<Event> split(byte[] bytes, int... cuts) {
        List<Event> events = new ArrayList<>();
        SseEventSplitter splitter = new SseEventSplitter((data, len, type, oversize, start, end) ->
                events.add(new Event(new String(data, 0, len, StandardCharsets.UTF_8), type, oversize, start, end)),
                1 << 20);
        int from = 0;
        for (int cut : cuts) {
            splitter.feed(Unpooled.wrappedBuffer(bytes, from, cut - from));
            from = cut;
        }
        splitter.feed(Unpooled.wrappedBuffer(bytes, from, bytes.length - from));
        return events;
    }

    @Test
    void splitsEventsWithCommentsMultilineDataAndEventTypes() {
        String s = ": keep-alive\n\ndata: {\"a\":1}\n\nevent: delta\ndata: line1\ndata:line2\n\ndata: [DONE]\n\n";
        List<Event> events = split(s);
        assertThat(events).extracting(Event::data).containsExactly("", "{\"a\":1}", "line1\nline2", "[DONE]");
        assertThat(events.get(2).type()).isEqualTo("delta");
        assertThat(events.get(3).end()).isEqualTo(s.getBytes(StandardCharsets.UTF_8).length);
        assertThat(events.get(1).start()).isEqualTo(events.get(0).end());
    }

    @Test
    void everySplitPointGivesTheSameEventsForLfCrlfAndCr() {
        for (String eol : List.of("\n", "\r\n", "\r")) {
            String s = "data: {\"x\":\"é😀\"}" + eol + eol + ": c" + eol + "data: b" + eol + eol + "data: [DONE]" + eol + eol;
            List<Event> whole = split(s);
            // the comment line belongs to the "b" event: no empty line separates them
            assertThat(whole).extracting(Event::data).containsExactly("{\"x\":\"é😀\"}", "b", "[DONE]");
            int n = s.getBytes(StandardCharsets.UTF_8).length;
            for (int i = 1; i < n; i++) {
                for (int j = i; j < n; j += 7) {
                    List<Event> parts = split(s, i, j);
                    assertThat(parts).extracting(Event::data).as("eol %s cuts %d,%d", eol.length(), i, j)
                            .isEqualTo(whole.stream().map(Event::data).toList());
                }
            }
        }
    }

    @Test
    void aStreamHoldsBuffersOnlyWhileAnEventIsIncompleteAndInterleavedStreamsStayApart() {
        List<String> a = new ArrayList<>();
        List<String> b = new ArrayList<>();
        SseEventSplitter sa = new SseEventSplitter((d, l, t, o, s0, e) -> a.add(new String(d, 0, l, StandardCharsets.UTF_8)),
                1 << 20);
        SseEventSplitter sb = new SseEventSplitter((d, l, t, o, s0, e) -> b.add(new String(d, 0, l, StandardCharsets.UTF_8)),
                1 << 20);
        assertThat(sa.heldBufferBytes()).isZero();
        sa.feed(direct("data: a1\n\n"));
        // thousands of open streams sit between events: none of them keeps a buffer then
        assertThat(sa.heldBufferBytes()).isZero();
        sa.feed(direct("data: a2-first\ndata: a2-sec"));
        assertThat(sa.heldBufferBytes()).isPositive();
        // another stream on the same thread, fed while the first one is in the middle of an event
        sb.feed(direct("data: b1\n\ndata: b2-part"));
        sa.feed(direct("ond\n\ndata: a3\n\n"));
        assertThat(sa.heldBufferBytes()).isZero();
        sb.feed(direct("-end\n\n"));
        assertThat(sb.heldBufferBytes()).isZero();
        assertThat(a).containsExactly("a1", "a2-first\na2-second", "a3");
        assertThat(b).containsExactly("b1", "b2-part-end");
    }

    @Test
    void aStreamFedFromInsideAnotherStreamsListenerStillSplitsCorrectly() {
        List<String> inner = new ArrayList<>();
        SseEventSplitter nested = new SseEventSplitter((d, l, t, o, s0, e) ->
                inner.add(new String(d, 0, l, StandardCharsets.UTF_8)), 1 << 20);
        List<String> outer = new ArrayList<>();
        SseEventSplitter first = new SseEventSplitter((d, l, t, o, s0, e) -> {
            nested.feed(direct("data: inner-" + outer.size() + "\n\n"));
            outer.add(new String(d, 0, l, StandardCharsets.UTF_8));
        }, 1 << 20);
        first.feed(direct("data: x\n\ndata: y\n\n"));
        assertThat(outer).containsExactly("x", "y");
        assertThat(inner).containsExactly("inner-0", "inner-1");
    }

    @Test
    void aListenerThatThrowsLeavesTheThreadsBuffersUsable() {
        SseEventSplitter failing = new SseEventSplitter((d, l, t, o, s0, e) -> {
            throw new IllegalStateException("listener bug");
        }, 1 << 20);
        try {
            failing.feed(direct("data: x\n\n"));
        } catch (IllegalStateException expected) {
            // the decoder's caller would count it; the scratch must be free again
        }
        assertThat(split("data: after\n\n")).extracting(Event::data).containsExactly("after");
        SseEventSplitter[] self = new SseEventSplitter[1];
        self[0] = new SseEventSplitter((d, l, t, o, s0, e) -> self[0].feed(direct("data: again\n\n")), 1 << 20);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> self[0].feed(direct("data: y\n\n")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("its own listener");
        assertThat(split("data: still\n\n")).extracting(Event::data).containsExactly("still");
    }

    @Test
    void crlfEventEndIsExtendedToIncludeTheLfEvenAcrossReads() {
        List<Long> extended = new ArrayList<>();
        List<Long> ends = new ArrayList<>();
        SseEventSplitter splitter = new SseEventSplitter(new SseEventSplitter.Listener() {
            @Override
            public void onEvent(byte[] d, int l, String t, boolean o, long start, long end) {
                ends.add(end);
            }

            @Override
            public void onEventEndExtended(long newEnd, boolean crlfLines) {
                extended.add(newEnd);
            }
        }, 1024);
        splitter.feed(direct("data: a\r\n\r"));
        assertThat(ends).containsExactly(10L);
        splitter.feed(direct("\ndata: b\r\n\r\n"));
        assertThat(extended).containsExactly(11L, 22L);
        assertThat(splitter.lastBoundary()).isEqualTo(22L);
    }

    @Test
    void aLeadingByteOrderMarkIsIgnoredEvenWhenSplitAcrossReads() {
        // WHATWG: "One leading U+FEFF BYTE ORDER MARK character must be ignored if any are present."
        String s = "\uFEFFdata: first\n\ndata: second\n\n";
        for (int cut = 0; cut <= 4; cut++) {
            List<Event> events = cut == 0 ? split(s) : split(s, cut);
            assertThat(events).as("cut %d", cut).extracting(Event::data).containsExactly("first", "second");
            assertThat(events.get(0).start()).isZero();
            assertThat(events.get(0).end()).isEqualTo(3 + "data: first\n\n".length());
        }
        // only a leading one, and only a whole one: anything else is line bytes
        assertThat(split("data: a\n\n\uFEFFdata: b\n\n")).extracting(Event::data).containsExactly("a", "");
        byte[] partialBom = {(byte) 0xEF, (byte) 0xBB, 'd', 'a', 't', 'a', ':', 'x', '\n', '\n'};
        for (int cut = 1; cut <= 3; cut++) {
            assertThat(split(partialBom, cut)).as("cut %d", cut).extracting(Event::data).containsExactly("");
        }
    }

    @Test
    void oversizeEventIsReportedWithoutData() {
        List<Event> events = new ArrayList<>();
        SseEventSplitter splitter = new SseEventSplitter((data, len, type, oversize, start, end) ->
                events.add(new Event(new String(data, 0, len, StandardCharsets.UTF_8), type, oversize, start, end)), 16);
        splitter.feed(direct("data: 0123456789abcdefghij\n\ndata: ok\n\n"));
        assertThat(events).hasSize(2);
        assertThat(events.get(0).oversize()).isTrue();
        assertThat(events.get(1).data()).isEqualTo("ok");
        assertThat(events.get(1).oversize()).isFalse();
    }
}
