package dev.llmsidecar.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.support.RecordingSink;
import dev.llmsidecar.wire.NdjsonDecoder;
import dev.llmsidecar.wire.ResponseModelProbe;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.ollama.OllamaFormat;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link NdjsonDecoder} against a plain line split of the whole input: for any reads, the same lines (bytes without
 * the LF; blank ones skipped; a last one without LF at the end), each stamped with the read that completed it, lines
 * over the limit counted as undecodable instead, handler failures counted too; every read forwarded as it came. The
 * Ollama format's own decoder, on the same bytes, never throws and forwards every read.
 */
class NdjsonDecoderFuzzTest {

    private static final JsonFactory JSON = new JsonFactory();
    private static final int UNLIMITED = 1 << 20;

    /** A line as the handler got it: its bytes (one char per byte) and its timestamp. */
    record Line(String bytes, long nanos) {
    }

    @FuzzTest
    @DictionaryEntries({"\\n", "\\r\\n",
            "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"done\":false}", "\"done\":true",
            "\"eval_count\":3", "\"thinking\":\"x\"", "\"tool_calls\":[{}]", "\"error\":\"e\""})
    void linesMatchTheReferenceForAnySplit(FuzzedDataProvider data) {
        int maxLineBytes = data.consumeBoolean() ? data.consumeInt(0, 64) : UNLIMITED;
        int failEvery = data.consumeInt(0, 4); // the handler fails on lines i with i % failEvery == 1 (0: never)
        ReadSplits splits = ReadSplits.consume(data, 64);
        byte[] stream = data.consumeRemainingAsBytes();
        List<int[]> reads = splits.reads(stream.length);

        List<Line> handed = new ArrayList<>();
        RecordingSink sink = new RecordingSink();
        NdjsonDecoder decoder = new NdjsonDecoder(sink, (line, length, nanos) -> {
            int index = handed.size();
            handed.add(new Line(new String(line, 0, length, StandardCharsets.ISO_8859_1), nanos));
            if (failEvery > 0 && index % failEvery == 1) {
                if (index % 2 == 1) {
                    throw new IllegalStateException("a handler that throws");
                }
                return false;
            }
            return true;
        }, maxLineBytes, new ResponseModelProbe(JSON));
        forwardsEveryRead(decoder, stream, reads);

        List<Line> expected = new ArrayList<>();
        int oversize = 0;
        int start = 0;
        int read = 0;
        for (int i = 0; i <= stream.length; i++) {
            boolean newline = i < stream.length && stream[i] == '\n';
            boolean last = i == stream.length && i > start;
            if (!newline && !last) {
                continue;
            }
            while (newline && reads.get(read)[1] <= i) {
                read++; // the read that holds this LF
            }
            long nanos = newline ? read : reads.size(); // a last line without LF: at the end
            String line = new String(stream, start, i - start, StandardCharsets.ISO_8859_1);
            if (line.length() > maxLineBytes) {
                oversize++;
            } else if (!line.chars().allMatch(c -> c == ' ' || c == '\r' || c == '\t')) {
                expected.add(new Line(line, nanos));
            }
            start = i + 1;
        }
        assertThat(handed).as(() -> "lines of " + Reads.text(stream) + " in reads " + splits + ", limit "
                + maxLineBytes).isEqualTo(expected);
        int failed = 0;
        for (int i = 0; i < expected.size(); i++) {
            failed += failEvery > 0 && i % failEvery == 1 ? 1 : 0;
        }
        assertThat(sink.undecodable).as("oversize lines and failed handler calls").isEqualTo(oversize + failed);

        // the real format's line handler on the same bytes: whatever it makes of them, nothing escapes
        UpstreamResponse response = new UpstreamResponse("application/x-ndjson", name -> null,
                false, UNLIMITED, maxLineBytes);
        forwardsEveryRead(new OllamaFormat(JSON).decoder(new RecordingSink(), response), stream, reads);
    }

    /** Feeds the reads (read i stamped i) and ends; every read is forwarded itself, the end forwards nothing. */
    private static void forwardsEveryRead(StreamDecoder decoder, byte[] stream, List<int[]> reads) {
        dev.llmsidecar.support.Reads given = new dev.llmsidecar.support.Reads();
        long nanos = 0;
        for (int[] read : reads) {
            ByteBuf chunk = given.read(stream, read[0], read[1]);
            ByteBuf forwarded = decoder.onChunk(chunk, nanos++);
            assertThat(forwarded).isSameAs(chunk);
            forwarded.release();
        }
        assertThat(decoder.onEnd(nanos).readableBytes()).isZero();
        given.assertAllReleased();
    }
}
