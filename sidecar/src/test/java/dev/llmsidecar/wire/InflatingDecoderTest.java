package dev.llmsidecar.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.llmsidecar.support.RecordingSink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.zip.Adler32;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import org.junit.jupiter.api.Test;

class InflatingDecoderTest {

    /** The format's decoder behind the inflater: keeps what it is given. */
    static final class Inner implements StreamDecoder {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        boolean ended;

        @Override
        public ByteBuf onChunk(ByteBuf chunk, long nanos) {
            bytes.writeBytes(ByteBufUtil.getBytes(chunk));
            return chunk;
        }

        @Override
        public ByteBuf onEnd(long nanos) {
            ended = true;
            return Unpooled.EMPTY_BUFFER;
        }
    }

    @Test
    void corruptCompressedBytesAreForwardedAndCountedNeverThrown() {
        byte[][] corrupt = {
            {(byte) 0xFF, (byte) 0x8F}, // deflate: an invalid block type
            "not gzip at all, but long enough for two header reads".getBytes(StandardCharsets.US_ASCII),
        };
        String[] encodings = {"deflate", "gzip"};
        for (int i = 0; i < corrupt.length; i++) {
            RecordingSink sink = new RecordingSink();
            StreamDecoder decoder = InflatingDecoder.wrap(new Inner(), sink, encodings[i]);
            ByteBuf chunk = Unpooled.wrappedBuffer(corrupt[i]);
            ByteBuf[] forwarded = new ByteBuf[1];
            assertThatCode(() -> forwarded[0] = decoder.onChunk(chunk, 1)).as(encodings[i]).doesNotThrowAnyException();
            assertThat(forwarded[0]).isSameAs(chunk);
            ByteBuf later = Unpooled.copiedBuffer("more", StandardCharsets.UTF_8);
            assertThat(decoder.onChunk(later, 2)).isSameAs(later);
            assertThat(decoder.onEnd(3).readableBytes()).isZero();
            assertThat(sink.undecodable).as(encodings[i]).isEqualTo(1);
        }
    }

    @Test
    void zlibWithAWindowSmallerThan32KibIsInflatedAsZlib() {
        // RFC 1950 allows window sizes from 256 bytes (CINFO 0) to 32 KiB (CINFO 7); only 0x78.. is not all zlib
        byte[] plain = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n".getBytes(StandardCharsets.UTF_8);
        for (int windowBits = 8; windowBits <= 15; windowBits++) {
            byte[] body = zlib(plain, windowBits);
            for (int cut = 1; cut < body.length; cut++) {
                RecordingSink sink = new RecordingSink();
                Inner inner = new Inner();
                StreamDecoder decoder = InflatingDecoder.wrap(inner, sink, "deflate");
                decoder.onChunk(Unpooled.wrappedBuffer(body, 0, cut), 1);
                decoder.onChunk(Unpooled.wrappedBuffer(body, cut, body.length - cut), 2);
                decoder.onEnd(3);
                assertThat(inner.bytes.toByteArray()).as("window bits %d, cut %d", windowBits, cut).isEqualTo(plain);
                assertThat(sink.undecodable).isZero();
                assertThat(inner.ended).isTrue();
            }
        }
    }

    /** A zlib stream (RFC 1950) declaring the given window; the data is short enough for any of them. */
    static byte[] zlib(byte[] plain, int windowBits) {
        Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
        deflater.setInput(plain);
        deflater.finish();
        byte[] raw = new byte[plain.length + 64];
        int n = deflater.deflate(raw);
        deflater.end();
        int cmf = (windowBits - 8) << 4 | 8;
        int flg = 31 - (cmf << 8) % 31;
        Adler32 adler = new Adler32();
        adler.update(plain);
        long a = adler.getValue();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(cmf);
        out.write(flg);
        out.write(raw, 0, n);
        out.writeBytes(new byte[] {(byte) (a >>> 24), (byte) (a >>> 16), (byte) (a >>> 8), (byte) a});
        return out.toByteArray();
    }

    @Test
    void everyReadDeliversAllThatTheBytesSoFarInflateTo() {
        // a raw deflate stream whose back-reference runs on past the end of a read: zlib has taken all the input, yet
        // holds output it had no room for; it must still be delivered with that read, not with the next one (nor,
        // after the last read, never)
        byte[] body = {0x32, 0x32, (byte) 0xFF, 0x01, 0x01, (byte) 0xFF, 0x01};
        byte[][] expectedAfterRead = new byte[body.length][];
        for (int i = 0; i < body.length; i++) {
            expectedAfterRead[i] = inflateRaw(body, i + 1);
        }
        RecordingSink sink = new RecordingSink();
        Inner inner = new Inner();
        StreamDecoder decoder = InflatingDecoder.wrap(inner, sink, "deflate");
        for (int i = 0; i < body.length; i++) {
            decoder.onChunk(Unpooled.wrappedBuffer(body, i, 1), i);
            assertThat(inner.bytes.toByteArray()).as("after read %d", i).isEqualTo(expectedAfterRead[i]);
        }
    }

    @Test
    void aRawDeflateBodyIsInflatedToItsLastByteWhateverTheReads() {
        StringBuilder json = new StringBuilder("{\"choices\":[");
        for (int i = 0; i < 11; i++) {
            json.append("{\"index\":").append(i % 3).append(",\"text\":\"aaaa\"},");
        }
        byte[] plain = json.append("{}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n\n\n\n\n\n")
                .toString().getBytes(StandardCharsets.UTF_8);
        Deflater deflater = new Deflater(9, true);
        deflater.setInput(plain);
        deflater.finish();
        byte[] body = new byte[plain.length + 64];
        int length = deflater.deflate(body);
        deflater.end();
        for (int readSize = 1; readSize <= 8; readSize++) {
            RecordingSink sink = new RecordingSink();
            Inner inner = new Inner();
            StreamDecoder decoder = InflatingDecoder.wrap(inner, sink, "deflate");
            for (int from = 0; from < length; from += readSize) {
                decoder.onChunk(Unpooled.wrappedBuffer(body, from, Math.min(readSize, length - from)), from);
            }
            decoder.onEnd(length);
            assertThat(inner.bytes.toByteArray()).as("reads of %d", readSize).isEqualTo(plain);
            assertThat(inner.ended).isTrue();
            assertThat(sink.undecodable).isZero();
        }
    }

    /** All that the first {@code length} bytes of a raw deflate stream inflate to (zlib called until it gives none). */
    static byte[] inflateRaw(byte[] body, int length) {
        Inflater inflater = new Inflater(true);
        inflater.setInput(body, 0, length);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[256];
        try {
            for (int n; (n = inflater.inflate(buffer)) > 0; ) {
                out.write(buffer, 0, n);
            }
        } catch (DataFormatException e) {
            throw new AssertionError(e);
        } finally {
            inflater.end();
        }
        return out.toByteArray();
    }
}
