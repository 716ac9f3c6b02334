package dev.llmsidecar.measure;

import static dev.llmsidecar.metrics.Contract.COST_GPU_SPEND;
import static dev.llmsidecar.metrics.Contract.COST_PER_MILLION_GOOD;
import static dev.llmsidecar.metrics.Contract.COST_PER_MILLION_OUTPUT;
import static dev.llmsidecar.metrics.Contract.COST_SPEND;
import static dev.llmsidecar.metrics.Contract.USEFUL_TOKENS;
import static dev.llmsidecar.metrics.Contract.WASTED_TOKENS;
import static dev.llmsidecar.metrics.Label.REASON;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.slo.SloVerdict;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.TokenCountSource;
import dev.llmsidecar.window.SlidingSums;
import java.util.function.LongSupplier;

/**
 * Useful versus wasted output tokens, and what serving costs (sidecar.cost): every generated output token is useful
 * (its request completed and met every objective that applies) or wasted (cancelled by the client, failed, finished
 * outside its SLO). docs/metrics.md, "Useful and wasted work, and cost".
 */
public final class WorkMetrics {

    public static final String CANCELLED = "client_cancelled";
    public static final String FAILED = "failed";
    public static final String SLO_MISSED = "slo_missed";

    private static final int COST = 0;
    private static final int OUTPUT = 1;
    private static final int USEFUL = 2;

    /** How serving is priced; null fields: not that way. */
    private record Price(Double gpuHour, int gpus, double inputPerMillion, double outputPerMillion,
            double cachedInputPerMillion, double reasoningOutputPerMillion) {
        boolean perToken() {
            return gpuHour == null;
        }
    }

    private final Recorders recorders;
    private final Price price; // null: cost is not configured, nothing about it is exported
    private final SlidingSums window;
    private final LongSupplier clock;
    private final long startNanos;

    public WorkMetrics(Recorders recorders, SidecarConfig.Cost config, LongSupplier nanoClock) {
        this.recorders = recorders;
        this.clock = nanoClock;
        this.startNanos = nanoClock.getAsLong();
        this.price = price(config);
        this.window = price == null ? null : new SlidingSums(nanoClock, config.window(), 3);
        if (price != null) {
            if (!price.perToken()) {
                recorders.observe(COST_GPU_SPEND, () -> gpuCost(clock.getAsLong() - startNanos));
            }
            recorders.observe(COST_PER_MILLION_OUTPUT, () -> perMillion(OUTPUT));
            recorders.observe(COST_PER_MILLION_GOOD, () -> perMillion(USEFUL));
        }
    }

    private static Price price(SidecarConfig.Cost c) {
        boolean perToken = c.inputPricePerMillion().isPresent() || c.outputPricePerMillion().isPresent()
                || c.cachedInputPricePerMillion().isPresent() || c.reasoningOutputPricePerMillion().isPresent();
        if (c.gpuHourPrice().isPresent() && perToken) {
            throw new IllegalArgumentException("sidecar.cost: set gpu-hour-price or the per-million token prices, "
                    + "not both");
        }
        if (c.gpus() < 1) {
            throw new IllegalArgumentException("sidecar.cost.gpus must be at least 1: " + c.gpus());
        }
        double in = c.inputPricePerMillion().orElse(0.0);
        double out = c.outputPricePerMillion().orElse(0.0);
        double cachedIn = c.cachedInputPricePerMillion().orElse(in);
        double reasoningOut = c.reasoningOutputPricePerMillion().orElse(out);
        Double gpuHour = c.gpuHourPrice().orElse(null);
        if (in < 0 || out < 0 || cachedIn < 0 || reasoningOut < 0 || (gpuHour != null && gpuHour < 0)) {
            throw new IllegalArgumentException("sidecar.cost: prices cannot be negative");
        }
        return gpuHour == null && !perToken ? null : new Price(gpuHour, c.gpus(), in, out, cachedIn, reasoningOut);
    }

    /**
     * Why a finished request's output was wasted, or null when it was useful. A request no objective applies to is
     * useful once it completed.
     */
    public static String wasteReason(RequestResult r, SloVerdict verdict) {
        return switch (r.outcome()) {
            case CLIENT_CANCELLED -> CANCELLED;
            case UPSTREAM_ERROR, UPSTREAM_BROKEN -> FAILED;
            case OK -> verdict.counted() && !verdict.good() ? SLO_MISSED : null;
            case SHED -> null; // never generated anything (shed requests are not finished requests)
        };
    }

    /** One finished request, with its labels and SLO verdict. */
    public void record(RequestLabels labels, RequestResult r, SloVerdict verdict) {
        long output = r.outputTokenSource() == TokenCountSource.NONE ? 0 : Math.max(0, r.outputTokens());
        String waste = wasteReason(r, verdict);
        if (output > 0) {
            if (waste == null) {
                recorders.count(USEFUL_TOKENS, output, labels.of(USEFUL_TOKENS));
            } else {
                recorders.count(WASTED_TOKENS, output, labels.of(WASTED_TOKENS).and(REASON, waste));
            }
        }
        if (price == null) {
            return;
        }
        window.add(OUTPUT, output);
        if (waste == null) {
            window.add(USEFUL, output);
        }
        if (price.perToken()) {
            double spend = tokenSpend(r, output);
            recorders.count(COST_SPEND, spend, labels.of(COST_SPEND));
            window.add(COST, spend);
        }
    }

    /**
     * What a request's tokens cost at per-token prices: cached input tokens (part of the prompt tokens, as servers
     * count them) at the cached-input price, reasoning tokens (part of the output) at the reasoning price, the rest
     * at the input and output prices. A count the server did not report is priced as the plain kind.
     */
    private double tokenSpend(RequestResult r, long output) {
        long prompt = Math.max(0, r.promptTokens());
        long cached = Math.min(prompt, Math.max(0, r.cachedTokens()));
        long reasoning = Math.min(output, Math.max(0, r.reasoningTokens()));
        return ((prompt - cached) * price.inputPerMillion() + cached * price.cachedInputPerMillion()
                + (output - reasoning) * price.outputPerMillion() + reasoning * price.reasoningOutputPerMillion())
                / 1e6;
    }

    /** GPU cost of {@code nanos} of serving. */
    private double gpuCost(long nanos) {
        return price.gpuHour() * price.gpus() * nanos / 3.6e12;
    }

    /** Cost over the window per million of {@code tokens}; NaN without such tokens. */
    private double perMillion(int tokens) {
        double n = window.sum(tokens);
        if (n <= 0) {
            return Double.NaN;
        }
        double cost = price.perToken() ? window.sum(COST)
                : gpuCost(Math.min(window.spanNanos(), clock.getAsLong() - startNanos));
        return cost / n * 1e6;
    }
}
