package dev.llmsidecar.sweep;

import dev.llmsidecar.metrics.CumulativeHistogram;
import java.util.Map;
import java.util.TreeMap;

/**
 * One load step, read from the sidecar's own metrics: the difference of scrapes taken after the warm-up
 * ({@code before}), when the step stopped sending ({@code end}) and once its requests had drained ({@code after}).
 * Latency histograms and error / SLO counters: before to after (every request of the step, none of the next).
 * Throughput: completed requests and output tokens before to end, over that time (the load held steady).
 *
 * @param index 1-based
 * @param load offered load: requests/s (open loop) or concurrent streams (closed loop)
 * @param measuredSeconds before to end
 * @param drainSeconds end to after
 * @param completed successful requests the sidecar counted, before to end
 * @param throughput completed / measuredSeconds
 * @param outputTokensPerSecond output tokens (usage) the sidecar counted, before to end, / measuredSeconds
 * @param requestsByOutcome the sidecar's finished requests, before to after, by outcome
 * @param meanInputTokens prompt tokens per request as the engine reported them (NaN when it did not)
 * @param meanOutputTokens output tokens per request
 * @param slo the share of good requests (null without --slo)
 * @param sidecarKnee {@code llm_sidecar_saturation_knee_requests} after the step (NaN until the sidecar saw one)
 * @param sidecarMaxInFlight the sidecar's in-flight gauge, highest of the step's scrapes (a sanity check)
 * @param client the client's own view (errors, and the figures under vllm bench serve's definitions)
 */
