package dev.llmsidecar.export;

import dev.llmsidecar.slo.Criterion;
import dev.llmsidecar.slo.Objective;
import dev.llmsidecar.slo.SloVerdict;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;

/**
 * Goodput and SLO attainment as plain counters, so that Prometheus computes them exactly (independent of
 * histogram buckets): goodput = rate(good) / rate(requests), attainment per objective likewise. Series are
 * specified in docs/metrics.md and docs/slo.md.
 */
public final class SloMetrics {

    private final MeterCache cache;

    public SloMetrics(MeterRegistry registry, List<Objective> objectives) {
        this.cache = new MeterCache(registry);
        for (Objective o : objectives) {
            Gauge.builder("llm_sidecar.slo.target_ratio", o, Objective::target).tag("objective", o.name())
                    .description("Configured target share of good requests per objective").register(registry);
        }
    }

    public void record(String model, String sloClass, long outputTokens, SloVerdict verdict) {
        if (!verdict.counted()) {
            counter("llm_sidecar.slo.excluded_requests", "Finished LLM requests that do not count toward the SLO "
                    + "(client cancellations that broke no objective, client errors)",
                    "model", model, "slo_class", sloClass, "reason", verdict.excludedReason()).increment();
            return;
        }
        counter("llm_sidecar.slo.requests", "Finished LLM requests that count toward the SLO (server errors "
                + "included; client errors and harmless cancellations not)", "model", model, "slo_class", sloClass)
                .increment();
        counter("llm_sidecar.slo.output_tokens", "Output tokens of finished LLM requests",
                "model", model, "slo_class", sloClass).increment(outputTokens);
        if (verdict.good()) {
            counter("llm_sidecar.slo.good_requests", "Requests that completed and met every applicable objective",
                    "model", model, "slo_class", sloClass).increment();
            counter("llm_sidecar.slo.good_output_tokens", "Output tokens of good requests",
                    "model", model, "slo_class", sloClass).increment(outputTokens);
        }
        for (SloVerdict.ObjectiveResult r : verdict.objectives()) {
            String name = r.objective().name();
            counter("llm_sidecar.slo.objective_requests", "Requests an objective applied to",
                    "objective", name, "model", model, "slo_class", sloClass).increment();
            if (r.met()) {
                counter("llm_sidecar.slo.objective_good_requests", "Requests that met the objective",
                        "objective", name, "model", model, "slo_class", sloClass).increment();
            }
            for (Criterion c : r.violated()) {
                counter("llm_sidecar.slo.violations", "Requests that violated a criterion of an objective",
                        "objective", name, "model", model, "slo_class", sloClass, "criterion", c.label()).increment();
            }
        }
    }

    private Counter counter(String name, String description, String... tags) {
        return cache.counter(name, description, tags);
    }
}
