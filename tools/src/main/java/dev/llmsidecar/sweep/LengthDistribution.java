package dev.llmsidecar.sweep;

import java.util.Locale;
import java.util.Random;

/**
 * A distribution of token lengths (prompt or output), drawn with the sweep's seeded {@link Random}.
 *
 * <p>Specs: {@code N} or {@code fixed:N}; {@code uniform:MIN,MAX}; {@code normal:MEAN,SD[,min=A][,max=B]};
 * {@code lognormal:MEAN,SD[,min=A][,max=B]} (MEAN and SD of the lengths themselves; the underlying normal has
 * sigma^2 = ln(1 + SD^2/MEAN^2) and mu = ln(MEAN) - sigma^2/2). Bounds default to min=1 and max=MEAN+6*SD; a draw
 * outside them is drawn again (a truncated distribution), up to 100 times, then clamped. Draws are rounded to the
 * nearest integer.
 */
public interface LengthDistribution {

    /** One length, at least 1. */
    int sample(Random random);

    /** The spec, normalised, for the report. */
    String describe();

    /** Parses a spec; {@code what} names the option in error messages. */
    static LengthDistribution parse(String spec, String what) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException(what + ": empty length spec");
        }
        String s = spec.strip().toLowerCase(Locale.ROOT);
        int colon = s.indexOf(':');
        String kind = colon < 0 ? "fixed" : s.substring(0, colon);
        String args = colon < 0 ? s : s.substring(colon + 1);
        String[] parts = args.split(",");
        try {
            switch (kind) {
                case "fixed" -> {
                    int n = positiveInt(parts[0], what);
                    if (parts.length != 1) {
                        throw new IllegalArgumentException(what + ": fixed takes one length: " + spec);
                    }
                    return new Fixed(n);
                }
                case "uniform" -> {
                    if (parts.length != 2) {
                        throw new IllegalArgumentException(what + ": uniform:MIN,MAX expected: " + spec);
                    }
                    int min = positiveInt(parts[0], what);
                    int max = positiveInt(parts[1], what);
                    if (max < min) {
                        throw new IllegalArgumentException(what + ": uniform max below min: " + spec);
                    }
                    return new Uniform(min, max);
                }
                case "normal", "lognormal" -> {
                    if (parts.length < 2) {
                        throw new IllegalArgumentException(what + ": " + kind + ":MEAN,SD[,min=A][,max=B] expected: "
                                + spec);
                    }
                    double mean = Double.parseDouble(parts[0].strip());
                    double sd = Double.parseDouble(parts[1].strip());
                    if (!(mean >= 1) || !(sd >= 0) || Double.isInfinite(mean) || Double.isInfinite(sd)) {
                        throw new IllegalArgumentException(what + ": mean must be >= 1 and sd >= 0: " + spec);
                    }
                    int min = 1;
                    int max = (int) Math.min(Integer.MAX_VALUE / 2, Math.ceil(mean + 6 * sd));
                    for (int i = 2; i < parts.length; i++) {
                        String p = parts[i].strip();
                        if (p.startsWith("min=")) {
                            min = positiveInt(p.substring(4), what);
                        } else if (p.startsWith("max=")) {
                            max = positiveInt(p.substring(4), what);
                        } else {
                            throw new IllegalArgumentException(what + ": unknown part '" + p + "' in " + spec);
                        }
                    }
                    if (max < min) {
                        throw new IllegalArgumentException(what + ": max below min: " + spec);
                    }
                    return kind.equals("normal") ? new Normal(mean, sd, min, max) : new LogNormal(mean, sd, min, max);
                }
                default -> throw new IllegalArgumentException(what + ": unknown distribution '" + kind
                        + "' (fixed, uniform, normal, lognormal): " + spec);
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + ": not a number in " + spec, e);
        }
    }

    private static int positiveInt(String s, String what) {
        int n;
        try {
            n = Integer.parseInt(s.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + ": not a whole number: " + s, e);
        }
        if (n < 1) {
            throw new IllegalArgumentException(what + ": lengths are at least 1: " + s);
        }
        return n;
    }

    /** Always n. */
    record Fixed(int n) implements LengthDistribution {
        @Override
        public int sample(Random random) {
            return n;
        }

        @Override
        public String describe() {
            return "fixed:" + n;
        }
    }

    /** Uniform on [min, max]. */
    record Uniform(int min, int max) implements LengthDistribution {
        @Override
        public int sample(Random random) {
            return min + random.nextInt(max - min + 1);
        }

        @Override
        public String describe() {
            return "uniform:" + min + "," + max;
        }
    }

    /** Normal, truncated to [min, max]. */
    record Normal(double mean, double sd, int min, int max) implements LengthDistribution {
        @Override
        public int sample(Random random) {
            return bounded(() -> mean + sd * random.nextGaussian(), min, max);
        }

        @Override
        public String describe() {
            return String.format(Locale.ROOT, "normal:%s,%s,min=%d,max=%d", num(mean), num(sd), min, max);
        }
    }

    /** Log-normal with the given mean and sd of the lengths, truncated to [min, max]. */
    record LogNormal(double mean, double sd, int min, int max) implements LengthDistribution {
        @Override
        public int sample(Random random) {
            double sigma2 = Math.log(1 + (sd * sd) / (mean * mean));
            double mu = Math.log(mean) - sigma2 / 2;
            double sigma = Math.sqrt(sigma2);
            return bounded(() -> Math.exp(mu + sigma * random.nextGaussian()), min, max);
        }

        @Override
        public String describe() {
            return String.format(Locale.ROOT, "lognormal:%s,%s,min=%d,max=%d", num(mean), num(sd), min, max);
        }
    }

    private static int bounded(java.util.function.DoubleSupplier draw, int min, int max) {
        double v = draw.getAsDouble();
        for (int tries = 1; tries < 100 && (Math.round(v) < min || Math.round(v) > max); tries++) {
            v = draw.getAsDouble();
        }
        return (int) Math.max(min, Math.min(max, Math.round(v)));
    }

    private static String num(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
