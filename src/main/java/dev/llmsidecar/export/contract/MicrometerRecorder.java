package dev.llmsidecar.export.contract;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.DoubleSupplier;

/**
 * The contract on a Micrometer registry, scraped as Prometheus text: seconds histograms are Timers, other histograms
 * DistributionSummaries (classic buckets at the contract's bounds, no percentiles), counters Counters, gauges Gauges.
 * Meters are registered on first use and then found with one map lookup, so recording on the event loop never goes
 * through the registry's own (locking) registration path.
 */
public final class MicrometerRecorder implements Recorder {

    private final MeterRegistry registry;
    private final Buckets buckets;
    private final BoundKey.Handles bound = new BoundKey.Handles();
    private final BiFunction<Series, Object[], Bound> factory = (s, v) -> create(s, tags(s, v));
    private final List<DoubleSupplier> observed = new java.util.concurrent.CopyOnWriteArrayList<>();

    public MicrometerRecorder(MeterRegistry registry, Buckets buckets) {
        this.registry = registry;
        this.buckets = buckets;
    }

    @Override
    public Backend backend() {
        return Backend.PROMETHEUS;
    }

    @Override
    public Bound bind(Series series, Object... values) {
        return bound.get(series, values, factory);
    }

    private Bound create(Series s, Tags tags) {
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
        } else {
            Gauge.Builder<DoubleSupplier> g = Gauge.builder(series.name(), value, DoubleSupplier::getAsDouble)
                    .description(series.description()).tags(tags).strongReference(true);
            if (series.seconds()) {
                g.baseUnit("seconds");
            }
            g.register(registry);
        }
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
