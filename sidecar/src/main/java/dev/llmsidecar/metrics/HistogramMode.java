package dev.llmsidecar.metrics;

import java.util.Locale;

/**
 * How the contract's own histograms are exposed on /q/metrics ({@code sidecar.metrics.histograms}): classic buckets
 * (one series per bound), Prometheus native histograms (one series per label set, base-2 exponential buckets, sent
 * in the protobuf format only), or both in one histogram, so that a scraper that negotiates protobuf stores the
 * native one and any other reads the classic buckets.
 */
public enum HistogramMode {
    CLASSIC, BOTH, NATIVE;

    public boolean classic() {
        return this != NATIVE;
    }

    public boolean nativeBuckets() {
        return this != CLASSIC;
    }

    /** Parses a mode name (case-insensitive). */
    public static HistogramMode of(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("sidecar.metrics.histograms must be classic, both or native: " + name);
        }
    }
}
