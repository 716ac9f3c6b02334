package dev.llmsidecar.fuzz;

import dev.llmsidecar.wire.StreamDecoder;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Feeding a decoder its reads, and showing bytes in an assertion message. */
final class Reads {

    private Reads() {
    }

    /** Feeds the reads ({@code [from, to)} of {@code bytes}), read i stamped i, then ends; returns all it forwarded. */
    static byte[] feedAndEnd(StreamDecoder decoder, byte[] bytes, List<int[]> reads) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(feed(decoder, bytes, reads));
        out.writeBytes(dev.llmsidecar.support.Reads.drain(decoder.onEnd(reads.size())));
        return out.toByteArray();
    }

    /**
     * Feeds the reads (read i stamped i), as direct buffers the way the proxy hands them over; returns all that was
     * forwarded. Every read must have been released by then, or be held by what was forwarded (released here).
     */
    static byte[] feed(StreamDecoder decoder, byte[] bytes, List<int[]> reads) {
        dev.llmsidecar.support.Reads given = new dev.llmsidecar.support.Reads();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long nanos = 0;
        for (int[] read : reads) {
            out.writeBytes(dev.llmsidecar.support.Reads.drain(decoder.onChunk(given.read(bytes, read[0], read[1]),
                    nanos++)));
        }
        given.assertAllReleased();
        return out.toByteArray();
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
