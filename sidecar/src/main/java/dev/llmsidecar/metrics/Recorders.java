package dev.llmsidecar.metrics;

import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Series.When;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.DoubleSupplier;

/**
 * The backends a measurement goes to (Prometheus, and OTLP when it is on), each taking a series when its declaration
 * says so: a value recorded as it happens goes to the backends that record the series {@link When#LIVE}; one recorded
 * when the request ends to those that record it at the end, for every request or, {@link When#END_OK}, successful
 * ones only. What is recorded where is decided by the declarations in {@link Contract}, not by the caller.
 *
 * <p>Label values are given by name ({@link LabelValues}) and must be exactly the series' labels: a value given to the
 * wrong label, one missing or one too many is refused here, when the series is bound, never exported as a wrong
 * series.
 *
 * <p>The optional labels, {@link Label#TENANT} and {@link Label#PRIORITY}, are declared on the series that may carry
 * them and exported only on those chosen ({@code sidecar.tenants.series}, {@code sidecar.priority.series}): callers
 * always pass a value, and on every other series it is dropped here, so each backend sees a series with one fixed
 * label set.
 */
public final class Recorders {

    /** Labels a deployment chooses series for; every other label of a series is always exported. */
    public static final List<Label> OPTIONAL = List.of(Label.TENANT, Label.PRIORITY);

    private final List<Recorder> recorders;
    /** Series declared with an optional label they do not export: the series as exported, without it. */
    private final Map<Series, Series> narrowed = new IdentityHashMap<>();
    /** For each narrowed series, the positions (in the declared order) of the labels it drops. */
    private final Map<Series, int[]> dropped = new IdentityHashMap<>();

    /** Without any optional label on any series. */
    public Recorders(List<Recorder> recorders) {
        this(recorders, Map.of());
    }

    /**
     * @param tenantSeries names (OpenTelemetry form) of the series that export the tenant label; each must be
     *     declared with it. No series exports the priority.
     */
    public Recorders(List<Recorder> recorders, Collection<String> tenantSeries) {
        this(recorders, Map.of(Label.TENANT, tenantSeries));
    }

    /**
     * @param chosen for each optional label, the names (OpenTelemetry form) of the series that export it; each must be
     *     declared with it. A label not in the map is exported nowhere.
     */
    public Recorders(List<Recorder> recorders, Map<Label, ? extends Collection<String>> chosen) {
        this.recorders = List.copyOf(recorders);
        chosen.forEach(Recorders::checkSeries);
        for (Series s : Contract.all()) {
            List<Label> labels = new ArrayList<>(s.labels());
            List<Integer> positions = new ArrayList<>();
            for (int i = 0; i < s.labels().size(); i++) {
                Label label = s.labels().get(i);
                Collection<String> chosenSeries = chosen.get(label);
                if (OPTIONAL.contains(label) && (chosenSeries == null || !chosenSeries.contains(s.name()))) {
                    positions.add(i);
                    labels.remove(label);
                }
            }
            if (!positions.isEmpty()) {
                narrowed.put(s, new Series(s.name(), s.kind(), s.unit(), s.description(), labels, s.buckets(),
                        s.prometheus(), s.otlp()));
                dropped.put(s, positions.stream().mapToInt(Integer::intValue).toArray());
            }
        }
    }

    /** Refuses a name that is not a series declared with a tenant label (a typo would silently drop the label). */
    public static void checkTenantSeries(Collection<String> tenantSeries) {
        checkSeries(Label.TENANT, tenantSeries);
    }

    /** Refuses a name that is not a series declared with {@code label} (a typo would silently drop the label). */
    public static void checkSeries(Label label, Collection<String> series) {
        if (!OPTIONAL.contains(label)) {
            throw new IllegalArgumentException(label + " is not an optional label: it is always exported");
        }
        TreeSet<String> unknown = new TreeSet<>(series);
        TreeSet<String> allowed = new TreeSet<>();
        for (Series s : Contract.all()) {
            if (s.labels().contains(label)) {
                allowed.add(s.name());
                unknown.remove(s.name());
            }
        }
        if (!unknown.isEmpty()) {
            String setting = label == Label.TENANT ? "sidecar.tenants.series" : "sidecar.priority.series";
            throw new IllegalArgumentException(setting + ": " + unknown + " cannot carry a " + label.prometheus()
                    + " label; these can: " + allowed);
        }
    }

    /** Whether {@code series} exports its tenant label (false also when it has none). */
    public boolean exportsTenant(Series series) {
        return exports(series, Label.TENANT);
    }

    /** Whether {@code series} exports {@code label} (false also when it has none). */
    public boolean exports(Series series, Label label) {
        return exported(series).labels().contains(label);
    }

    /** The series as a backend exports it (without the optional labels not chosen for it). */
    private Series exported(Series series) {
        Series exported = narrowed.get(series);
        return exported == null ? series : exported;
    }

    /** The values in the order of the series as exported: checked against the declared labels, unchosen dropped. */
    private Object[] positional(Series series, LabelValues values) {
        Object[] ordered = values.inOrderOf(series);
        int[] drop = dropped.get(series);
        return drop == null ? ordered : drop(ordered, drop);
    }

