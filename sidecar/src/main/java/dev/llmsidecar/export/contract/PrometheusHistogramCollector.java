package dev.llmsidecar.export.contract;

import io.prometheus.client.Collector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * One histogram series of the contract whose bucket counts come from elsewhere (the engine's own), on the Prometheus
 * client registry under Micrometer: Micrometer cannot take pre-aggregated counts, so this writes the classic
 * histogram itself ({@code _bucket{le}}, {@code _count}, {@code _sum}, TYPE histogram), one label set per
 * {@link #add}, read at scrape time. A label set whose supplier gives null has no lines.
 */
final class PrometheusHistogramCollector extends Collector implements Collector.Describable {

    private record Entry(List<String> labelValues, Supplier<CumulativeHistogram> value) {
    }

    private final String name;
    private final String help;
    private final List<String> labelNames;
    private final List<String> bucketLabelNames;
    private final List<Entry> entries = new CopyOnWriteArrayList<>();

    PrometheusHistogramCollector(Series series) {
        if (series.kind() != Series.Kind.HISTOGRAM) {
            throw new IllegalArgumentException(series + " is not a histogram");
        }
        this.name = series.prometheusName();
        this.help = series.description();
        this.labelNames = series.prometheusLabels().stream().map(Label::prometheus).toList();
        List<String> withLe = new ArrayList<>(labelNames);
        withLe.add("le");
        this.bucketLabelNames = List.copyOf(withLe);
    }

    void add(List<String> labelValues, Supplier<CumulativeHistogram> value) {
        if (labelValues.size() != labelNames.size()) {
            throw new IllegalArgumentException(name + " has labels " + labelNames + ", got " + labelValues);
        }
        entries.add(new Entry(List.copyOf(labelValues), value));
    }

    @Override
    public List<MetricFamilySamples> collect() {
        List<MetricFamilySamples.Sample> samples = new ArrayList<>();
        for (Entry e : entries) {
            CumulativeHistogram h = e.value().get();
            if (h == null) {
                continue;
            }
            List<Long> counts = h.cumulativeCounts();
            for (int i = 0; i <= h.bounds().size(); i++) {
                String le = i < h.bounds().size() ? doubleToGoString(h.bounds().get(i)) : "+Inf";
                List<String> values = new ArrayList<>(e.labelValues());
                values.add(le);
                samples.add(new MetricFamilySamples.Sample(name + "_bucket", bucketLabelNames, values, counts.get(i)));
            }
            samples.add(new MetricFamilySamples.Sample(name + "_count", labelNames, e.labelValues(), h.count()));
            samples.add(new MetricFamilySamples.Sample(name + "_sum", labelNames, e.labelValues(), h.sum()));
        }
        // no family at all rather than a TYPE line without samples while nothing is known
        return samples.isEmpty() ? List.of() : List.of(new MetricFamilySamples(name, Type.HISTOGRAM, help, samples));
    }

    /** The names this collector writes, so the registry refuses a second owner of them at registration. */
    @Override
    public List<MetricFamilySamples> describe() {
        return List.of(new MetricFamilySamples(name, Type.HISTOGRAM, help, List.of()));
    }
}
