package dev.llmsidecar.wire.openai;

/**
 * What a streaming decoder saw and did about usage, read once the stream has ended.
 *
 * @param chunksRemoved usage-only chunks removed (REMOVE)
 * @param membersRemoved usage members removed from chunks that stayed, e.g. OpenAI's {@code "usage":null} (REMOVE)
 * @param membersKept usage members in chunks that stayed which could not be removed exactly and reached the client:
 *     an escaped member name, or an object spread over data lines with another line among them (REMOVE)
 * @param usageMembers the stream carried a top-level usage member, null or not
 * @param tokenCounts the stream carried exact token counts: a usage object, or the engine's timings with counts
 * @param layoutDiffers the usage-only chunk carried members the stream's other chunks did not (llama.cpp moves its
 *     {@code timings} there): what was removed is more than what include_usage added (REMOVE)
 */
public record UsageReport(int chunksRemoved, int membersRemoved, int membersKept, boolean usageMembers,
        boolean tokenCounts, boolean layoutDiffers) {

    public static final UsageReport NONE = new UsageReport(0, 0, 0, false, false, false);
}
