package dev.llmsidecar.metrics.prometheus;

import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Series;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.MetricType;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricMetadata;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.function.DoubleSupplier;

/**
 * One counter series of the contract on a Prometheus client registry: label sets the sidecar counts (a
 * {@link DoubleAdder} each, so event loops never contend on a lock) and label sets whose value is kept elsewhere (the
 * engine's own counters, passed through), read at scrape time.
 */
final class PrometheusCounter implements Collector {

    private record Entry(Labels labels, DoubleSupplier value) {
    }

    private final MetricMetadata metadata;
    private final String[] labelNames;
    private final List<Entry> entries = new CopyOnWriteArrayList<>();

    PrometheusCounter(Series series) {
        if (series.kind() != Series.Kind.COUNTER) {
            throw new IllegalArgumentException(series + " is not a counter");
        }
        String name = series.prometheusName();
        // client_java adds _total itself
        this.metadata = new MetricMetadata(name.substring(0, name.length() - "_total".length()), series.description());
        this.labelNames = series.prometheusLabels().stream().map(Label::prometheus).toArray(String[]::new);
    }

    /** A counted label set: its handle adds to it. */
    Bound counted(List<String> labelValues) {
        DoubleAdder total = new DoubleAdder();
        entries.add(new Entry(labels(labelValues), total::sum));
        return total::add;
    }

    /** A label set whose cumulative value {@code value} reads. */
    void observed(List<String> labelValues, DoubleSupplier value) {
        entries.add(new Entry(labels(labelValues), value));
    }

    private Labels labels(List<String> values) {
        if (values.size() != labelNames.length) {
            throw new IllegalArgumentException(metadata.getName() + " has labels " + List.of(labelNames) + ", got "
                    + values);
        }
        return Labels.of(labelNames, values.toArray(String[]::new));
    }

    @Override
    public CounterSnapshot collect() {
        List<CounterDataPointSnapshot> points = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            // NaN passes: an engine counter the engine does not report (docs/metrics.md)
            points.add(new CounterDataPointSnapshot(e.value().getAsDouble(), e.labels(), null, 0));
        }
        return new CounterSnapshot(metadata, points);
    }

    @Override
    public String getPrometheusName() {
        return metadata.getPrometheusName();
    }

    @Override
    public MetricType getMetricType() {
        return MetricType.COUNTER;
    }

    @Override
    public Set<String> getLabelNames() {
        return new LinkedHashSet<>(List.of(labelNames));
    }

    @Override
    public MetricMetadata getMetadata() {
        return metadata;
    }
}
