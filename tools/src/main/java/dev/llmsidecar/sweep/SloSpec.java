package dev.llmsidecar.sweep;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The SLO a sweep judges each step by: thresholds on TTFT, TPOT and E2E (seconds; NaN = not set) and the target
 * share of good requests. A request is good when it completed and met every threshold set (as the sidecar's
 * objectives and {@code vllm bench serve --goodput} judge it).
 *
 * <p>Spec: {@code ttft=0.5,tpot=0.05[,e2e=10][,target=0.99]}; a value may end in {@code ms} or {@code s}.
 */
public record SloSpec(double ttft, double tpot, double e2e, double target) {

    public static SloSpec parse(String spec) {
        double ttft = Double.NaN;
        double tpot = Double.NaN;
        double e2e = Double.NaN;
        double target = 0.99;
        for (String part : spec.split(",")) {
            String p = part.strip().toLowerCase(Locale.ROOT);
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("--slo: KEY=VALUE expected, got '" + part + "'");
            }
            String key = p.substring(0, eq).strip();
            String value = p.substring(eq + 1).strip();
            switch (key) {
                case "ttft" -> ttft = seconds(value, key);
                case "tpot" -> tpot = seconds(value, key);
                case "e2e", "e2el" -> e2e = seconds(value, key);
                case "target" -> {
                    try {
                        target = Double.parseDouble(value);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--slo: target is not a number: " + value);
                    }
                    if (!(target > 0 && target <= 1)) {
                        throw new IllegalArgumentException("--slo: target must be in (0, 1]: " + value);
                    }
                }
                case "itl" -> throw new IllegalArgumentException("--slo: itl is judged per request at a quantile of "
                        + "its own gaps, which no histogram can give; configure it as a sidecar objective and name it "
                        + "with --slo-objective");
                default -> throw new IllegalArgumentException("--slo: unknown key '" + key + "' (ttft, tpot, e2e, "
                        + "target)");
            }
        }
        if (Double.isNaN(ttft) && Double.isNaN(tpot) && Double.isNaN(e2e)) {
            throw new IllegalArgumentException("--slo: set at least one of ttft, tpot, e2e");
        }
        return new SloSpec(ttft, tpot, e2e, target);
    }

    private static double seconds(String value, String key) {
        double divisor = 1;
        String v = value;
        if (v.endsWith("ms")) {
            divisor = 1000;
            v = v.substring(0, v.length() - 2);
        } else if (v.endsWith("s")) {
            v = v.substring(0, v.length() - 1);
        }
        double d;
        try {
            d = Double.parseDouble(v.strip()) / divisor;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--slo: " + key + " is not a duration: " + value);
        }
        if (!(d > 0) || Double.isInfinite(d)) {
            throw new IllegalArgumentException("--slo: " + key + " must be positive: " + value);
        }
        return d;
    }

    /** The criteria set, for the report: "TTFT <= 0.5 s and TPOT <= 0.05 s". */
    public String describe() {
        List<String> parts = new ArrayList<>();
        if (!Double.isNaN(ttft)) {
            parts.add("TTFT ≤ " + fmt(ttft) + " s");
        }
        if (!Double.isNaN(tpot)) {
            parts.add("TPOT ≤ " + fmt(tpot) + " s");
        }
        if (!Double.isNaN(e2e)) {
            parts.add("E2E ≤ " + fmt(e2e) + " s");
        }
        return String.join(" and ", parts) + ", target " + fmt(Math.round(target * 1e6) / 1e4) + " % of requests";
    }

    /** The same SLO as sidecar properties of an objective named {@code name} ({@code --sim} starts it with them). */
    public List<String> asSidecarProperties(String name) {
        List<String> props = new ArrayList<>();
        String prefix = "sidecar.slo.objectives." + name + ".";
        if (!Double.isNaN(ttft)) {
            props.add(prefix + "ttft=" + duration(ttft));
        }
        if (!Double.isNaN(tpot)) {
            props.add(prefix + "tpot=" + duration(tpot));
        }
        if (!Double.isNaN(e2e)) {
            props.add(prefix + "e2e=" + duration(e2e));
        }
        props.add(prefix + "target=" + target);
        return props;
    }

    private static String duration(double seconds) {
        return "PT" + new java.math.BigDecimal(Double.toString(seconds)).stripTrailingZeros().toPlainString() + "S";
    }

    static String fmt(double v) {
        return new java.math.BigDecimal(Double.toString(v)).stripTrailingZeros().toPlainString();
    }
}
