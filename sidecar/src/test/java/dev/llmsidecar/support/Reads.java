package dev.llmsidecar.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;

/**
 * Upstream reads for a decoder as the proxy hands them over: direct buffers whose readable bytes do not start at
 * index 0 (a decoder that reads absolute indices fails), each given away to the decoder; and what it forwards,
 * drained and released. {@link #assertAllReleased} checks that no read was leaked or released twice.
 */
public final class Reads {

    private final List<ByteBuf> given = new ArrayList<>();

    /** A read holding {@code bytes[from, to)}, after one byte that is not readable. */
    public ByteBuf read(byte[] bytes, int from, int to) {
        ByteBuf b = Unpooled.directBuffer(to - from + 1).writeByte('#').writeBytes(bytes, from, to - from);
        b.readerIndex(1);
        given.add(b);
        return b;
    }

    /** The readable bytes of what a decoder returned; the buffer is released. */
    public static byte[] drain(ByteBuf forwarded) {
        byte[] bytes = ByteBufUtil.getBytes(forwarded);
        forwarded.release();
        return bytes;
    }

    /** Every read given out has been released exactly once (by the decoder or with what it forwarded). */
    public void assertAllReleased() {
        for (int i = 0; i < given.size(); i++) {
            assertThat(given.get(i).refCnt()).as("references left to read %d", i).isZero();
        }
    }
}
