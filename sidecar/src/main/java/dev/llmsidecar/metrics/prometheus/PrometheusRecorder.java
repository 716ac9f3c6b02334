package dev.llmsidecar.metrics.prometheus;

import dev.llmsidecar.metrics.Backend;
import dev.llmsidecar.metrics.BoundKey;
import dev.llmsidecar.metrics.Buckets;
import dev.llmsidecar.metrics.CumulativeHistogram;
import dev.llmsidecar.metrics.ExemplarSource;
import dev.llmsidecar.metrics.HistogramMode;
import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.Recorder;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.Series;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The contract on the Prometheus side, on a Prometheus client_java registry: one collector per series, made on first
 * use ({@link PrometheusCounter}, {@link PrometheusGauge}, {@link PrometheusHistogram} with {@link LatencyHistogram}s:
 * classic buckets at the contract's bounds and/or native ones, {@link Histograms}). Micrometer keeps only the JVM and
 * process series of its binders, on the same registry. Handles are made on first use and then found with one map
 * lookup, so recording on the event loop never goes through the registry's own (locking) registration path.
 */
public final class PrometheusRecorder implements Recorder {

    private static final Logger LOG = Logger.getLogger(PrometheusRecorder.class);

    /**
     * How the contract's histograms are exposed: classic, native or both; at most {@code nativeMaxBuckets} native
     * buckets per label set; exemplars from {@code exemplars}.
     */
    public record Histograms(HistogramMode mode, int nativeMaxBuckets, ExemplarSource exemplars) {
        /** Both representations, 160 native buckets at most (OpenTelemetry's default size), no exemplars. */
        public static final Histograms DEFAULT = new Histograms(HistogramMode.BOTH, 160, ExemplarSource.NONE);
    }

    private final PrometheusRegistry registry;
    private final Buckets buckets;
    private final Histograms histograms;
    private final BoundKey.Handles bound = new BoundKey.Handles();
    private final BiFunction<Series, Object[], Bound> factory = this::create;
    private final Map<Series, Collector> collectors = new ConcurrentHashMap<>();

    public PrometheusRecorder(PrometheusRegistry registry, Buckets buckets) {
        this(registry, buckets, Histograms.DEFAULT);
    }

    public PrometheusRecorder(PrometheusRegistry registry, Buckets buckets, Histograms histograms) {
        this.registry = registry;
        this.buckets = buckets;
        this.histograms = histograms;
    }

    /** Prometheus only, with the default buckets (parts that export no histogram, and tests). */
    public static Recorders only(PrometheusRegistry registry) {
        return Recorders.of(new PrometheusRecorder(registry, new Buckets(Buckets.Preset.DEFAULT, List.of(), List.of(),
                List.of())));
    }

    @Override
    public Backend backend() {
        return Backend.PROMETHEUS;
    }

    @Override
    public List<Double> bounds(Series series) {
        return series.kind() == Series.Kind.HISTOGRAM ? buckets.bounds(series.buckets()) : List.of();
    }

    @Override
    public Bound bind(Series series, Object... values) {
        return bound.get(series, values, factory);
    }

    private Bound create(Series s, Object[] values) {
        List<String> labelValues = labelValues(s, values);
        switch (s.kind()) {
            case HISTOGRAM -> {
                List<Double> bounds = buckets.bounds(s.buckets());
                LatencyHistogram h = collector(s, PrometheusHistogram::new).recorded(labelValues,
                        () -> new LatencyHistogram(bounds, histograms.mode(), histograms.nativeMaxBuckets(),
                                histograms.exemplars()));
                return new Bound() {
                    @Override
                    public void record(double value) {
                        h.observe(value);
                    }

                    @Override
                    public void record(double value, long count) {
                        h.observe(value, count);
                    }
                };
            }
            case COUNTER -> {
                return collector(s, PrometheusCounter::new).counted(labelValues);
            }
            default -> throw new IllegalArgumentException(s + " is observed, not recorded");
        }
    }

    @Override
    public void observe(Series series, DoubleSupplier value, Object... values) {
        List<String> labelValues = labelValues(series, values);
        switch (series.kind()) {
            case COUNTER -> collector(series, PrometheusCounter::new).observed(labelValues, value);
            case GAUGE -> collector(series, PrometheusGauge::new).add(labelValues, value);
            default -> throw new IllegalArgumentException(series + " is recorded or supplied, not observed");
        }
    }

    @Override
    public void observeHistogram(Series series, Supplier<CumulativeHistogram> value, Object... values) {
        if (series.kind() != Series.Kind.HISTOGRAM) {
            throw new IllegalArgumentException(series + " is not a histogram");
        }
        collector(series, PrometheusHistogram::new).supplied(labelValues(series, values), value);
    }

    /** The collector of {@code series}, made and registered on first use. */
    @SuppressWarnings("unchecked")
    private <C extends Collector> C collector(Series series, Function<Series, C> make) {
        return (C) collectors.computeIfAbsent(series, s -> register(make.apply(s), s));
    }

    private <C extends Collector> C register(C collector, Series s) {
        try {
            registry.register(collector);
        } catch (IllegalArgumentException taken) {
            // another recorder on the same registry exports it already: a second set of lines would be invalid
            LOG.warnf("%s is already on this Prometheus registry; not exported twice", s.prometheusName());
        }
        return collector;
    }

    /** The Prometheus label values in the series' label order (OTLP-only attributes left out). */
    private static List<String> labelValues(Series s, Object[] values) {
        List<Label> labels = s.labels();
        if (values.length != labels.size()) {
            throw new IllegalArgumentException(s + " has labels " + labels + ", got " + Arrays.toString(values));
        }
        List<String> out = new ArrayList<>(labels.size());
        for (int i = 0; i < labels.size(); i++) {
            if (!labels.get(i).otelOnly()) {
                out.add(String.valueOf(values[i]));
            }
        }
        return out;
    }
}
