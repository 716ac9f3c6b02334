package dev.llmsidecar.wire.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.support.Reads;
import dev.llmsidecar.support.RecordingSink;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class OpenAiSseDecoderTest {

    static final OpenAiChunkParser PARSER = new OpenAiChunkParser(new JsonFactory());

    static String ev(String json, String eol) {
        return "data: " + json + eol + eol;
    }

    static final String ROLE = "{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
            + "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}";
    static final String EMPTY = "{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":null}]}";

    static String content(String text, String finish) {
        return "{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\""
                + text + "\"},\"logprobs\":null,\"finish_reason\":" + (finish == null ? "null" : "\"" + finish + "\"")
                + "}]}";
    }

    static final String USAGE = "{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[],"
            + "\"usage\":{\"prompt_tokens\":12,\"total_tokens\":15,\"completion_tokens\":3,"
            + "\"prompt_tokens_details\":{\"cached_tokens\":8}}}";

    static String stream(String eol, boolean withUsage) {
        return ": ping" + eol + eol + ev(ROLE, eol) + ev(EMPTY, eol) + ev(content("Hel", null), eol)
                + ev(content("lo é", null), eol) + ev(content("!", "stop"), eol)
                + (withUsage ? ev(USAGE, eol) : "") + "data: [DONE]" + eol + eol;
    }

    /** Feeds the stream cut at the given points, one timestamp per read; returns the forwarded bytes. */
    static String run(OpenAiSseDecoder decoder, String s, int... cuts) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        Reads reads = new Reads();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int from = 0;
        long t = 1000;
        for (int cut : cuts) {
            out.writeBytes(Reads.drain(decoder.onChunk(reads.read(bytes, from, cut), t++)));
            from = cut;
        }
        out.writeBytes(Reads.drain(decoder.onChunk(reads.read(bytes, from, bytes.length), t++)));
        out.writeBytes(Reads.drain(decoder.onEnd(t)));
        reads.assertAllReleased();
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void roleOnlyAndEmptyChunksDoNotCountAsTokensButAreChunks() {
        RecordingSink sink = new RecordingSink();
        OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.PASS, 1 << 20);
        String s = stream("\n", true);
        // one read per event, so each event gets its own timestamp
        int[] cuts = eventCuts(s);
        assertThat(run(d, s, cuts)).isEqualTo(s);
        // reads: ping(1000) role(1001) empty(1002) Hel(1003) lo(1004) !(1005) usage(1006) done(1007)
        assertThat(sink.dataChunks).containsExactly(1001L, 1002L, 1003L, 1004L, 1005L);
        assertThat(sink.tokenChunks).containsExactly(1003L, 1004L, 1005L);
        assertThat(sink.finishReason).isEqualTo("stop");
        assertThat(sink.usage.completionTokens()).isEqualTo(3);
        assertThat(sink.usage.promptTokens()).isEqualTo(12);
        assertThat(sink.usage.cachedTokens()).isEqualTo(8);
        assertThat(sink.undecodable).isZero();
    }

    @Test
    void stripsExactlyTheInjectedUsageChunkAtEverySplitPoint() {
        for (String eol : List.of("\n", "\r\n")) {
            String upstream = stream(eol, true);
            String expected = stream(eol, false);
            int n = upstream.getBytes(StandardCharsets.UTF_8).length;
            for (int i = 1; i < n; i++) {
                for (int j = i; j < n; j += 11) {
                    RecordingSink sink = new RecordingSink();
                    OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.REMOVE, 1 << 20);
                    assertThat(run(d, upstream, i, j)).as("eol=%d cuts %d,%d", eol.length(), i, j).isEqualTo(expected);
                    assertThat(d.usageReport().chunksRemoved()).isEqualTo(1);
                    assertThat(sink.usage.completionTokens()).isEqualTo(3);
                    assertThat(sink.tokenChunks).hasSize(3);
                }
            }
        }
    }

    @Test
    void withoutStrippingEveryByteIsForwardedAtEverySplitPoint() {
        String s = stream("\r\n", true);
        int n = s.getBytes(StandardCharsets.UTF_8).length;
        for (int i = 1; i < n; i++) {
            RecordingSink sink = new RecordingSink();
            OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.PASS, 1 << 20);
            assertThat(run(d, s, i)).isEqualTo(s);
            assertThat(sink.tokenChunks).hasSize(3);
            assertThat(sink.usage).isNotNull();
        }
    }

    @Test
    void usageMergedIntoTheFinishChunkIsReadAndRemovedOnlyWhenInjected() {
        String last = "{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"},\"finish_reason\":\"stop\"}]";
        String usage = ",\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}";
        String upstream = ev(content("a", null), "\n") + ev(last + usage + "}", "\n") + "data: [DONE]\n\n";
        String expected = ev(content("a", null), "\n") + ev(last + "}", "\n") + "data: [DONE]\n\n";
        int n = upstream.length();
        for (int i = 1; i < n; i++) {
            RecordingSink sink = new RecordingSink();
            OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.REMOVE, 1 << 20);
            assertThat(run(d, upstream, i)).as("cut %d", i).isEqualTo(expected);
            assertThat(d.usageReport().chunksRemoved()).isZero();
            assertThat(d.usageReport().membersRemoved()).isEqualTo(1);
            assertThat(sink.usage.completionTokens()).isEqualTo(2);
            assertThat(sink.tokenChunks).hasSize(2);
        }
        RecordingSink sink = new RecordingSink();
        OpenAiSseDecoder pass = new OpenAiSseDecoder(sink, PARSER, UsageMode.PASS, 1 << 20);
        assertThat(run(pass, upstream, 10, 40)).isEqualTo(upstream);
    }

    @Test
    void openAisUsageNullOnEveryChunkIsRemovedWithTheUsageChunk() {
        // OpenAI's own API with include_usage: "usage":null on every chunk, then the usage-only chunk
        String role = "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\","
                + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]";
        String tok = "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\","
                + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"usage\"},\"finish_reason\":null}]";
        String fin = "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\","
                + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]";
        String usageChunk = "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt\","
                + "\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":1,\"total_tokens\":10}}";
        for (String eol : List.of("\n", "\r\n")) {
            String upstream = ev(role + ",\"usage\":null}", eol) + ev(tok + ",\"usage\":null}", eol)
                    + ev(fin + ",\"usage\":null}", eol) + ev(usageChunk, eol) + "data: [DONE]" + eol + eol;
            String expected = ev(role + "}", eol) + ev(tok + "}", eol) + ev(fin + "}", eol) + "data: [DONE]" + eol + eol;
            int n = upstream.length();
            for (int i = 1; i < n; i++) {
                for (int j = i; j < n; j += 13) {
                    RecordingSink sink = new RecordingSink();
                    OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.REMOVE, 1 << 20);
                    assertThat(run(d, upstream, i, j)).as("cuts %d,%d", i, j).isEqualTo(expected);
                    assertThat(d.usageReport().chunksRemoved()).isEqualTo(1);
                    assertThat(d.usageReport().membersRemoved()).isEqualTo(3);
                    assertThat(d.usageReport().layoutDiffers()).isFalse();
                    assertThat(sink.usage.completionTokens()).isEqualTo(1);
                }
            }
        }
    }

    @Test
    void aUsageChunkCarryingWhatOtherChunksDoNotIsALayoutChange() {
        // llama.cpp with include_usage: its timings leave the finish chunk for the usage chunk
        String first = "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}],\"id\":\"x\",\"object\":\"chat.completion.chunk\"}";
        String usageChunk = "{\"choices\":[],\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"usage\":"
                + "{\"completion_tokens\":1,\"prompt_tokens\":3},\"timings\":{\"prompt_n\":3,\"predicted_n\":1}}";
        RecordingSink sink = new RecordingSink();
        OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.REMOVE, 1 << 20);
        run(d, ev(first, "\n") + ev(usageChunk, "\n"));
        assertThat(d.usageReport().layoutDiffers()).isTrue();
    }

    @Test
    void observingNotesUsageMembersTheEngineSendsUnprompted() {
        String withNull = "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}],\"usage\":null}";
        RecordingSink sink = new RecordingSink();
        OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.OBSERVE, 1 << 20);
        String s = ev(withNull, "\n");
        assertThat(run(d, s, 7)).isEqualTo(s);
        assertThat(d.usageReport().usageMembers()).isTrue();
        assertThat(d.usageReport().tokenCounts()).isFalse();
        OpenAiSseDecoder plain = new OpenAiSseDecoder(new RecordingSink(), PARSER, UsageMode.OBSERVE, 1 << 20);
        run(plain, ev(content("a", "stop"), "\n"));
        assertThat(plain.usageReport().usageMembers()).isFalse();
    }

    @Test
    void reasoningToolCallsAndCompletionsTextAreTokens() {
        String reasoning = "{\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}";
        String reasoning2 = "{\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"so\"}}]}";
        String tool = "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\"}}]}}]}";
        String text = "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\" hi\",\"finish_reason\":null}]}";
        String emptyTools = "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[]}}]}";
        String s = ev(reasoning, "\n") + ev(reasoning2, "\n") + ev(emptyTools, "\n") + ev(tool, "\n") + ev(text, "\n");
        RecordingSink sink = new RecordingSink();
        OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.PASS, 1 << 20);
        run(d, s, eventCuts(s));
        assertThat(sink.tokenChunks).containsExactly(1000L, 1001L, 1003L, 1004L);
        assertThat(sink.reasoningFlags).containsExactly(true, true, false, false);
    }

    @Test
    void continuousUsageGivesCumulativeCountsPerChunk() {
        String a = "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}";
        String b = "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cde\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5}}";
        RecordingSink sink = new RecordingSink();
        run(new OpenAiSseDecoder(sink, PARSER, UsageMode.PASS, 1 << 20), ev(a, "\n") + ev(b, "\n"));
        assertThat(sink.cumulative).containsExactly(2L, 5L);
    }

    @Test
    void malformedEventsAreCountedAndForwardedUntouched() {
        String s = "data: {not json\n\ndata: " + content("x", null) + "\n\nevent: weird\nretry: 10\n\n";
        RecordingSink sink = new RecordingSink();
        OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.REMOVE, 1 << 20);
        assertThat(run(d, s, 3, 17)).isEqualTo(s);
        assertThat(sink.undecodable).isEqualTo(1);
        assertThat(sink.tokenChunks).hasSize(1);
    }

    @Test
    void midStreamErrorObjectIsReported() {
        String s = ev(content("x", null), "\n") + ev("{\"error\":{\"message\":\"boom\",\"code\":500}}", "\n");
        RecordingSink sink = new RecordingSink();
        run(new OpenAiSseDecoder(sink, PARSER, UsageMode.PASS, 1 << 20), s);
        assertThat(sink.streamErrors).isEqualTo(1);
    }

    @Test
    void anEventLargerThanTheHoldLimitStreamsOnAndLaterUsageIsStillRemoved() {
        String big = "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + "x".repeat(600) + "\"}}]";
        String usage = ",\"usage\":null";
        String upstream = ev(big + usage + "}", "\n") + ev(big + "}", "\n") + ev(USAGE, "\n") + "data: [DONE]\n\n";
        String expected = ev(big + "}", "\n") + ev(big + "}", "\n") + "data: [DONE]\n\n";
        for (int cut = 1; cut < upstream.length(); cut += 7) {
            RecordingSink sink = new RecordingSink();
            OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.REMOVE, 256);
            byte[] first = Reads.drain(d.onChunk(Unpooled.copiedBuffer(upstream.substring(0, Math.min(cut,
                    upstream.length())), StandardCharsets.UTF_8), 1));
            String out = new String(first, StandardCharsets.UTF_8) + run(d, upstream.substring(cut));
            assertThat(out).as("cut %d", cut).isEqualTo(expected);
            assertThat(d.usageReport().chunksRemoved()).isEqualTo(1);
        }
        // a large event is not held whole: most of it leaves before its end has arrived
        OpenAiSseDecoder d = new OpenAiSseDecoder(new RecordingSink(), PARSER, UsageMode.REMOVE, 256);
        assertThat(d.onChunk(Unpooled.copiedBuffer(upstream.substring(0, 500), StandardCharsets.UTF_8), 1)
                .readableBytes()).isGreaterThan(400);
    }

    @Test
    void aUsageChunkJustWithinTheHoldLimitIsRemovedWholeWhateverItsLineEnds() {
        // the limit counts an event's line bytes (as the splitter does), not its line ends: a usage chunk whose data
        // line is exactly the limit is read and removed, so none of it may leave before its end has arrived
        for (String eol : List.of("\n", "\r\n")) {
            String upstream = ev(content("a", "stop"), eol) + ev(USAGE, eol) + "data: [DONE]" + eol + eol;
            String expected = ev(content("a", "stop"), eol) + "data: [DONE]" + eol + eol;
            int limit = ("data: " + USAGE).length();
            for (int cut = 1; cut < upstream.length(); cut++) {
                RecordingSink sink = new RecordingSink();
                OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.REMOVE, limit);
                assertThat(run(d, upstream, cut)).as("eol=%d cut %d", eol.length(), cut).isEqualTo(expected);
                assertThat(d.usageReport().chunksRemoved()).isEqualTo(1);
                assertThat(sink.usage.completionTokens()).isEqualTo(3);
            }
        }
    }

    @Test
    void llamaCppTimingsAndVllmMetricsBecomeServerTimings() {
        String last = "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"timings\":{\"prompt_n\":5,"
                + "\"prompt_ms\":12.5,\"predicted_n\":3,\"predicted_ms\":30.25}}";
        RecordingSink sink = new RecordingSink();
        run(new OpenAiSseDecoder(sink, PARSER, UsageMode.PASS, 1 << 20), ev(content("a", null), "\n") + ev(last, "\n"), 9);
        assertThat(sink.serverTimings.firstTokenNanos()).isEqualTo(12_500_000L);
        // llama.cpp's counts are exact usage: prompt_n (+ cache_n) in, predicted_n out
        assertThat(sink.usage).isEqualTo(new dev.llmsidecar.wire.Usage(5, 3, -1));
        assertThat(sink.serverTimings.decodeNanos()).isEqualTo(30_250_000L);
        assertThat(sink.serverTimings.queueNanos()).isEqualTo(-1);
        String vllm = "{\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1},\"metrics\":"
                + "{\"queue_time_ms\":2.0,\"time_to_first_token_ms\":40.0,\"generation_time_ms\":90.0}}";
        RecordingSink v = new RecordingSink();
        run(new OpenAiSseDecoder(v, PARSER, UsageMode.PASS, 1 << 20), ev(vllm, "\n"));
        assertThat(v.serverTimings.engineTtftNanos()).isEqualTo(42_000_000L);
        assertThat(v.serverTimings.decodeNanos()).isEqualTo(-1);
    }

    /** Cut points at every event boundary (LF-terminated events). */
    static int[] eventCuts(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        java.util.List<Integer> cuts = new java.util.ArrayList<>();
        for (int i = 1; i < b.length; i++) {
            if (b[i - 1] == '\n' && b[i] != '\n' && i >= 2 && b[i - 2] == '\n') {
                cuts.add(i);
            }
        }
        return cuts.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * A fault while decoding (here the sink throws at the second token) never reaches the event loop: from there on
     * every byte, held ones included, goes to the client as the engine sent it, and the stream counts as one whose
     * usage was not removed.
     */
    @Test
    void aFaultInDecodingLetsTheRestOfTheStreamPassUntouched() {
        int[] tokens = {0};
        RecordingSink sink = new RecordingSink() {
            @Override
            public void onTokenChunk(long nanos, boolean reasoning, long cumulativeOutputTokens) {
                if (++tokens[0] == 2) {
                    throw new IllegalStateException("a bug downstream");
                }
                super.onTokenChunk(nanos, reasoning, cumulativeOutputTokens);
            }
        };
        OpenAiSseDecoder d = new OpenAiSseDecoder(sink, PARSER, UsageMode.REMOVE, 1 << 20);
        String s = stream("\n", true);
        int usageAt = s.indexOf("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[],");
        // the fault comes in the read that also starts the usage chunk, which is held at that moment
        String out = run(d, s, s.indexOf("lo é") - 10, usageAt + 20);
        assertThat(out).isEqualTo(s);
        assertThat(sink.undecodable).isEqualTo(1);
        assertThat(d.usageReport().membersKept()).isPositive();
    }
}
