package dev.llmsidecar.metrics;

import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/** One backend's side of the contract: Micrometer (Prometheus) or the OpenTelemetry SDK (OTLP). */
public interface Recorder {

    /** Records into one series with one set of label values. */
    interface Bound {
        /** A histogram observation (seconds for a seconds series) or a counter increment. */
        void record(double value);

        /**
         * {@code count} histogram observations of {@code value} (a counter: value * count). A backend that can add
         * them at once does: the samples of a request's token-weighted ITL come as (value, count) pairs.
         */
        default void record(double value, long count) {
            for (long i = 0; i < count; i++) {
                record(value);
            }
        }
    }

    Bound NOTHING = new Bound() {
        @Override
        public void record(double value) {
        }

        @Override
        public void record(double value, long count) {
        }
    };

    Backend backend();

    /** The classic bucket bounds this backend exports {@code series} with (a histogram), or none. */
    default java.util.List<Double> bounds(Series series) {
        return java.util.List.of();
    }

    /**
     * The handle of {@code series} with {@code values}, one per label of the series in its order (String, Boolean for
     * a boolean label, Long for a long one; null leaves an OTLP-only attribute out). Created on first use, then found
     * by one map lookup.
     */
    Bound bind(Series series, Object... values);

    /**
     * A gauge, or a counter whose cumulative value someone else keeps (the engine's own counts), read at collection
     * time.
     */
    void observe(Series series, DoubleSupplier value, Object... values);

    /**
     * A histogram aggregated elsewhere (the engine's own), exported with its own bucket bounds: {@code value} is read at
     * collection time and gives the cumulative state then, or null for none (no point is exported: a histogram that
     * cannot be read must not look live). Values as for {@link #bind}.
     */
    void observeHistogram(Series series, Supplier<CumulativeHistogram> value, Object... values);
}
