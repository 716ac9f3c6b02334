package dev.llmsidecar.slo;

import dev.llmsidecar.config.SidecarConfig;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * SLO targets a request declares in its headers (sidecar.slo.declared; llm-d's {@code x-llm-d-slo-ttft-ms} and
 * {@code x-llm-d-slo-tpot-ms}). A declared value is clamped to the configured bounds and judges the request itself;
 * the request is counted under the objective of the smallest configured bucket at or above it
 * ({@code declared:ttft<=500ms}), so callers cannot create series at will: there are as many objectives as buckets.
 * A value that does not parse is counted and ignored; a request whose every value is ignored declares nothing, and the
 * configured objectives judge it.
 */
public final class DeclaredTargets {

    /** The SLO class of a request that declared a target. */
    public static final String SLO_CLASS = "declared";
    /** Prefix of the declared buckets' objective names; configured objectives may not use it. */
    public static final String PREFIX = "declared:";
    /** Longest header value parsed (a millisecond count needs far fewer characters). */
    private static final int MAX_LENGTH = 16;
    private static final List<Pattern> ANY_MODEL = List.of(Pattern.compile(".*"));

    /** How a declared value was taken. */
    public enum Handling {
        ACCEPTED, CLAMPED, UNPARSEABLE,
        /** Declared by a caller that is not trusted to declare ({@link DeclaredTrust}): not read at all. */
        REFUSED;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Where each declared value's handling is counted. */
    @FunctionalInterface
    public interface Counter {
        void declared(Criterion criterion, Handling handling);
    }

    private final boolean enabled;
    private final List<String> ttftHeaders;
    private final List<String> tpotHeaders;
    private final Buckets ttft;
    private final Buckets tpot;

    public DeclaredTargets(SidecarConfig.Slo.Declared config) {
        this.enabled = config.enabled();
        this.ttftHeaders = List.copyOf(config.ttftHeaders());
        this.tpotHeaders = List.copyOf(config.tpotHeaders());
        double target = config.target();
        if (!(target > 0 && target < 1)) {
            throw new IllegalArgumentException("sidecar.slo.declared.target must be in (0, 1): " + target);
        }
        this.ttft = new Buckets(Criterion.TTFT, config.ttftBuckets(), config.ttftMin(), config.ttftMax(),
                target, "sidecar.slo.declared.ttft");
        this.tpot = new Buckets(Criterion.TPOT, config.tpotBuckets(), config.tpotMin(), config.tpotMax(),
                target, "sidecar.slo.declared.tpot");
    }

    public boolean enabled() {
        return enabled;
    }

    /** One objective per bucket (its threshold the bucket's bound): the series that exist, and their targets. */
    public List<Objective> bucketObjectives() {
        if (!enabled) {
            return List.of();
        }
        List<Objective> all = new ArrayList<>(ttft.objectives());
        all.addAll(tpot.objectives());
        return all;
    }

    /**
     * The objectives a request declared (each named after its bucket, judging the request's own clamped value), or
     * null when it declared none that could be read (or declared targets are off).
     *
     * @param headers header lookup (case-insensitive, null when absent)
     */
    public List<Objective> of(UnaryOperator<String> headers, Counter counter) {
        if (!enabled) {
            return null;
        }
        Objective t = ttft.declared(first(headers, ttftHeaders), counter);
        Objective p = tpot.declared(first(headers, tpotHeaders), counter);
        if (t == null && p == null) {
            return null;
        }
        return t == null ? List.of(p) : p == null ? List.of(t) : List.of(t, p);
    }

    /** Whether the request carries any declaring header (its value unread). */
    public boolean declaresAny(UnaryOperator<String> headers) {
        return enabled && (first(headers, ttftHeaders) != null || first(headers, tpotHeaders) != null);
    }

