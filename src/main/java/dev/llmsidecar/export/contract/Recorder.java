package dev.llmsidecar.export.contract;

import java.util.function.DoubleSupplier;

/** One backend's side of the contract: Micrometer (Prometheus) or the OpenTelemetry SDK (OTLP). */
public interface Recorder {

    /** Records into one series with one set of label values. */
    interface Bound {
        /** A histogram observation (seconds for a seconds series) or a counter increment. */
        void record(double value);
    }

    Bound NOTHING = value -> {
    };

    Backend backend();

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
}
