package dev.llmsidecar.metrics.prometheus;

import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.Series;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.MetricType;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricMetadata;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.DoubleSupplier;

/**
 * One gauge series of the contract on a Prometheus client registry, each label set read at scrape time. Not a
 * Micrometer gauge: Micrometer's client 1.x registry turns a name ending in {@code _info} into an info metric whose
 * value is always 1 ({@code llm_sidecar_engine_info} is 1 for the detected engine and 0 for the others).
 */
final class PrometheusGauge implements Collector {

    private record Entry(Labels labels, DoubleSupplier value) {
    }

    private final MetricMetadata metadata;
    private final String[] labelNames;
    private final List<Entry> entries = new CopyOnWriteArrayList<>();

    PrometheusGauge(Series series) {
        this.metadata = new MetricMetadata(series.prometheusName(), series.description());
        this.labelNames = series.prometheusLabels().stream().map(Label::prometheus).toArray(String[]::new);
    }

    void add(List<String> labelValues, DoubleSupplier value) {
        entries.add(new Entry(Labels.of(labelNames, labelValues.toArray(String[]::new)), value));
    }

    @Override
    public GaugeSnapshot collect() {
        List<GaugeDataPointSnapshot> points = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            points.add(new GaugeDataPointSnapshot(e.value().getAsDouble(), e.labels(), null));
        }
        return new GaugeSnapshot(metadata, points);
    }

    @Override
    public String getPrometheusName() {
        return metadata.getPrometheusName();
    }

    @Override
    public MetricType getMetricType() {
        return MetricType.GAUGE;
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
