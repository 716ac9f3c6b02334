package dev.llmsidecar.metrics.prometheus;

import dev.llmsidecar.metrics.CumulativeHistogram;
import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.Series;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.MetricType;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.Exemplars;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricMetadata;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * One histogram series of the contract on a Prometheus client registry, read at scrape time: label sets recorded by
 * the sidecar ({@link LatencyHistogram}, classic and/or native), and label sets whose cumulative bucket counts come
 * from elsewhere (the engine's own phases: classic, with the engine's bounds, whatever the mode, since where
 * observations lie inside an engine's bucket is not known). A label set whose supplier gives null has no point; a
 * series without points has no lines at all.
 */
final class PrometheusHistogram implements Collector {

    private record Supplied(Labels labels, Supplier<CumulativeHistogram> value) {
    }

    private final MetricMetadata metadata;
    private final String[] labelNames;
    private final Map<Labels, LatencyHistogram> recorded = new ConcurrentHashMap<>();
    private final List<Supplied> supplied = new CopyOnWriteArrayList<>();

    PrometheusHistogram(Series series) {
        if (series.kind() != Series.Kind.HISTOGRAM) {
            throw new IllegalArgumentException(series + " is not a histogram");
        }
        this.metadata = new MetricMetadata(series.prometheusName(), series.description());
        this.labelNames = series.prometheusLabels().stream().map(Label::prometheus).toArray(String[]::new);
    }

    /** The recorded histogram of these label values (Prometheus labels, in the series' order), made once. */
    LatencyHistogram recorded(List<String> labelValues, java.util.function.Supplier<LatencyHistogram> create) {
        return recorded.computeIfAbsent(labels(labelValues), l -> create.get());
    }

    void supplied(List<String> labelValues, Supplier<CumulativeHistogram> value) {
        supplied.add(new Supplied(labels(labelValues), value));
    }

    private Labels labels(List<String> values) {
        if (values.size() != labelNames.length) {
            throw new IllegalArgumentException(metadata.getName() + " has labels " + List.of(labelNames) + ", got "
                    + values);
        }
        return Labels.of(labelNames, values.toArray(String[]::new));
    }

    @Override
    public HistogramSnapshot collect() {
        List<HistogramDataPointSnapshot> points = new ArrayList<>();
        recorded.forEach((labels, h) -> points.add(h.snapshot(labels)));
        for (Supplied s : supplied) {
            CumulativeHistogram h = s.value().get();
            if (h != null) {
                points.add(classic(h.evenedOut(), s.labels()));
            }
        }
        return points.isEmpty() ? null : new HistogramSnapshot(metadata, points);
    }

    private static HistogramDataPointSnapshot classic(CumulativeHistogram h, Labels labels) {
        double[] upper = new double[h.bounds().size() + 1];
        long[] counts = new long[upper.length];
        List<Long> perBucket = h.bucketCounts();
        for (int i = 0; i < upper.length; i++) {
            upper[i] = i < h.bounds().size() ? h.bounds().get(i) : Double.POSITIVE_INFINITY;
            counts[i] = perBucket.get(i);
        }
        return new HistogramDataPointSnapshot(ClassicHistogramBuckets.of(upper, counts), h.sum(), labels,
                Exemplars.EMPTY, 0);
    }

    @Override
    public String getPrometheusName() {
        return metadata.getPrometheusName();
    }

    @Override
    public MetricType getMetricType() {
        return MetricType.HISTOGRAM;
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
