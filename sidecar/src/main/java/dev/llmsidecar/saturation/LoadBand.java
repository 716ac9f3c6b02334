package dev.llmsidecar.saturation;

/**
 * The fixed load bands: the LLM requests in flight when a request arrived (itself included), in powers of two, so a
 * band is as wide as the load below it and 11 bands cover 1 to 512 and beyond. Fixed rather than configured, so
 * dashboards and the knee read the same bands everywhere.
 *
 * @param index position, 0 = the lightest load
 * @param label the band's upper bound as the {@code load_band} label: "1", "2", "4" … "512", "+Inf"
 * @param lower lowest load in the band
 * @param upper highest load in the band; {@link Integer#MAX_VALUE} for the last
 */
public record LoadBand(int index, String label, int lower, int upper) {

    /** Highest finite upper bound; loads above it share the last band. */
    public static final int TOP = 512;

    private static final LoadBand[] ALL = build();

    private static LoadBand[] build() {
        int count = Integer.numberOfTrailingZeros(TOP) + 2; // 1, 2, 4 ... TOP, then +Inf
        LoadBand[] bands = new LoadBand[count];
        for (int i = 0; i < count - 1; i++) {
            int upper = 1 << i;
            bands[i] = new LoadBand(i, Integer.toString(upper), i == 0 ? 1 : (upper >> 1) + 1, upper);
        }
        bands[count - 1] = new LoadBand(count - 1, "+Inf", TOP + 1, Integer.MAX_VALUE);
        return bands;
    }

    /** Every band, lightest first. */
    public static java.util.List<LoadBand> all() {
        return java.util.List.of(ALL);
    }

    public static int count() {
        return ALL.length;
    }

    /** The band of a load (below 1 counts as 1). */
    public static LoadBand of(int load) {
        if (load <= 1) {
            return ALL[0];
        }
        if (load > TOP) {
            return ALL[ALL.length - 1];
        }
        return ALL[32 - Integer.numberOfLeadingZeros(load - 1)]; // ceil(log2(load))
    }

    /**
     * The load that stands for the band in the knee's slope: the middle of its range (1 and 2 are exact); the last
     * band, unbounded, counts as twice {@link #TOP}.
     */
    public double representativeLoad() {
        return upper == Integer.MAX_VALUE ? 2.0 * TOP : (lower + upper) / 2.0;
    }

    /** The upper bound as a number; null for the last band (JSON). */
    public Integer finiteUpper() {
        return upper == Integer.MAX_VALUE ? null : upper;
    }
}
