package dev.llmsidecar.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.llmsidecar.support.RecordingSink;
import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class InflatingDecoderTest {

    /** The format's decoder behind the inflater: keeps what it is given. */
    static final class Inner implements StreamDecoder {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        boolean ended;

        @Override
        public Buffer onChunk(Buffer chunk, long nanos) {
            bytes.writeBytes(chunk.getBytes());
            return chunk;
        }

        @Override
        public Buffer onEnd(long nanos) {
            ended = true;
            return Buffer.buffer(0);
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
            Buffer chunk = Buffer.buffer(corrupt[i]);
            Buffer[] forwarded = new Buffer[1];
            assertThatCode(() -> forwarded[0] = decoder.onChunk(chunk, 1)).as(encodings[i]).doesNotThrowAnyException();
            assertThat(forwarded[0]).isSameAs(chunk);
            Buffer later = Buffer.buffer("more");
            assertThat(decoder.onChunk(later, 2)).isSameAs(later);
            assertThat(decoder.onEnd(3).length()).isZero();
            assertThat(sink.undecodable).as(encodings[i]).isEqualTo(1);
        }
    }
}
