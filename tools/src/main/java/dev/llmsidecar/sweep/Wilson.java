package dev.llmsidecar.sweep;

/**
 * The Wilson score interval of a share (good requests out of judged ones): the set of true shares p whose normal test
 * would not reject the observed share p̂ = k / n at level z,
 * (p̂ + z²/2n ± z·√(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n). Unlike p̂ ± z·√(p̂(1 − p̂)/n) it stays inside [0, 1] and
 * does not collapse to a point at 0 or n good requests, which is where an SLO share near 0.99 lives (Newcombe 1998,
 * method 3; E. B. Wilson 1927).
 */
public final class Wilson {

    /** The two-sided 95 % normal quantile, Φ⁻¹(0.975). */
    public static final double Z95 = 1.959963984540054;

    private Wilson() {
    }

    /**
     * The interval {lower, upper} for {@code good} of {@code n} at quantile {@code z}; {NaN, NaN} when n is 0. Counts
     * may be fractional (the histogram estimate's share × requests).
     */
    public static double[] interval(double good, double n, double z) {
        if (!(n > 0) || good < 0 || good > n) {
            return new double[] {Double.NaN, Double.NaN};
        }
        double p = good / n;
        double z2 = z * z;
        double d = 1 + z2 / n;
        double centre = (p + z2 / (2 * n)) / d;
        double half = z / d * Math.sqrt(p * (1 - p) / n + z2 / (4 * n * n));
        return new double[] {Math.max(0, centre - half), Math.min(1, centre + half)};
    }

    /** The 95 % interval. */
    public static double[] interval95(double good, double n) {
        return interval(good, n, Z95);
    }
}