public record StepResult(int index, double load, double measuredSeconds, double drainSeconds, Latency ttft,
        Latency tpot, Latency itl, Latency e2e, Latency firstResponseChunk, Latency chunkGap, double completed,
        double throughput, double outputTokensPerSecond, Map<String, Double> requestsByOutcome,
        double meanInputTokens, double meanOutputTokens, SloShare slo, double sidecarKnee, double sidecarMaxInFlight,
        ClientSummary client) {

    /** One latency histogram's difference and what the sweep reads from it. */
    public record Latency(CumulativeHistogram delta, double count, double mean, double p50, double p95, double p99,
            double[] p50Bucket, double[] p99Bucket) {
        static Latency of(CumulativeHistogram delta) {
            return new Latency(delta, delta.count(), delta.mean(), delta.quantile(0.5), delta.quantile(0.95),
                    delta.quantile(0.99), delta.quantileBucket(0.5), delta.quantileBucket(0.99));
        }

        double quantile(double q) {
            return q == 0.5 ? p50 : q == 0.95 ? p95 : q == 0.99 ? p99 : delta.quantile(q);
        }
    }

    /**
     * The share of the step's requests that met the SLO.
     *
     * @param source "objective NAME" (the sidecar's SLO counters: exact, per request) or "histograms" (estimated from
     *     the buckets at each threshold)
     * @param share the share used for goodput: the counters' share, or the histograms' lower bound
     * @param histogramLow the histogram estimate's lower bound: the completed share of all requests times
     *     (1 - the sum of every criterion's missed share); a request can miss several criteria, so the truth is
     *     between low and high
     * @param histogramHigh its upper bound: the completed share times the smallest criterion's met share
     * @param histogramExact every threshold is a bucket bound (no interpolation inside a bucket)
     * @param requests requests judged (counters: the objective's requests; histograms: every finished request)
     * @param good good requests (counters) or the histograms' lower bound times requests
     * @param goodTokenShare output tokens of good requests / output tokens of the judged requests (the SLO
     *     counters' {@code good_output_tokens / output_tokens}; NaN without --slo-objective)
     */
    public record SloShare(String source, double share, double histogramLow, double histogramHigh,
            boolean histogramExact, double requests, double good, double goodTokenShare) {
    }

    /** Computes a step from its three scrapes. */
    static StepResult compute(int index, double load, String model, String operation, SloSpec slo,
            String sloObjective, SidecarScrape before, SidecarScrape end, SidecarScrape after, double measuredSeconds,
            double drainSeconds, ClientSummary client) {
        Map<String, String> streams = SidecarSeries.streams(model, operation);
        Map<String, String> ok = SidecarSeries.ok(model, operation);
        Latency ttft = latency(SidecarSeries.TTFT, streams, before, after);
        Latency tpot = latency(SidecarSeries.TPOT, ok, before, after);
        Latency itl = latency(SidecarSeries.ITL, ok, before, after);
        Latency e2e = latency(SidecarSeries.E2E, ok, before, after);
        Latency ttfrc = latency(SidecarSeries.FIRST_RESPONSE_CHUNK, streams, before, after);
        Latency gap = latency(SidecarSeries.CHUNK_GAP, streams, before, after);

        double completed = delta(SidecarSeries.REQUESTS, ok, before, end);
        Map<String, String> modelOp = Map.of("model", model, "operation", operation);
        double outputTokens = delta(SidecarSeries.TOKENS, SidecarSeries.with(modelOp, "token_type", "output"), before,
                end);
        Map<String, Double> byOutcome = new TreeMap<>();
        for (String outcome : after.labelValues(SidecarSeries.REQUESTS, "outcome")) {
            double d = delta(SidecarSeries.REQUESTS, SidecarSeries.with(streams, "outcome", outcome), before, after);
            if (d > 0) {
                byOutcome.put(outcome, d);
            }
        }
        double okAll = byOutcome.getOrDefault("ok", 0.0);
        double inputAll = delta(SidecarSeries.TOKENS, SidecarSeries.with(modelOp, "token_type", "input"), before,
                after);
        double outputAll = delta(SidecarSeries.TOKENS, SidecarSeries.with(modelOp, "token_type", "output"), before,
                after);
        double total = byOutcome.values().stream().mapToDouble(Double::doubleValue).sum();

        SloShare share = slo == null ? null
                : sloShare(slo, sloObjective, model, ttft, tpot, e2e, okAll, total, before, after);
        double maxInFlight = Math.max(after.gauge(SidecarSeries.IN_FLIGHT), Math.max(
                before.gauge(SidecarSeries.IN_FLIGHT), end.gauge(SidecarSeries.IN_FLIGHT)));
        return new StepResult(index, load, measuredSeconds, drainSeconds, ttft, tpot, itl, e2e, ttfrc, gap, completed,
                measuredSeconds > 0 ? completed / measuredSeconds : Double.NaN,
                measuredSeconds > 0 ? outputTokens / measuredSeconds : Double.NaN, byOutcome,
                okAll > 0 && inputAll > 0 ? inputAll / okAll : Double.NaN,
                okAll > 0 ? outputAll / okAll : Double.NaN, share, after.gauge(SidecarSeries.KNEE), maxInFlight,
                client);
    }

    static SloShare sloShare(SloSpec slo, String objective, String model, Latency ttft, Latency tpot, Latency e2e,
            double ok, double total, SidecarScrape before, SidecarScrape after) {
        // per criterion: the share of the histogram's requests at or below the threshold (a share, not a count, so
        // that TTFT, recorded at the first token, and the counters, recorded at the end, need not hold the very same
        // requests at the window's edges)
        double[] met = {met(ttft, slo.ttft()), met(tpot, slo.tpot()), met(e2e, slo.e2e())};
        double missSum = 0;
        double minMet = 1;
        for (double m : met) {
            missSum += 1 - m;
            minMet = Math.min(minMet, m);
        }
        double completed = total > 0 ? ok / total : Double.NaN;
        double low = completed * Math.max(0, 1 - missSum);
        double high = completed * minMet;
        boolean exact = exact(ttft, slo.ttft()) && exact(tpot, slo.tpot()) && exact(e2e, slo.e2e());
        if (objective != null) {
            Map<String, String> m = Map.of("objective", objective, "model", model);
            double requests = delta(SidecarSeries.SLO_OBJECTIVE_REQUESTS, m, before, after);
            double good = delta(SidecarSeries.SLO_OBJECTIVE_GOOD, m, before, after);
            double goodTokens = delta(SidecarSeries.SLO_GOOD_OUTPUT_TOKENS, Map.of("model", model), before, after);
            double tokens = delta(SidecarSeries.SLO_OUTPUT_TOKENS, Map.of("model", model), before, after);
            return new SloShare("objective " + objective, requests > 0 ? good / requests : Double.NaN, low, high,
                    exact, requests, good, tokens > 0 ? goodTokens / tokens : Double.NaN);
        }
        return new SloShare("histograms", low, low, high, exact, total, Double.isNaN(low) ? 0 : low * total,
                Double.NaN);
    }

    /** The share of a histogram's observations at or below the threshold (1 when unset or nothing observed). */
    private static double met(Latency l, double threshold) {
        if (Double.isNaN(threshold) || l.delta().isEmpty() || l.delta().count() == 0) {
            return 1;
        }
        return Math.min(1, Math.max(0, l.delta().shareAtOrBelow(threshold)));
    }

    private static boolean exact(Latency l, double threshold) {
        return Double.isNaN(threshold) || l.delta().isEmpty() || l.delta().hasBound(threshold);
    }

    private static Latency latency(String name, Map<String, String> match, SidecarScrape before, SidecarScrape after) {
        return Latency.of(after.histogram(name, match).minus(before.histogram(name, match)));
    }

    static double delta(String name, Map<String, String> match, SidecarScrape before, SidecarScrape after) {
        double d = after.sum(name, match) - before.sum(name, match);
        if (d < -1e-9) {
            throw new IllegalStateException(name + " went down between scrapes: the sidecar's counters were reset");
        }
        return Math.max(0, d);
    }

    /** Requests the sidecar counted as not ok, before to after. */
    public double sidecarErrors() {
        return requestsByOutcome.entrySet().stream().filter(e -> !e.getKey().equals("ok"))
                .mapToDouble(Map.Entry::getValue).sum();
    }

    /** Good requests per second: the SLO share times the achieved throughput (NaN without an SLO). */
    public double goodThroughput() {
        return slo == null ? Double.NaN : slo.share() * throughput;
    }

    /** Good output tokens per second: the good share of the judged output tokens times output tok/s (NaN: unknown). */
    public double goodTokensPerSecond() {
        return slo == null ? Double.NaN : slo.goodTokenShare() * outputTokensPerSecond;
    }

    /** The latency series by its short name: ttft, tpot, itl, e2e. */
    public Latency latency(String metric) {
        return switch (metric) {
            case "ttft" -> ttft;
            case "tpot" -> tpot;
            case "itl" -> itl;
            case "e2e" -> e2e;
            default -> throw new IllegalArgumentException(metric);
        };
    }
}
