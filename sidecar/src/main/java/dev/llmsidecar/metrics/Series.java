package dev.llmsidecar.metrics;

import java.util.List;
import java.util.Locale;

/**
 * One exported series, declared once: the name (OpenTelemetry's dotted form; the Prometheus name follows from it the
 * way Micrometer writes it), the instrument, the unit, the description, the labels, the bucket family, and when each
 * backend records it. Both exporters are built from these declarations ({@link Contract}), and docs/metrics.md is
 * kept in step with them by a test.
 *
 * @param prometheus when the Prometheus side records it ({@link When#NEVER}: OTLP only)
 * @param otlp when the OTLP side records it ({@link When#NEVER}: Prometheus only)
 */
public record Series(String name, Kind kind, String unit, String description, List<Label> labels, Buckets.Family buckets,
        When prometheus, When otlp) {

    public enum Kind { COUNTER, HISTOGRAM, GAUGE }

    /** When a value is recorded, and for which requests. */
    public enum When {
        /** As it happens, while the request runs (before its outcome is known): every request. */
        LIVE,
        /** When the request has finished: every request. */
        END,
        /** When the request has finished, successful ones only (OTel GenAI: TTFT and TPOT of successful requests). */
        END_OK,
        /** Not exported by this backend. */
        NEVER
    }

    public Series {
        labels = List.copyOf(labels);
    }

    /** The Prometheus series name, as Micrometer writes it (seconds get _seconds, counters _total). */
    public String prometheusName() {
        String base = name.replace('.', '_');
        if (kind != Kind.COUNTER && "s".equals(unit)) {
            return base + "_seconds";
        }
        return kind == Kind.COUNTER ? base + "_total" : base;
    }

    /** The labels a Prometheus series carries (OTLP-only attributes left out). */
    public List<Label> prometheusLabels() {
        return labels.stream().filter(l -> !l.otelOnly()).toList();
    }

    public boolean seconds() {
        return "s".equals(unit);
    }

    public boolean on(Backend backend) {
        return (backend == Backend.PROMETHEUS ? prometheus : otlp) != When.NEVER;
    }

    public When when(Backend backend) {
        return backend == Backend.PROMETHEUS ? prometheus : otlp;
    }

    @Override
    public String toString() {
        return name + " (" + kind.name().toLowerCase(Locale.ROOT) + ")";
    }
}
