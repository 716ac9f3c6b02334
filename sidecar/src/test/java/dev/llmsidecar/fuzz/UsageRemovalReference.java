package dev.llmsidecar.fuzz;

import dev.llmsidecar.wire.SseEventSplitter;
import dev.llmsidecar.wire.openai.OpenAiChunk;
import dev.llmsidecar.wire.openai.OpenAiChunkParser;
import dev.llmsidecar.wire.openai.UsageMemberFinder;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What {@code OpenAiSseDecoder} with REMOVE must forward for a given byte sequence, worked out the plain way: the
 * whole sequence at once through its parts ({@link UsageMemberFinder} for usage members, {@link SseEventSplitter} and
 * {@link OpenAiChunkParser} for usage-only events, with the LF of a CRLF that ended one), then every byte except the
 * cut ranges. Not a second opinion on what to cut (the generated streams check that): this pins down that holding,
 * forwarding and cutting across reads lose, repeat or leak no byte, whatever the reads.
 */
final class UsageRemovalReference {

    /** The bytes to forward and the usage-only events among the cuts. */
    record Expected(byte[] forwarded, int usageOnlyChunks) {
    }

    private UsageRemovalReference() {
    }

    static Expected forward(byte[] bytes, int length, OpenAiChunkParser parser, int maxHeldBytes) {
        List<long[]> cuts = new ArrayList<>();
        new UsageMemberFinder((from, to) -> cuts.add(new long[] {from, to})).feed(bytes, 0, length);
        int[] usageOnly = {0};
        long[] lastDroppedEnd = {-1};
        SseEventSplitter splitter = new SseEventSplitter(new SseEventSplitter.Listener() {
            @Override
            public void onEvent(byte[] data, int dataLength, String type, boolean oversize, long start, long end) {
                if (oversize || dataLength == 0) {
                    return;
                }
                OpenAiChunk chunk = parser.parse(data, 0, dataLength);
                if (chunk != null && chunk.isUsageOnly()) {
                    cuts.add(new long[] {start, end});
                    lastDroppedEnd[0] = end;
                    usageOnly[0]++;
                }
            }

            @Override
            public void onEventEndExtended(long newEnd) {
                if (lastDroppedEnd[0] == newEnd - 1) {
                    cuts.add(new long[] {newEnd - 1, newEnd});
                    lastDroppedEnd[0] = newEnd;
                }
            }
        }, maxHeldBytes);
        splitter.feed(bytes, 0, length);

        cuts.sort(Comparator.comparingLong(c -> c[0]));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int pos = 0;
        for (long[] cut : cuts) {
            if (cut[0] > pos) {
                out.write(bytes, pos, (int) cut[0] - pos);
            }
            pos = (int) Math.max(pos, cut[1]);
        }
        if (pos < length) {
            out.write(bytes, pos, length - pos);
        }
        return new Expected(out.toByteArray(), usageOnly[0]);
    }
}
