package dev.llmsidecar.support;

import java.util.ArrayList;
import java.util.List;

/**
 * The timing tests' rule for their reference (docs/reliability.md, "The reference"): a bound holds for the sidecar's
 * figure less the reference's delay at the same quantile, but the reference may subtract at most {@link #CAP_MS}; it
 * explains load, it may not explain a defect away (a 2 ms hold less at most 1 ms still shows). A run the reference
 * (or the test's own view of its machine) finds disturbed is run again, twice at most, and then fails as
 * inconclusive: it never passes.
 */
public final class CappedReference {

    /** The most of the reference's delay a bound may subtract (ms). */
    public static final double CAP_MS = 1.0;
    /** Runs at most, the first one included. */
    public static final int ATTEMPTS = 3;

    private CappedReference() {
    }

    /** One run of a timing test; {@code attempt} counts from 0. */
    public interface Measure<R> {
        R run(int attempt) throws Exception;
    }

    /** What disturbed a run, or null when nothing did. */
    public interface Disturbance<R> {
        String of(R run);
    }

    /** {@code value} less the reference's figure at the same quantile, less at most {@link #CAP_MS} of it. */
    public static double beyond(double value, double reference) {
        return value - Math.min(reference, CAP_MS);
    }

    /**
     * The first of at most {@link #ATTEMPTS} runs that nothing disturbed; none: an "inconclusive" failure that names
     * each run's disturbance and {@code rule}.
     */
    public static <R> R firstUndisturbed(Measure<R> measure, Disturbance<R> disturbance, String rule)
            throws Exception {
        List<String> disturbed = new ArrayList<>();
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            R run = measure.run(attempt);
            String why = disturbance.of(run);
            if (why == null) {
                return run;
            }
            disturbed.add(why);
        }
        throw new AssertionError("inconclusive: " + ATTEMPTS + " runs disturbed, at the median " + disturbed + " ("
                + rule + ")");
    }
}
