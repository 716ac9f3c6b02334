package dev.llmsidecar.load;

import java.util.Arrays;
import java.util.Random;

/**
 * Open-loop arrivals: a Poisson process at a target rate, i.e. independent exponential gaps with mean 1/rate,
 * drawn from a seeded {@link Random} (the same seed gives the same schedule). Arrivals do not wait for earlier
 * requests to finish, so a server past its capacity builds a queue, as under real traffic (vllm bench serve's
 * {@code --request-rate} with burstiness 1, GuideLLM's poisson profile).
 */
public final class PoissonArrivals {

    private final double ratePerSecond;
    private final Random random;
    private double t;

    public PoissonArrivals(double ratePerSecond, long seed) {
        if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond)) {
            throw new IllegalArgumentException("rate must be a positive number: " + ratePerSecond);
        }
        this.ratePerSecond = ratePerSecond;
        this.random = new Random(seed);
    }

    public double rate() {
        return ratePerSecond;
    }

    /** Offset of the next arrival from the start, in nanoseconds. */
    public long nextNanos() {
        // inverse transform: -ln(U) / rate, U in (0, 1]
        t += -Math.log(1 - random.nextDouble()) / ratePerSecond;
        return (long) (t * 1e9);
    }

    /** Every arrival offset below {@code durationNanos}, at most {@code maxCount} of them. */
    public static long[] schedule(double ratePerSecond, long seed, long durationNanos, int maxCount) {
        PoissonArrivals arrivals = new PoissonArrivals(ratePerSecond, seed);
        long[] out = new long[Math.max(0, Math.min(maxCount, 1024))];
        int n = 0;
        while (n < maxCount) {
            long next = arrivals.nextNanos();
            if (next >= durationNanos) {
                break;
            }
            if (n == out.length) {
                out = Arrays.copyOf(out, Math.min(maxCount, out.length * 2));
            }
            out[n++] = next;
        }
        return Arrays.copyOf(out, n);
    }
}
