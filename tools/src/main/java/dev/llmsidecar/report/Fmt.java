package dev.llmsidecar.report;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Locale;

/** Number formatting of the tools' reports: locale-independent, "—" where there is no number. */
public final class Fmt {

    /** What a cell shows for a missing number (NaN). */
    public static final String NONE = "—";

    private Fmt() {
    }

    /** {@code digits} significant digits without an exponent (whole numbers from 10^digits up). */
    public static String sig(double v, int digits) {
        if (Double.isNaN(v)) {
            return NONE;
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "+Inf" : "-Inf";
        }
        if (v == 0) {
            return "0";
        }
        if (Math.abs(v) >= Math.pow(10, digits)) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return new BigDecimal(v).round(new MathContext(digits)).stripTrailingZeros().toPlainString();
    }

    /** Fixed decimals. */
    public static String fixed(double v, int decimals) {
        return Double.isNaN(v) ? NONE : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    /** Fixed decimals with a sign ({@code +12}, {@code -3}). */
    public static String signed(double v, int decimals) {
        return Double.isNaN(v) ? NONE : String.format(Locale.ROOT, "%+." + decimals + "f", v);
    }
}
