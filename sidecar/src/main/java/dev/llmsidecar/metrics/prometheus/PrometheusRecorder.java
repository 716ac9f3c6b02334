package dev.llmsidecar.metrics.prometheus;

import dev.llmsidecar.metrics.Backend;
import dev.llmsidecar.metrics.BoundKey;
import dev.llmsidecar.metrics.Buckets;
import dev.llmsidecar.metrics.CumulativeHistogram;
import dev.llmsidecar.metrics.ExemplarSource;
import dev.llmsidecar.metrics.HistogramMode;
import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.Recorder;
import dev.llmsidecar.metrics.Series;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The contract on the Prometheus side. On a Micrometer {@link PrometheusMeterRegistry} (the application's): counters
 * and gauges are Micrometer meters; histograms are {@link LatencyHistogram}s on the Prometheus client registry
 * underneath, classic buckets at the contract's bounds and/or native ones ({@link Histograms}), and histograms
 * aggregated elsewhere ({@link #observeHistogram}) classic ones with their own bounds. On any other Micrometer
 * registry (tests) histograms are Timers and DistributionSummaries with the contract's bounds. Handles are made on
 * first use and then found with one map lookup, so recording on the event loop never goes through a registry's own
 * (locking) registration path.
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

    private final MeterRegistry registry;
    private final Buckets buckets;
    private final Histograms histograms;
    private final BoundKey.Handles bound = new BoundKey.Handles();
    private final BiFunction<Series, Object[], Bound> factory = (s, v) -> create(s, v);
    private final List<DoubleSupplier> observed = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Map<Series, PrometheusHistogram> collectors = new ConcurrentHashMap<>();
    private final Map<Series, PrometheusGauge> gauges = new ConcurrentHashMap<>();

    public PrometheusRecorder(MeterRegistry registry, Buckets buckets) {
        this(registry, buckets, Histograms.DEFAULT);
    }

    public PrometheusRecorder(MeterRegistry registry, Buckets buckets, Histograms histograms) {
        this.registry = registry;
        this.buckets = buckets;
        this.histograms = histograms;
    }

    @Override
    public Backend backend() {
        return Backend.PROMETHEUS;
    }

    @Override
    public Bound bind(Series series, Object... values) {
        return bound.get(series, values, factory);
    }

    private Bound create(Series s, Object[] values) {
        if (s.kind() == Series.Kind.HISTOGRAM && registry instanceof PrometheusMeterRegistry prometheus) {
            PrometheusHistogram collector = collector(s, prometheus);
            List<Double> bounds = buckets.bounds(s.buckets());
            LatencyHistogram h = collector.recorded(labelValues(s, values), () -> new LatencyHistogram(bounds,
                    histograms.mode(), histograms.nativeMaxBuckets(), histograms.exemplars()));
            return h::observe;
        }
        Tags tags = tags(s, values);
        switch (s.kind()) {
            case COUNTER -> {
                Counter c = Counter.builder(s.name()).description(s.description()).tags(tags).register(registry);
                return c::increment;
            }
            case HISTOGRAM -> {
                List<Double> bounds = buckets.bounds(s.buckets());
                if (s.seconds()) {
                    Timer t = Timer.builder(s.name()).description(s.description()).tags(tags)
                            .serviceLevelObjectives(bounds.stream().map(v -> Duration.ofNanos(Math.round(v * 1e9)))
                                    .toArray(Duration[]::new))
                            .publishPercentileHistogram(false).register(registry);
                    return v -> t.record(Math.round(v * 1e9), TimeUnit.NANOSECONDS);
                }
                DistributionSummary d = DistributionSummary.builder(s.name()).description(s.description()).tags(tags)
                        .serviceLevelObjectives(bounds.stream().mapToDouble(Double::doubleValue).toArray())
                        .publishPercentileHistogram(false).register(registry);
                return d::record;
            }
            default -> throw new IllegalArgumentException(s + " is observed, not recorded");
        }
    }

    @Override
    public void observe(Series series, DoubleSupplier value, Object... values) {
        Tags tags = tags(series, values);
        if (series.kind() == Series.Kind.COUNTER) {
            // Micrometer references a counter's object weakly: this recorder keeps the supplier alive
            observed.add(value);
            FunctionCounter.builder(series.name(), value, DoubleSupplier::getAsDouble).description(series.description())
                    .tags(tags).register(registry);
        } else if (registry instanceof PrometheusMeterRegistry prometheus) {
            gauges.computeIfAbsent(series, x -> register(new PrometheusGauge(x), x, prometheus))
                    .add(labelValues(series, values), value);
        } else {
            Gauge.Builder<DoubleSupplier> g = Gauge.builder(series.name(), value, DoubleSupplier::getAsDouble)
                    .description(series.description()).tags(tags).strongReference(true);
            if (series.seconds()) {
                g.baseUnit("seconds");
            }
            g.register(registry);
        }
    }

    /**
     * Registered on the Prometheus client registry of a {@link PrometheusMeterRegistry}; on any other registry
     * (tests with a SimpleMeterRegistry) skipped, since Micrometer has no meter that takes bucket counts.
     */
    @Override
    public void observeHistogram(Series series, Supplier<CumulativeHistogram> value, Object... values) {
        if (series.kind() != Series.Kind.HISTOGRAM) {
            throw new IllegalArgumentException(series + " is not a histogram");
        }
        List<String> labelValues = labelValues(series, values);
        if (registry instanceof PrometheusMeterRegistry prometheus) {
            collector(series, prometheus).supplied(labelValues, value);
        }
    }

    private PrometheusHistogram collector(Series series, PrometheusMeterRegistry prometheus) {
        return collectors.computeIfAbsent(series, s -> register(new PrometheusHistogram(s), s, prometheus));
    }

    private static <C extends io.prometheus.metrics.model.registry.Collector> C register(C collector, Series s,
            PrometheusMeterRegistry prometheus) {
        try {
            prometheus.getPrometheusRegistry().register(collector);
        } catch (IllegalArgumentException taken) {
            // another recorder on the same registry exports it already: a second set of lines would be invalid
            LOG.warnf("%s is already on this Prometheus registry; not exported twice", s.prometheusName());
        }
        return collector;
    }


    /** The Prometheus label values in the series' label order (Tags are sorted by key). */
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

    private static Tags tags(Series s, Object[] values) {
        List<Label> labels = s.labels();
        if (values.length != labels.size()) {
            throw new IllegalArgumentException(s + " has labels " + labels + ", got " + Arrays.toString(values));
        }
        List<Tag> tags = new ArrayList<>(labels.size());
        for (int i = 0; i < labels.size(); i++) {
            if (!labels.get(i).otelOnly()) {
                tags.add(Tag.of(labels.get(i).prometheus(), String.valueOf(values[i])));
            }
        }
        return Tags.of(tags);
    }
}