    private static Object[] drop(Object[] values, int[] positions) {
        Object[] kept = new Object[values.length - positions.length];
        int next = 0;
        int p = 0;
        for (int i = 0; i < values.length; i++) {
            if (p < positions.length && positions[p] == i) {
                p++;
            } else {
                kept[next++] = values[i];
            }
        }
        return kept;
    }

    public static Recorders of(Recorder... recorders) {
        return new Recorders(List.of(recorders));
    }

    public List<Recorder> all() {
        return recorders;
    }

    /** The classic bounds {@code series} is exported with (every backend uses the same), or none. */
    public List<Double> bounds(Series series) {
        for (Recorder r : recorders) {
            List<Double> b = r.bounds(series);
            if (!b.isEmpty()) {
                return b;
            }
        }
        return List.of();
    }

    /** A handle for values recorded as they happen (bind once, record many: chunk gaps, write delays). */
    public Bound live(Series series, LabelValues values) {
        Object[] v = positional(series, values);
        List<Bound> targets = new ArrayList<>(recorders.size());
        for (Recorder r : recorders) {
            if (series.when(r.backend()) == When.LIVE) {
                targets.add(r.bind(exported(series), v));
            }
        }
        return combine(targets);
    }

    /** A handle on the backends that record {@code series} when a request ends as {@code ok} says (many values). */
    public Bound ended(Series series, boolean ok, LabelValues values) {
        Object[] v = positional(series, values);
        if (recorders.size() == 1) {
            Recorder r = recorders.get(0);
            When when = series.when(r.backend());
            return when == When.END || (when == When.END_OK && ok) ? r.bind(exported(series), v) : Recorder.NOTHING;
        }
        List<Bound> targets = new ArrayList<>(recorders.size());
        for (Recorder r : recorders) {
            When when = series.when(r.backend());
            if (when == When.END || (when == When.END_OK && ok)) {
                targets.add(r.bind(exported(series), v));
            }
        }
        return combine(targets);
    }

    /** Records one value when a request has finished; {@code ok}: it succeeded. */
    public void end(Series series, boolean ok, double value, LabelValues values) {
        ended(series, ok, values).record(value);
    }

    /** A handle on every backend that has the series, whatever its timing (counters bound once and kept). */
    public Bound bound(Series series, LabelValues values) {
        Object[] v = positional(series, values);
        if (recorders.size() == 1) { // Prometheus alone, OTLP off: no list to combine (once per request and series)
            Recorder r = recorders.get(0);
            return series.on(r.backend()) ? r.bind(exported(series), v) : Recorder.NOTHING;
        }
        List<Bound> targets = new ArrayList<>(recorders.size());
        for (Recorder r : recorders) {
            if (series.on(r.backend())) {
                targets.add(r.bind(exported(series), v));
            }
        }
        return combine(targets);
    }

    /** A handle on a series without labels, on every backend that has it. */
    public Bound bound(Series series) {
        return bound(series, LabelValues.NONE);
    }

    /** Records one value of a series that is not about a request (a proxy event), on every backend that has it. */
    public void count(Series series, double value, LabelValues values) {
        bound(series, values).record(value);
    }

    /** Exports a counter with these label values at 0 from the start (a dashboard shows 0, not "No data"). */
    public void touch(Series series, LabelValues values) {
        if (series.kind() != Series.Kind.COUNTER) {
            throw new IllegalArgumentException(series + ": only counters start at 0");
        }
        bound(series, values).record(0);
    }

    /** A gauge (or an externally kept counter) on every backend that has the series. */
    public void observe(Series series, DoubleSupplier value, LabelValues values) {
        Object[] v = positional(series, values);
        for (Recorder r : recorders) {
            if (series.on(r.backend())) {
                r.observe(exported(series), value, v);
            }
        }
    }

    /** A gauge without labels on every backend that has the series. */
    public void observe(Series series, DoubleSupplier value) {
        observe(series, value, LabelValues.NONE);
    }

    /** A histogram someone else aggregates (the engine's own phases), read at collection time, on every backend. */
    public void observeHistogram(Series series, java.util.function.Supplier<CumulativeHistogram> value,
            LabelValues values) {
        Object[] v = positional(series, values);
        for (Recorder r : recorders) {
            if (series.on(r.backend())) {
                r.observeHistogram(exported(series), value, v);
            }
        }
    }

    private static Bound combine(List<Bound> targets) {
        return switch (targets.size()) {
            case 0 -> Recorder.NOTHING;
            case 1 -> targets.get(0);
            default -> {
                Bound[] all = targets.toArray(Bound[]::new);
                yield new Bound() {
                    @Override
                    public void record(double value) {
                        for (Bound b : all) {
                            b.record(value);
                        }
                    }

                    @Override
                    public void record(double value, long count) {
                        for (Bound b : all) {
                            b.record(value, count);
                        }
                    }
                };
            }
        };
    }
}
