package dev.llmsidecar.export.contract;

import dev.llmsidecar.export.contract.Recorder.Bound;
import dev.llmsidecar.export.contract.Series.When;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleSupplier;

/**
 * The backends a measurement goes to (Prometheus, and OTLP when it is on), each taking a series when its declaration
 * says so: a value recorded as it happens goes to the backends that record the series {@link When#LIVE}; one recorded
 * when the request ends to those that record it at the end, for every request or, {@link When#END_OK}, successful
 * ones only. What is recorded where is decided by the declarations in {@link Contract}, not by the caller.
 */
public final class Recorders {

    private final List<Recorder> recorders;

    public Recorders(List<Recorder> recorders) {
        this.recorders = List.copyOf(recorders);
    }

    public static Recorders of(Recorder... recorders) {
        return new Recorders(List.of(recorders));
    }

    /** Prometheus only, with the default buckets (tests, and parts that export no histogram). */
    public static Recorders prometheus(io.micrometer.core.instrument.MeterRegistry registry) {
        return of(new MicrometerRecorder(registry, new Buckets(Buckets.Preset.DEFAULT, List.of(), List.of(),
                List.of())));
    }

    public List<Recorder> all() {
        return recorders;
    }

    /** A handle for values recorded as they happen (bind once, record many: chunk gaps, write delays). */
    public Bound live(Series series, Object... values) {
        List<Bound> targets = new ArrayList<>(recorders.size());
        for (Recorder r : recorders) {
            if (series.when(r.backend()) == When.LIVE) {
                targets.add(r.bind(series, values));
            }
        }
        return combine(targets);
    }

    /** Records one value when a request has finished; {@code ok}: it succeeded. */
    public void end(Series series, boolean ok, double value, Object... values) {
        for (Recorder r : recorders) {
            When when = series.when(r.backend());
            if (when == When.END || (when == When.END_OK && ok)) {
                r.bind(series, values).record(value);
            }
        }
    }

    /** A handle on the backends that record {@code series} when a request ends as {@code ok} says (many values). */
    public Bound ended(Series series, boolean ok, Object... values) {
        List<Bound> targets = new ArrayList<>(recorders.size());
        for (Recorder r : recorders) {
            When when = series.when(r.backend());
            if (when == When.END || (when == When.END_OK && ok)) {
                targets.add(r.bind(series, values));
            }
        }
        return combine(targets);
    }

    /** Records one value of a series that is not about a request (a proxy event), on every backend that has it. */
    public void count(Series series, double value, Object... values) {
        for (Recorder r : recorders) {
            if (series.on(r.backend())) {
                r.bind(series, values).record(value);
            }
        }
    }

    /** A handle on every backend that has the series, whatever its timing (counters bound once and kept). */
    public Bound bound(Series series, Object... values) {
        List<Bound> targets = new ArrayList<>(recorders.size());
        for (Recorder r : recorders) {
            if (series.on(r.backend())) {
                targets.add(r.bind(series, values));
            }
        }
        return combine(targets);
    }

    /** Exports a counter with these label values at 0 from the start (a dashboard shows 0, not "No data"). */
    public void touch(Series series, Object... values) {
        if (series.kind() != Series.Kind.COUNTER) {
            throw new IllegalArgumentException(series + ": only counters start at 0");
        }
        bound(series, values).record(0);
    }

    /** A gauge (or an externally kept counter) on every backend that has the series. */
    public void observe(Series series, DoubleSupplier value, Object... values) {
        for (Recorder r : recorders) {
            if (series.on(r.backend())) {
                r.observe(series, value, values);
            }
        }
    }

    private static Bound combine(List<Bound> targets) {
        return switch (targets.size()) {
            case 0 -> Recorder.NOTHING;
            case 1 -> targets.get(0);
            default -> {
                Bound[] all = targets.toArray(Bound[]::new);
                yield value -> {
                    for (Bound b : all) {
                        b.record(value);
                    }
                };
            }
        };
    }
}
