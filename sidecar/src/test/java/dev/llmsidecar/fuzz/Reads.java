package dev.llmsidecar.fuzz;

import dev.llmsidecar.wire.StreamDecoder;
import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Feeding a decoder its reads, and showing bytes in an assertion message. */
final class Reads {

    private Reads() {
    }

    /** Feeds the reads ({@code [from, to)} of {@code bytes}), read i stamped i, then ends; returns all it forwarded. */
    static byte[] feedAndEnd(StreamDecoder decoder, byte[] bytes, List<int[]> reads) {
        Buffer out = Buffer.buffer();
        long nanos = 0;
        for (int[] read : reads) {
            out.appendBuffer(decoder.onChunk(Buffer.buffer().appendBytes(bytes, read[0], read[1] - read[0]), nanos++));
        }
        out.appendBuffer(decoder.onEnd(nanos));
        return out.getBytes();
    }

    /**
     * One char per byte (ISO-8859-1), CR and LF shown as escapes (LF also breaks the line), a backslash doubled: one
     * text per byte sequence, so comparing texts compares bytes, and a failed comparison shows a readable diff.
     */
    static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.ISO_8859_1).replace("\\", "\\\\").replace("\r", "\\r")
                .replace("\n", "\\n\n");
    }
}
