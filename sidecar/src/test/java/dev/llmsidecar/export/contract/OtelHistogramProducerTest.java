package dev.llmsidecar.export.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
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
}
