package dev.llmsidecar.wire;

/**
 * What a streaming decoder saw and did about usage, read once the stream has ended.
 *
 * @param chunksRemoved usage-only chunks removed (REMOVE)
 * @param membersRemoved usage members removed from chunks that stayed, e.g. OpenAI's {@code "usage":null} (REMOVE)
 * @param usageMembers the stream carried a top-level usage member, null or not (OBSERVE)
 * @param tokenCounts the stream carried exact token counts: a usage object, or the engine's timings with counts
 * @param layoutDiffers the usage-only chunk carried members the stream's other chunks did not (llama.cpp moves its
 *     {@code timings} there): what was removed is more than what include_usage added (REMOVE)
 */
public record UsageReport(int chunksRemoved, int membersRemoved, boolean usageMembers, boolean tokenCounts,
        boolean layoutDiffers) {

    public static final UsageReport NONE = new UsageReport(0, 0, false, false, false);
}
