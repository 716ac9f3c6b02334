package dev.llmsidecar.metrics.otlp;

import dev.llmsidecar.metrics.Backend;
import dev.llmsidecar.metrics.BoundKey;
import dev.llmsidecar.metrics.Buckets;
import dev.llmsidecar.metrics.CumulativeHistogram;
import dev.llmsidecar.metrics.GenAiConventions;
import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.Recorder;
import dev.llmsidecar.metrics.Series;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableDoubleMeasurement;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiFunction;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * The contract on an OpenTelemetry meter, exported over OTLP: histograms with the contract's bounds as advice
 * ({@code OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=base2_exponential_bucket_histogram} turns them
 * into exponential ones), counters, and observable gauges and counters read at collection time. Attribute sets are
 * built once per label values and then found with one map lookup. Histograms aggregated elsewhere go through an
 * {@link OtelHistogramProducer} registered on the same meter provider.
 */
public final class OtelRecorder implements Recorder {

    private final Meter meter;
    private final Buckets buckets;
    private final OtelHistogramProducer produced;
    private final GenAiConventions conventions;
    private final Map<Series, Object> instruments = new ConcurrentHashMap<>();
    private final Map<Series, List<Observed>> observed = new ConcurrentHashMap<>();
    private final BoundKey.Handles bound = new BoundKey.Handles();
    private final BiFunction<Series, Object[], Bound> factory = (s, v) -> create(s, attributes(s, v));

    private record Observed(Attributes attributes, DoubleSupplier value) {
    }

    /** Without a producer: {@link #observeHistogram} exports nothing (for uses that have no such histogram). */
    public OtelRecorder(Meter meter, Buckets buckets) {
        this(meter, buckets, null);
    }

    /**
     * @param produced where {@link #observeHistogram} series go: the producer registered on the meter provider that
     *     {@code meter} comes from
     */
    public OtelRecorder(Meter meter, Buckets buckets, OtelHistogramProducer produced) {
        this(meter, buckets, produced, GenAiConventions.LATEST);
    }

    /** @param conventions the GenAI semantic-convention version of the attribute names */
    public OtelRecorder(Meter meter, Buckets buckets, OtelHistogramProducer produced, GenAiConventions conventions) {
        this.meter = meter;
        this.buckets = buckets;
        this.produced = produced;
        this.conventions = conventions;
    }

    @Override
    public Backend backend() {
        return Backend.OTLP;
    }

    @Override
    public Bound bind(Series series, Object... values) {
        return bound.get(series, values, factory);
    }

    private Bound create(Series s, Attributes attributes) {
        Object instrument = instruments.computeIfAbsent(s, this::instrument);
        if (instrument instanceof LongCounter c) {
            return v -> c.add((long) v, attributes);
        }
        DoubleHistogram h = (DoubleHistogram) instrument;
        return v -> h.record(v, attributes);
    }

    private Object instrument(Series s) {
        return switch (s.kind()) {
            case COUNTER -> meter.counterBuilder(s.name()).setUnit(s.unit()).setDescription(s.description()).build();
            case HISTOGRAM -> meter.histogramBuilder(s.name()).setUnit(s.unit()).setDescription(s.description())
                    .setExplicitBucketBoundariesAdvice(buckets.bounds(s.buckets())).build();
            case GAUGE -> throw new IllegalArgumentException(s + " is observed, not recorded");
        };
    }

    @Override
    public void observe(Series series, DoubleSupplier value, Object... values) {
        List<Observed> list = observed.computeIfAbsent(series, s -> {
            List<Observed> entries = new CopyOnWriteArrayList<>();
            if (s.kind() == Series.Kind.COUNTER) {
                meter.counterBuilder(s.name()).ofDoubles().setUnit(s.unit()).setDescription(s.description())
                        .buildWithCallback(m -> report(entries, m));
            } else {
                meter.gaugeBuilder(s.name()).setUnit(s.unit()).setDescription(s.description())
                        .buildWithCallback(m -> report(entries, m));
            }
            return entries;
        });
        list.add(new Observed(attributes(series, values), value));
    }

    @Override
    public void observeHistogram(Series series, Supplier<CumulativeHistogram> value, Object... values) {
        if (series.kind() != Series.Kind.HISTOGRAM) {
            throw new IllegalArgumentException(series + " is not a histogram");
        }
        Attributes attributes = attributes(series, values);
        if (produced != null) {
            produced.add(series, attributes, value);
        }
    }

    private static void report(List<Observed> entries, ObservableDoubleMeasurement m) {
        for (Observed o : entries) {
            double v = o.value().getAsDouble();
            if (!Double.isNaN(v)) {
                m.record(v, o.attributes());
            }
        }
    }

    private Attributes attributes(Series s, Object[] values) {
        List<Label> labels = s.labels();
        if (values.length != labels.size()) {
            throw new IllegalArgumentException(s + " has labels " + labels + ", got " + Arrays.toString(values));
        }
        AttributesBuilder a = Attributes.builder();
        for (int i = 0; i < labels.size(); i++) {
            Object v = values[i];
            if (v == null) {
                continue;
            }
            Label l = labels.get(i);
            String key = l == Label.PROVIDER ? conventions.providerKey() : l.otel();
            switch (l.type()) {
                case BOOLEAN -> a.put(key, v instanceof Boolean b ? b : Boolean.parseBoolean(v.toString()));
                case LONG -> a.put(key, v instanceof Number n ? n.longValue() : Long.parseLong(v.toString()));
                case STRING -> a.put(key, v.toString());
            }
        }
        return a.build();
    }
}
