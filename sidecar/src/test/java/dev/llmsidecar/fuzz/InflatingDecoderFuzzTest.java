package dev.llmsidecar.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.fuzz.ZipReference.Inflated;
import dev.llmsidecar.fuzz.ZipReference.Wrapper;
import dev.llmsidecar.support.RecordingSink;
import dev.llmsidecar.wire.InflatingDecoder;
import dev.llmsidecar.wire.StreamDecoder;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

/**
 * {@link InflatingDecoder} against java.util.zip ({@link ZipReference}) on the same bytes: the inner decoder gets
 * exactly the inflated bytes, each as soon as the compressed read that carries it (after every read, all that the
 * bytes so far inflate to), for any reads, whole bodies, truncated ones, concatenated gzip members, bodies followed by
 * other bytes, and any bytes at all; the compressed reads pass untouched, nothing is thrown, and the inflated copy
 * stays within the decoder's ratio bound (1000 inflated bytes per compressed byte, past the first KiB).
 */
class InflatingDecoderFuzzTest {

    private static final String[] GZIP_NAMES = {"gzip", "x-gzip", " GZip "};
    private static final String[] DEFLATE_NAMES = {"deflate", "Deflate "};
    private static final long MAX_RATIO = 1000;
    /** Read boundaries at which the inflated-so-far is compared (each costs a reference inflation of the prefix). */
    private static final int CHECKED_READS = 24;

    @FuzzTest
    void inflatedBytesMatchJavaUtilZip(FuzzedDataProvider data) {
        boolean gzip = data.consumeBoolean();
        String encoding = data.pickValue(gzip ? GZIP_NAMES : DEFLATE_NAMES);
        boolean hostile = data.consumeInt(0, 3) == 0;
        ReadSplits splits = ReadSplits.consume(data, 128);
        CompressedBody body = hostile ? null : CompressedBody.generate(gzip, data);
        byte[] compressed = hostile ? data.consumeRemainingAsBytes() : body.bytes();
        Supplier<String> description = () -> (hostile ? "any bytes as " + encoding : body.description())
                + ", reads " + splits;
        Wrapper wrapper = gzip ? Wrapper.GZIP : Wrapper.ZLIB_OR_RAW;

        assertThat(InflatingDecoder.inflates(encoding)).isTrue();
        RecordingSink sink = new RecordingSink();
        Inner inner = new Inner();
        StreamDecoder decoder = InflatingDecoder.wrap(inner, sink, encoding);
        List<int[]> reads = splits.reads(compressed.length);
        dev.llmsidecar.support.Reads given = new dev.llmsidecar.support.Reads();
        Inflated expected = ZipReference.inflate(compressed, compressed.length, wrapper);
        // below the least bound nothing can be stopped, and the inflated-so-far is checked read by read
        boolean mayExceed = expected.bytes().length > MAX_RATIO * 1024;
        byte[] certain = new byte[0]; // what an undamaged prefix inflated to at the last check
        int checkEvery = Math.max(1, reads.size() / CHECKED_READS);
        for (int i = 0; i < reads.size(); i++) {
            int[] read = reads.get(i);
            inner.read = i;
            ByteBuf chunk = given.read(compressed, read[0], read[1]);
            ByteBuf forwarded = decoder.onChunk(chunk, i);
            Expect.that(forwarded == chunk, () -> "compressed bytes not forwarded as they came");
            forwarded.release();
            Expect.that(inner.bytes.size() <= MAX_RATIO * Math.max(read[1], 1024),
                    () -> inner.bytes.size() + " inflated bytes from " + read[1] + " compressed ones");
            if (!mayExceed && (i % checkEvery == 0 || i == reads.size() - 1)) {
                Inflated soFar = ZipReference.inflate(compressed, read[1], wrapper);
                int index = i;
                Supplier<String> what = () -> "inflated after read " + index + " of " + description.get();
                if (soFar.damaged()) {
                    assertDamaged(inner.bytes(), certain, soFar.bytes(), what);
                } else {
                    assertThat(inner.bytes()).as(what).isEqualTo(soFar.bytes());
                    certain = soFar.bytes();
                }
            }
        }
        inner.read = reads.size();
        assertThat(decoder.onEnd(reads.size()).readableBytes()).isZero();
        given.assertAllReleased();
        assertThat((long) inner.bytes.size()).isLessThanOrEqualTo(MAX_RATIO * Math.max(compressed.length, 1024));

        if (mayExceed && sink.undecodable > 0) {
            // a bomb: stopped at the bound and counted once; what was inflated before it is still right
            assertThat(sink.undecodable).isEqualTo(1);
            Expect.that(isPrefix(inner.bytes(), expected.bytes()), () -> "a bomb's start is not what it inflates to");
            return;
        }
        Supplier<String> what = () -> "inflated copy of " + description.get();
        if (expected.damaged()) {
            assertDamaged(inner.bytes(), mayExceed ? new byte[0] : certain, expected.bytes(), what);
        } else {
            assertThat(inner.bytes()).as(what).isEqualTo(expected.bytes());
        }
        if (body != null && body.whole()) {
            assertThat(expected.bytes()).as(() -> "java.util.zip reads what was compressed: " + description.get())
                    .isEqualTo(body.plain());
            assertThat(sink.undecodable).as(() -> "a whole body is decoded cleanly: " + description.get()).isZero();
            assertThat(inner.ended).as(() -> "a whole body ends the inner decoder: " + description.get()).isTrue();
        }
    }

    /**
     * Damage: what was inflated from the reads before it must have arrived, and nothing beyond what comes before the
     * damage (how much of the damaged read's output an inflater gets out first depends on how much it inflates at
     * once).
     */
    private static void assertDamaged(byte[] inner, byte[] certain, byte[] beforeDamage, Supplier<String> what) {
        Expect.that(isPrefix(inner, beforeDamage), () -> "more than what comes before the damage: "
                + Arrays.toString(inner) + " of " + Arrays.toString(beforeDamage) + ", " + what.get());
        Expect.that(isPrefix(certain, inner), () -> "less than what the reads before it gave: "
                + Arrays.toString(inner) + " of " + Arrays.toString(certain) + ", " + what.get());
    }

    /** AssertJ's startsWith fails for an empty prefix of something. */
    private static boolean isPrefix(byte[] prefix, byte[] of) {
        return prefix.length <= of.length && Arrays.equals(prefix, 0, prefix.length, of, 0, prefix.length);
    }

    /** The format's decoder behind the inflater: records what it gets, and returns bytes that must be dropped. */
    private static final class Inner implements StreamDecoder {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int read;
        boolean ended;

        byte[] bytes() {
            return bytes.toByteArray();
        }

        @Override
        public ByteBuf onChunk(ByteBuf chunk, long nanos) {
            Expect.that(!ended, () -> "inflated bytes after the end");
            Expect.that(nanos == read, () -> "stamped " + nanos + ", not with read " + read + " that carried it");
            bytes.writeBytes(ByteBufUtil.getBytes(chunk));
            chunk.release();
            return Unpooled.copiedBuffer("the inner decoder's output is not forwarded", StandardCharsets.UTF_8);
        }

        @Override
        public ByteBuf onEnd(long nanos) {
            ended = true;
            return Unpooled.copiedBuffer("nor is this", StandardCharsets.UTF_8);
        }
    }
}
