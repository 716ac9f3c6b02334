package dev.llmsidecar.measure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.metrics.Backend;
import dev.llmsidecar.metrics.CumulativeHistogram;
import dev.llmsidecar.metrics.Recorder;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.Series;
import dev.llmsidecar.slo.Criterion;
import dev.llmsidecar.slo.Objective;
import dev.llmsidecar.slo.SloVerdict;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A scrape can fall between a request's counter increments (the event loop records, the scrape thread reads). Good
 * counters go first, so such a scrape sees a good request too many for a moment, never a bad one too many: over an
 * objective's first dozen requests one phantom bad request is a burn rate of 6x at a 0.99 target, enough for a page to
 * go pending (seen under the demo with a real Prometheus).
 */
class SloMetricsOrderTest {

    @Test
    void goodCountersAreIncrementedBeforeTheTotals() {
        List<String> order = new ArrayList<>();
        Recorder spy = new Recorder() {
            @Override
            public Backend backend() {
                return Backend.PROMETHEUS;
            }

            @Override
            public Bound bind(Series series, Object... values) {
                return v -> order.add(series.name());
            }

            @Override
            public void observe(Series series, DoubleSupplier value, Object... values) {
            }

            @Override
            public void observeHistogram(Series series, Supplier<CumulativeHistogram> value, Object... values) {
            }
        };
        Objective interactive = new Objective("interactive", List.of(), "default", 500_000_000L, -1, -1, -1, 0.99, 0.95);
        Objective batch = new Objective("batch", List.of(), "default", -1, -1, 30_000_000_000L, -1, 0.99, 0.99);
        SloMetrics slo = new SloMetrics(Recorders.of(spy), List.of(interactive, batch));
        order.clear();
        slo.record(RequestSeriesRig.labels("m", "t", ""), 10, new SloVerdict(true, List.of(new SloVerdict.ObjectiveResult(interactive,
                List.of()), new SloVerdict.ObjectiveResult(batch, List.of()))));
        assertThat(order).as("series incremented, in order").containsSubsequence("llm_sidecar.slo.good_requests",
                "llm_sidecar.slo.requests");
        assertThat(order.indexOf("llm_sidecar.slo.good_requests")).isLessThan(order.indexOf("llm_sidecar.slo.requests"));
        List<String> objectives = order.stream().filter(n -> n.startsWith("llm_sidecar.slo.objective_")).toList();
        assertThat(objectives).containsExactly("llm_sidecar.slo.objective_good_requests",
                "llm_sidecar.slo.objective_requests", "llm_sidecar.slo.objective_good_requests",
                "llm_sidecar.slo.objective_requests");

        // a bad request: the totals only, and its violation
        order.clear();
        slo.record(RequestSeriesRig.labels("m", "t", ""), 10, new SloVerdict(false, List.of(new SloVerdict.ObjectiveResult(interactive,
                List.of(Criterion.TTFT)))));
        assertThat(order).doesNotContain("llm_sidecar.slo.good_requests", "llm_sidecar.slo.objective_good_requests")
                .contains("llm_sidecar.slo.requests", "llm_sidecar.slo.objective_requests", "llm_sidecar.slo.violations");
    }
}
