package dev.llmsidecar.fuzz;

import dev.llmsidecar.support.RecordingSink;
import dev.llmsidecar.wire.openai.OpenAiChunkParser;
import dev.llmsidecar.wire.openai.OpenAiSseDecoder;
import dev.llmsidecar.wire.openai.UsageMode;
import java.io.ByteArrayOutputStream;
import java.util.List;

/**
 * What {@code OpenAiSseDecoder} with REMOVE must forward for a given byte sequence whatever the reads: what it
 * forwards for the same bytes in one read. Not a second opinion on what to cut (the generated streams check that):
 * this pins down that holding, forwarding and cutting across reads lose, repeat or leak no byte.
 */
final class UsageRemovalReference {

    /** The bytes to forward and the usage-only events among the cuts. */
    record Expected(byte[] forwarded, int usageOnlyChunks) {
    }

    private UsageRemovalReference() {
    }

    /**
     * @param ended the body ended after {@code length} bytes; false: the upstream broke off there, and what the
     *     decoder held goes out as it was
     */
    static Expected forward(byte[] bytes, int length, OpenAiChunkParser parser, int maxHeldBytes, boolean ended) {
        OpenAiSseDecoder decoder = new OpenAiSseDecoder(new RecordingSink(), parser, UsageMode.REMOVE, maxHeldBytes);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] all = Reads.feed(decoder, bytes, length == 0 ? List.of() : List.of(new int[] {0, length}));
        out.writeBytes(all);
        out.writeBytes(dev.llmsidecar.support.Reads.drain(ended ? decoder.onEnd(1) : decoder.releaseHeld()));
        return new Expected(out.toByteArray(), decoder.usageReport().chunksRemoved());
    }
}
