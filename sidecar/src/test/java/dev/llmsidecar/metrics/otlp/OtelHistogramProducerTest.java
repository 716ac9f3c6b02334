package dev.llmsidecar.metrics.otlp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.CumulativeHistogram;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.common.Clock;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.resources.Resource;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** When a re-exported cumulative histogram starts again on OTLP (a new start time), and when it continues. */
class OtelHistogramProducerTest {

    static CumulativeHistogram h(double sum, long... cumulative) {
        return new CumulativeHistogram(List.of(0.3, 1.0), java.util.Arrays.stream(cumulative).boxed().toList(), sum);
    }

    @Test
    void growthContinuesAnyDropRestarts() {
        assertThat(OtelHistogramProducer.restarted(h(1.0, 1, 2, 3), h(1.5, 1, 3, 4))).isFalse();
        assertThat(OtelHistogramProducer.restarted(h(1.0, 1, 2, 3), h(1.0, 1, 2, 3))).as("unchanged").isFalse();
        // one of two data-parallel engines restarted: its fast bucket fell while the other's slow ones grew the total
        assertThat(OtelHistogramProducer.restarted(h(9.0, 5, 6, 10), h(12.0, 2, 6, 12))).isTrue();
        assertThat(OtelHistogramProducer.restarted(h(9.0, 5, 6, 10), h(8.0, 5, 6, 10))).as("sum fell").isTrue();
        assertThat(OtelHistogramProducer.restarted(h(1.0, 1, 2, 3), new CumulativeHistogram(List.of(0.5, 1.0),
                List.of(1L, 2L, 3L), 1.0))).as("other bounds").isTrue();
    }

    /**
     * Delta temporality (OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=delta): the first sighting is only the
     * baseline, each point then holds what the engine observed since the previous one, and after an engine restart
     * what it observed since the restart.
     */
    @Test
    void deltaPointsHoldWhatWasObservedSinceThePreviousOne() {
        AtomicLong nanos = new AtomicLong(1_000_000_000L);
        Clock clock = new Clock() {
            @Override
            public long now() {
                return nanos.get();
            }

            @Override
            public long nanoTime() {
                return nanos.get();
            }
        };
        AtomicReference<CumulativeHistogram> engine = new AtomicReference<>(h(4.0, 2, 3, 5));
        OtelHistogramProducer producer = new OtelHistogramProducer("test", clock);
        producer.temporality(AggregationTemporality.DELTA);
        producer.add(Contract.ENGINE_PHASE, Attributes.empty(), engine::get);

        assertThat(producer.produce(Resource.empty())).as("baseline: what accrued before the sidecar looked")
                .isEmpty();

        nanos.addAndGet(1_000_000_000L);
        engine.set(h(7.5, 3, 5, 9)); // per bucket 3, 2, 4 against 2, 1, 2 before
        HistogramPointData p = point(producer.produce(Resource.empty()));
        assertThat(p.getStartEpochNanos()).isEqualTo(1_000_000_000L);
        assertThat(p.getEpochNanos()).isEqualTo(2_000_000_000L);
        assertThat(p.getCounts()).containsExactly(1L, 1L, 2L);
        assertThat(p.getCount()).isEqualTo(4);
        assertThat(p.getSum()).isEqualTo(3.5);

        nanos.addAndGet(1_000_000_000L);
        HistogramPointData idle = point(producer.produce(Resource.empty()));
        assertThat(idle.getCounts()).as("nothing observed").containsExactly(0L, 0L, 0L);
        assertThat(idle.getSum()).isZero();

        nanos.addAndGet(1_000_000_000L);
        engine.set(h(0.5, 1, 1, 2)); // restarted: fewer than before
        HistogramPointData restarted = point(producer.produce(Resource.empty()));
        assertThat(restarted.getStartEpochNanos()).isEqualTo(3_000_000_000L);
        assertThat(restarted.getCounts()).as("since the restart").containsExactly(1L, 0L, 1L);
        assertThat(restarted.getSum()).isEqualTo(0.5);
    }

    @Test
    void cumulativePointsHoldEverythingSinceTheStart() {
        AtomicReference<CumulativeHistogram> engine = new AtomicReference<>(h(4.0, 2, 3, 5));
        OtelHistogramProducer producer = new OtelHistogramProducer("test");
        producer.add(Contract.ENGINE_PHASE, Attributes.empty(), engine::get);
        HistogramPointData first = point(producer.produce(Resource.empty()));
        engine.set(h(7.5, 3, 5, 9));
        HistogramPointData second = point(producer.produce(Resource.empty()));
        assertThat(first.getCounts()).containsExactly(2L, 1L, 2L);
        assertThat(second.getCounts()).containsExactly(3L, 2L, 4L);
        assertThat(second.getStartEpochNanos()).isEqualTo(first.getStartEpochNanos());
    }

    private static HistogramPointData point(Collection<MetricData> produced) {
        assertThat(produced).hasSize(1);
        MetricData m = produced.iterator().next();
        return m.getHistogramData().getPoints().iterator().next();
    }
}
