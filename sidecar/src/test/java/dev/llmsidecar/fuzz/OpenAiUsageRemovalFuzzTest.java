package dev.llmsidecar.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.fuzz.OpenAiStreamGenerator.Injection;
import dev.llmsidecar.fuzz.OpenAiStreamGenerator.Streams;
import dev.llmsidecar.support.RecordingSink;
import dev.llmsidecar.wire.openai.OpenAiChunkParser;
import dev.llmsidecar.wire.openai.OpenAiSseDecoder;
import dev.llmsidecar.wire.openai.UsageMode;
import dev.llmsidecar.wire.openai.UsageReport;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.List;

/**
 * The include_usage remover ({@link OpenAiSseDecoder} with {@link UsageMode#REMOVE}): the client gets the
 * engine's bytes minus exactly what include_usage added, whatever the reads.
 */
class OpenAiUsageRemovalFuzzTest {

    private static final OpenAiChunkParser PARSER = new OpenAiChunkParser(new JsonFactory());
    private static final int UNLIMITED = 1 << 20;

    /**
     * A generated engine stream with include_usage on, cut anywhere: REMOVE forwards the stream as it would have been
     * without it, to the byte; PASS and OBSERVE forward it untouched; what was read is the same either way.
     */
    @FuzzTest
    void removalGivesBackTheEnginesBytes(FuzzedDataProvider data) {
        Streams streams = OpenAiStreamGenerator.generate(data);
        // the hold limit may be anything at least the usage chunk (a larger event cannot be one, by design)
        int maxHeld = Math.max(streams.usageChunkBytes(), data.consumeBoolean() ? data.consumeInt(0, 512) : UNLIMITED);
        ReadSplits splits = ReadSplits.consume(data, 96);
        byte[] injected = streams.injected();

        RecordingSink removing = new RecordingSink();
        OpenAiSseDecoder remover = new OpenAiSseDecoder(removing, PARSER, UsageMode.REMOVE, maxHeld);
        byte[] out = Reads.feedAndEnd(remover, injected, splits.reads(injected.length));
        assertThat(Reads.text(out)).as(() -> streams.injection() + " stream, hold " + maxHeld + ", reads " + splits
                + ", injected:\n" + Reads.text(injected)).isEqualTo(Reads.text(streams.plain()));
        UsageReport report = remover.usageReport();
        assertThat(report.chunksRemoved()).as("usage chunks removed").isEqualTo(streams.usageOnlyChunks());
        assertThat(report.membersRemoved()).as("usage members removed").isEqualTo(streams.usageMembers());
        assertThat(report.layoutDiffers()).isFalse();
        // an event larger than the decoder holds is not read (counted undecodable), though its usage member goes
        assertThat(removing.usage).isEqualTo(streams.usageEventBytes() <= maxHeld ? streams.usage() : null);

        // what was read from the injected stream is what is read from the engine's plain one (when every injected
        // event is read: "usage":null can make one too large that was not)
        RecordingSink plain = new RecordingSink();
        byte[] passed = Reads.feedAndEnd(new OpenAiSseDecoder(plain, PARSER, UsageMode.PASS, maxHeld),
                streams.plain(), splits.reads(streams.plain().length));
        assertThat(passed).isEqualTo(streams.plain());
        if (streams.largestEventBytes() <= maxHeld) {
            assertThat(removing.tokenChunks).hasSameSizeAs(plain.tokenChunks);
            assertThat(removing.reasoningFlags).isEqualTo(plain.reasoningFlags);
            assertThat(removing.finishReason).isEqualTo(plain.finishReason);
            assertThat(removing.undecodable).isZero();
        }

        for (UsageMode untouched : List.of(UsageMode.PASS, UsageMode.OBSERVE)) {
            OpenAiSseDecoder decoder = new OpenAiSseDecoder(new RecordingSink(), PARSER, untouched, maxHeld);
            assertThat(Reads.feedAndEnd(decoder, injected, splits.reads(injected.length))).as(untouched.name())
                    .isEqualTo(injected);
        }
        if (streams.injection() == Injection.NONE) {
            assertThat(out).isEqualTo(injected);
        }
    }

    /**
     * Any bytes, SSE or not, stopped after any read: REMOVE never throws, and what it forwarded plus what it releases
     * is what it forwards for the same bytes in one read ({@link UsageRemovalReference}): nothing lost, repeated or
     * leaked, whatever the reads.
     * PASS and OBSERVE forward every byte at once.
     */
    @FuzzTest
    @DictionaryEntries({"data: ", "\\r\\n", "\\n\\n", "\"usage\":null", "\"usage\":{\"prompt_tokens\":1}",
            "\"choices\":[]", "\"choices\":[{\"delta\":{\"content\":\"a\"}}]", ",\"usage\":", "{\"usage\":", "[DONE]",
            ": ping", "\\xEF\\xBB\\xBF"})
    void arbitraryBytesLoseNothingButTheCutRanges(FuzzedDataProvider data) {
        int maxHeld = data.consumeBoolean() ? data.consumeInt(0, 256) : UNLIMITED;
        boolean stopEarly = data.consumeBoolean();
        int stopAfter = data.consumeInt(0, 64);
        ReadSplits splits = ReadSplits.consume(data, 64);
        byte[] stream = data.consumeRemainingAsBytes();

        List<int[]> reads = splits.reads(stream.length);
        if (stopEarly) {
            reads = reads.subList(0, Math.min(stopAfter, reads.size()));
        }
        int fed = reads.isEmpty() ? 0 : reads.get(reads.size() - 1)[1];

        RecordingSink sink = new RecordingSink();
        OpenAiSseDecoder remover = new OpenAiSseDecoder(sink, PARSER, UsageMode.REMOVE, maxHeld);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(Reads.feed(remover, stream, reads));
        // the upstream broke off, or ended: the held bytes go out as they are
        out.writeBytes(dev.llmsidecar.support.Reads.drain(stopEarly ? remover.releaseHeld() : remover.onEnd(1)));

        UsageRemovalReference.Expected expected = UsageRemovalReference.forward(stream, fed, PARSER, maxHeld,
                !stopEarly);
        assertThat(Reads.text(out.toByteArray())).as(() -> "hold " + maxHeld + ", " + fed + " bytes in reads " + splits
                + " of:\n" + Reads.text(stream)).isEqualTo(Reads.text(expected.forwarded()));
        assertThat(remover.usageReport().chunksRemoved()).isEqualTo(expected.usageOnlyChunks());

        for (UsageMode untouched : List.of(UsageMode.PASS, UsageMode.OBSERVE)) {
            OpenAiSseDecoder decoder = new OpenAiSseDecoder(new RecordingSink(), PARSER, untouched, maxHeld);
            for (int[] read : reads) {
                ByteBuf chunk = Unpooled.wrappedBuffer(stream, read[0], read[1] - read[0]);
                Expect.that(decoder.onChunk(chunk, 0) == chunk, () -> untouched + " did not forward a read itself");
            }
            assertThat(decoder.onEnd(1).readableBytes()).isZero();
        }
    }
}
