package dev.llmsidecar.metrics;

import io.prometheus.metrics.model.snapshots.Labels;

/**
 * The trace a histogram observation belongs to, for its bucket's exemplar: the span current on the recording thread.
 * {@link #sampled()} is asked on every observation and must be cheap and allocation-free; {@link #labels()} only
 * when an exemplar is taken (rate-limited per bucket).
 */
public interface ExemplarSource {

    /** No tracing: no exemplars. */
    ExemplarSource NONE = new ExemplarSource() {
        @Override
        public boolean sampled() {
            return false;
        }

        @Override
        public Labels labels() {
            return Labels.EMPTY;
        }
    };

    /** Whether a sampled span is current on this thread. */
    boolean sampled();

    /** {@code trace_id} and {@code span_id} of the current span (empty when none). */
    Labels labels();
}
