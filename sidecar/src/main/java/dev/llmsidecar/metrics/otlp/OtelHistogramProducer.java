package dev.llmsidecar.metrics.otlp;

import dev.llmsidecar.metrics.CumulativeHistogram;
import dev.llmsidecar.metrics.Series;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.common.Clock;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.Data;
import io.opentelemetry.sdk.metrics.data.HistogramData;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.MetricDataType;
import io.opentelemetry.sdk.metrics.export.MetricProducer;
import io.opentelemetry.sdk.resources.Resource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * Histograms aggregated outside the OpenTelemetry SDK (the engine's own), handed to the SDK at each collection as
 * explicit-bucket points with their own bounds: the SDK's instruments cannot take bucket counts, and the SDK passes a
 * producer's points to the exporter as they are, so this producer gives them in the temporality the exporter asks
 * for ({@link #temporality}). It must be registered on the SdkMeterProvider when that is built
 * ({@code registerMetricProducer}); {@link OtelRecorder} adds the series to it later.
 *
 * <p>Cumulative: a point's start time is when this producer first saw the series, or saw it start again: a lower
 * count or other bounds than at the last collection mean the engine restarted, so the cumulative sequence starts anew
 * there. Delta: a point holds what the engine observed since the previous point (after a restart, since the restart);
 * the first sighting is only the baseline, with no point, since what it holds accrued over the engine's whole life.
 * While the supplier gives null (the engine is down) the series has no point; the next delta spans the gap.
 */
public final class OtelHistogramProducer implements MetricProducer {

    private final InstrumentationScopeInfo scope;
    private final Clock clock;
    private final List<Entry> entries = new CopyOnWriteArrayList<>();
    private volatile AggregationTemporality temporality = AggregationTemporality.CUMULATIVE;

    /** @param scopeName the instrumentation scope of the points (the sidecar's meter name) */
    public OtelHistogramProducer(String scopeName) {
        this(scopeName, Clock.getDefault());
    }

    public OtelHistogramProducer(String scopeName, Clock clock) {
        this.scope = InstrumentationScopeInfo.create(scopeName);
        this.clock = Objects.requireNonNull(clock);
    }

    /** The temporality the exporter asks for histograms (set before the first collection). */
    public void temporality(AggregationTemporality temporality) {
        this.temporality = Objects.requireNonNull(temporality);
    }

    void add(Series series, Attributes attributes, Supplier<CumulativeHistogram> value) {
        if (series.kind() != Series.Kind.HISTOGRAM) {
            throw new IllegalArgumentException(series + " is not a histogram");
        }
        entries.add(new Entry(series, attributes, value));
    }

    @Override
    public Collection<MetricData> produce(Resource resource) {
        long now = clock.now();
        AggregationTemporality t = temporality;
        Map<Series, List<HistogramPointData>> points = new LinkedHashMap<>();
        for (Entry e : entries) {
            HistogramPointData p = e.point(now, t == AggregationTemporality.DELTA);
            if (p != null) {
                points.computeIfAbsent(e.series, s -> new ArrayList<>()).add(p);
            }
        }
        List<MetricData> out = new ArrayList<>(points.size());
        points.forEach((series, list) -> out.add(new Histogram(resource, scope, series,
                HistogramData.create(t, list))));
        return out;
    }

    /** One label set: its supplier, and what the last collection saw (for the start time). */
    private static final class Entry {
        final Series series;
        final Attributes attributes;
        final Supplier<CumulativeHistogram> value;
        // guarded by this: a reader's collections may run on several threads
        private long startEpochNanos;
        private long lastEpochNanos;
        private CumulativeHistogram last;

        Entry(Series series, Attributes attributes, Supplier<CumulativeHistogram> value) {
            this.series = series;
            this.attributes = attributes;
            this.value = value;
        }

        synchronized HistogramPointData point(long now, boolean delta) {
            CumulativeHistogram h = value.get();
            if (h == null) {
                return null; // the last one seen is kept: a restart is still told apart when values come back
            }
            CumulativeHistogram before = last;
            boolean restarted = before != null && restarted(before, h);
            if (before == null) {
                // first sighting: what it holds accrued before now (a start equal to the point's time is refused by
                // some backends for a non-empty cumulative point)
                startEpochNanos = now - 1_000_000;
            } else if (restarted) {
                startEpochNanos = now;
            }
            long previous = lastEpochNanos;
            last = h;
            lastEpochNanos = now;
            if (!delta) {
                return HistogramPointData.create(startEpochNanos, now, attributes, h.sum(), false, 0, false, 0,
                        h.bounds(), h.bucketCounts());
            }
            if (before == null) {
                return null;
            }
            List<Long> counts = h.bucketCounts();
            double sum = h.sum();
            if (!restarted) {
                List<Long> earlier = before.bucketCounts();
                List<Long> diff = new ArrayList<>(counts.size());
                for (int i = 0; i < counts.size(); i++) {
                    diff.add(Math.max(0, counts.get(i) - earlier.get(i))); // a racing engine scrape can dip
                }
                counts = diff;
                sum -= before.sum();
            }
            return HistogramPointData.create(previous, now, attributes, sum, false, 0, false, 0, h.bounds(), counts);
        }
    }

    /**
     * Whether {@code now} cannot continue {@code before}: other bounds, or any bucket or the sum went down (one of
     * several data-parallel engines restarting lowers its buckets while the total may still grow).
     */
    static boolean restarted(CumulativeHistogram before, CumulativeHistogram now) {
        if (!now.bounds().equals(before.bounds()) || now.sum() < before.sum()) {
            return true;
        }
        for (int i = 0; i < now.cumulativeCounts().size(); i++) {
            if (now.cumulativeCounts().get(i) < before.cumulativeCounts().get(i)) {
                return true;
            }
        }
        return false;
    }

    private record Histogram(Resource resource, InstrumentationScopeInfo scope, Series series, HistogramData data)
            implements MetricData {

        @Override
        public Resource getResource() {
            return resource;
        }

        @Override
        public InstrumentationScopeInfo getInstrumentationScopeInfo() {
            return scope;
        }

        @Override
        public String getName() {
            return series.name();
        }

        @Override
        public String getDescription() {
            return series.description();
        }

        @Override
        public String getUnit() {
            return series.unit();
        }

        @Override
        public MetricDataType getType() {
            return MetricDataType.HISTOGRAM;
        }

        @Override
        public Data<?> getData() {
            return data;
        }
    }
}