    /** A caller that may not declare did: each criterion it declared is counted as refused, nothing is judged. */
    public void refuse(UnaryOperator<String> headers, Counter counter) {
        if (first(headers, ttftHeaders) != null) {
            counter.declared(Criterion.TTFT, Handling.REFUSED);
        }
        if (first(headers, tpotHeaders) != null) {
            counter.declared(Criterion.TPOT, Handling.REFUSED);
        }
    }

    private static String first(UnaryOperator<String> headers, List<String> names) {
        for (String name : names) {
            String value = headers.apply(name);
            if (value != null) {
                return value;
            }
        }
        return null;
    }

    /** Milliseconds, a positive decimal ({@code 500}, {@code 12.5}), as nanoseconds; -1 when it is not one. */
    static long parseMillis(String value) {
        String s = value.trim();
        if (s.isEmpty() || s.length() > MAX_LENGTH) {
            return -1;
        }
        int dot = -1;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '.' && dot < 0 && i > 0 && i < s.length() - 1) {
                dot = i;
            } else if (c < '0' || c > '9') {
                return -1;
            }
        }
        BigDecimal nanos = new BigDecimal(s).movePointRight(6);
        if (nanos.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            return Long.MAX_VALUE; // a number, only too large: clamped to the largest bound like any other
        }
        long n = nanos.longValue();
        return n > 0 ? n : -1;
    }

    /** "500ms", "12.5ms": a bucket's name in milliseconds, as the headers state them. */
    static String millis(long nanos) {
        return new BigDecimal(nanos).movePointLeft(6).stripTrailingZeros().toPlainString() + "ms";
    }

    /** One declared criterion: its buckets (an objective each), its bounds, its clamping. */
    private static final class Buckets {
        private final Criterion criterion;
        private final long[] bounds;
        private final List<Objective> objectives;
        private final long min;
        private final long max;
        private final double target;

        Buckets(Criterion criterion, List<Duration> buckets, Duration min, Optional<Duration> max, double target,
                String setting) {
            this.criterion = criterion;
            this.target = target;
            this.bounds = buckets.stream().mapToLong(Duration::toNanos).sorted().distinct().toArray();
            if (bounds.length == 0 || bounds[0] <= 0) {
                throw new IllegalArgumentException(setting + "-buckets: at least one, each positive: " + buckets);
            }
            this.min = min.toNanos();
            this.max = max.map(Duration::toNanos).orElse(bounds[bounds.length - 1]);
            if (this.min <= 0 || this.min > this.max || this.max > bounds[bounds.length - 1]) {
                throw new IllegalArgumentException(setting + "-min and -max: 0 < min <= max <= the largest bucket ("
                        + millis(bounds[bounds.length - 1]) + "): " + min + ", " + max.map(Duration::toString).orElse("unset"));
            }
            List<Objective> list = new ArrayList<>(bounds.length);
            for (long bound : bounds) {
                list.add(objective(criterion, name(bound), bound, target));
            }
            this.objectives = List.copyOf(list);
        }

        List<Objective> objectives() {
            return objectives;
        }

        private String name(long bound) {
            return PREFIX + criterion.label() + "<=" + millis(bound);
        }

        /** The objective judging a declared header value, or null when there is none or it does not parse. */
        Objective declared(String value, Counter counter) {
            if (value == null) {
                return null;
            }
            long nanos = parseMillis(value);
            if (nanos < 0) {
                counter.declared(criterion, Handling.UNPARSEABLE);
                return null;
            }
            long clamped = Math.max(min, Math.min(max, nanos));
            counter.declared(criterion, clamped == nanos ? Handling.ACCEPTED : Handling.CLAMPED);
            int bucket = 0;
            while (bounds[bucket] < clamped) {
                bucket++; // max <= the largest bound: it ends there at the latest
            }
            return objective(criterion, objectives.get(bucket).name(), clamped, target);
        }
    }

    static Objective objective(Criterion criterion, String name, long nanos, double target) {
        return new Objective(name, ANY_MODEL, SLO_CLASS, criterion == Criterion.TTFT ? nanos : -1,
                criterion == Criterion.TPOT ? nanos : -1, -1, -1, 0.99, target, false);
    }
}
