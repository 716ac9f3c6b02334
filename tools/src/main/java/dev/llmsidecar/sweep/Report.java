package dev.llmsidecar.sweep;

import dev.llmsidecar.metrics.CumulativeHistogram;
import dev.llmsidecar.report.Fmt;
import dev.llmsidecar.report.MarkdownTable;
import dev.llmsidecar.report.SvgChart.Axis;
import dev.llmsidecar.report.SvgChart;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/** Writes a sweep's report (on the tools' report writer): sweep.md, sweep-latency.svg, sweep-load.svg, results.json. */
public final class Report {

    static final String[] METRICS = {"ttft", "tpot", "itl", "e2e"};
    static final String[] METRIC_NAMES = {"TTFT", "TPOT", "ITL", "E2E"};

    private Report() {
    }

    /** Writes every file into {@code dir} (created if needed); returns the Markdown. */
    public static String write(SweepResult r, Path dir, String commandLine) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("results.json"), json(r, commandLine).encodePrettily() + "\n",
                StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("sweep-latency.svg"), latencySvg(r), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("sweep-load.svg"), loadSvg(r), StandardCharsets.UTF_8);
        String md = markdown(r, commandLine);
        Files.writeString(dir.resolve("sweep.md"), md, StandardCharsets.UTF_8);
        return md;
    }

    // ---- Markdown ----

    static String markdown(SweepResult r, String commandLine) {
        SweepOptions o = r.options();
        StringBuilder md = new StringBuilder();
        md.append("# ").append(o.title != null ? o.title : "Load sweep through llm-sidecar").append("\n\n");
        md.append(String.format(Locale.ROOT, "%s, %s: %s %s per step; model `%s` at `%s%s`, results read from `%s`. "
                + "Each step: %s s warm-up (not measured), then %s s or %d requests, then its requests drained "
                + "(at most %s s). Request lengths: %s. Started %s, took %.0f s.%n%n",
                o.modeDescription(), switch (o.mode) {
                    case OPEN -> "offered request rates";
                    case CLOSED -> "concurrent streams";
                    case TRACE -> "speed-ups";
                },
                joinLoads(r), o.loadUnit(), o.model, o.url, o.path, o.metricsUrl, SloSpec.fmt(o.warmupSeconds),
                SloSpec.fmt(o.stepSeconds), o.maxRequests, SloSpec.fmt(o.drainSeconds), r.shapes(), r.startedAt(),
                r.seconds()));
        if (commandLine != null) {
            md.append("```\n").append(commandLine).append("\n```\n\n");
        }

        md.append("## Summary\n\n");
        md.append(kneeLine(r)).append('\n');
        md.append(sidecarKneeLine(r)).append('\n');
        if (o.slo != null) {
            md.append(goodputLine(r)).append('\n');
        } else {
            md.append("- **Goodput**: no `--slo` given.\n");
        }
        md.append('\n');

        if (!r.notes().isEmpty()) {
            md.append("## Trace replay\n\n");
            for (String n : r.notes()) {
                md.append("- ").append(n).append('\n');
            }
            md.append('\n');
        }
        md.append("## Steps\n\n");
        md.append("Percentiles from the difference of the sidecar's histograms over the step, interpolated within "
                + "buckets as PromQL's `histogram_quantile` does (see *Precision* below). TTFT, TPOT and ITL in "
                + "milliseconds, E2E in seconds; throughput over the steady part of the step.");
        if (o.mode == SweepOptions.Mode.OPEN) {
            md.append(" *Sent req/s* below is the rate the Poisson arrivals actually had in the measured time: over "
                    + "a step of t seconds it varies around the offered rate by about √(rate ÷ t) req/s (one "
                    + "standard deviation).");
        }
        md.append("\n\n");
        MarkdownTable steps = new MarkdownTable("step", "offered (" + o.loadUnit() + ")", "achieved req/s",
                "output tok/s", "TTFT p50 / p95 / p99", "TPOT p50 / p95 / p99", "ITL p50 / p95 / p99",
                "E2E p50 / p95 / p99", "errors sidecar / client", "SLO share").align("rrrrllllrr");
        for (StepResult s : r.steps()) {
            steps.row(s.index(), o.formatLoad(s.load()), f3(s.throughput()), f3(s.outputTokensPerSecond()),
                    triple(s.ttft(), 1000), triple(s.tpot(), 1000), triple(s.itl(), 1000), triple(s.e2e(), 1),
                    Fmt.fixed(s.sidecarErrors(), 0) + " / " + s.client().errorCount(),
                    s.slo() == null ? Fmt.NONE : share(s.slo().share()));
        }
        md.append(steps).append('\n');
        MarkdownTable counts = new MarkdownTable("step", "measured s", "drain s", "sent req/s",
                "sidecar requests by outcome", "client sent / ok / errors / dropped", "prompt tokens / request (engine)",
                "output tokens / request", "good req/s", "sidecar knee after").align("rrrrllrrrr");
        for (StepResult s : r.steps()) {
            ClientSummary c = s.client();
            counts.row(s.index(), Fmt.fixed(s.measuredSeconds(), 1), Fmt.fixed(s.drainSeconds(), 1),
                    f3(c.sent() / s.measuredSeconds()), outcomes(s.requestsByOutcome()),
                    c.sent() + " / " + c.ok() + " / " + clientErrors(c) + " / " + c.dropped(),
                    f3(s.meanInputTokens()), f3(s.meanOutputTokens()), f3(s.goodThroughput()), f3(s.sidecarKnee()));
        }
        md.append(counts).append('\n');

        md.append("## Plots\n\n");
        md.append("![Latency against achieved throughput, p50/p95/p99, knee and goodput marked]"
                + "(sweep-latency.svg)\n\n");
        md.append("![Throughput and SLO share against offered load](sweep-load.svg)\n\n");

        md.append("## Method\n\n");
        md.append(method(r));

        md.append("## Precision: the sidecar's buckets\n\n");
        md.append(precision(r));

        md.append(comparison(r));

        if (!r.warnings().isEmpty()) {
            md.append("## Warnings\n\n");
            for (String w : r.warnings()) {
                md.append("- ").append(w).append('\n');
            }
            md.append('\n');
        }
        md.append("Raw numbers (every step's histogram differences included): `results.json`.\n");
        return md.toString();
    }

    private static String kneeLine(SweepResult r) {
        SweepOptions o = r.options();
        SweepAnalysis.Knee k = r.knee();
        if (!k.found()) {
            return "- **Knee (this sweep)**: none: no pair of neighbouring steps had a latency median rising faster "
                    + "than the load (elasticity > 1 and held). The engine was not pushed past its knee, or the "
                    + "steps are too far apart.";
        }
        List<StepResult> sorted = SweepAnalysis.sorted(r.steps());
        StepResult a = sorted.get(k.step());
        StepResult b = sorted.get(k.step() + 1 < sorted.size() ? k.step() + 1 : k.step());
        String metric = k.metric().toUpperCase(Locale.ROOT);
        return String.format(Locale.ROOT, "- **Knee (this sweep)**: **%s %s** — the %s median rises from %s ms at %s "
                + "to %s ms at %s (elasticity %.2f > 1), the criterion of docs/slo-guide.md section 7 applied to "
                + "the step medians; achieved %s req/s there.", o.formatLoad(k.load()), o.loadUnit(), metric,
                f3(a.latency(k.metric()).p50() * 1000), o.formatLoad(a.load()),
                f3(b.latency(k.metric()).p50() * 1000), o.formatLoad(b.load()), k.elasticity(), f3(a.throughput()));
    }

    private static String sidecarKneeLine(SweepResult r) {
        SweepOptions o = r.options();
        if (Double.isNaN(r.sidecarKnee())) {
            return "- **Knee (the sidecar's own estimate)**: `llm_sidecar_saturation_knee_requests` is NaN: the "
                    + "sidecar's load bands did not show one (each band needs `sidecar.saturation.min-samples` "
                    + "requests in `sidecar.saturation.window`).";
        }
        String extra = "";
        if (o.openArrivals() && r.knee().found()) {
            StepResult s = SweepAnalysis.sorted(r.steps()).get(r.knee().step());
            extra = String.format(Locale.ROOT, " In this open-loop sweep the knee step ran about %s requests in "
                    + "flight (Little's law: %s req/s × mean E2E %s s).", f3(s.throughput() * s.e2e().mean()),
                    f3(s.throughput()), f3(s.e2e().mean()));
        }
        return String.format(Locale.ROOT, "- **Knee (the sidecar's own estimate)**: "
                + "`llm_sidecar_saturation_knee_requests` = **%s requests in flight** after the sweep (from its "
                + "load bands of TTFT/TPOT by requests in flight at arrival; bands are powers of two).%s",
                f3(r.sidecarKnee()), extra);
    }

    private static String goodputLine(SweepResult r) {
        SweepOptions o = r.options();
        SweepAnalysis.Goodput g = r.goodput();
        StringBuilder sb = new StringBuilder();
        String source = o.sloObjective != null ? "the sidecar's SLO counters of objective `" + o.sloObjective + "`"
                : "the histograms' buckets at each threshold (lower bound)";
        if (!g.found()) {
            sb.append("- **Goodput at the SLO** (").append(o.slo.describe()).append("): **no step met it**, not "
                    + "even the lightest. Share from ").append(source).append('.');
        } else {
            StepResult s = SweepAnalysis.sorted(r.steps()).get(g.step());
            sb.append(String.format(Locale.ROOT, "- **Goodput at the SLO** (%s): **%s %s** offered, the highest load "
                    + "whose share of good requests (%s) met the target; achieved %s req/s, of which %s req/s good",
                    o.slo.describe(), o.formatLoad(g.load()), o.loadUnit(), share(s.slo().share()), f3(g.throughput()),
                    f3(g.goodThroughput())));
            if (!Double.isNaN(s.goodTokensPerSecond())) {
                sb.append(String.format(Locale.ROOT, " and %s good output tok/s", f3(s.goodTokensPerSecond())));
            }
            sb.append(". Share from ").append(source).append('.');
            if (!g.laterPassing().isEmpty()) {
                sb.append(" Heavier steps that passed again after a miss (not counted): ");
                sb.append(String.join(", ", g.laterPassing().stream().map(o::formatLoad).toList())).append('.');
            }
        }
        return sb.toString();
    }

    private static String method(SweepResult r) {
        SweepOptions o = r.options();
        StringBuilder sb = new StringBuilder();
        sb.append("The sweep is only the load. Every latency, throughput and error figure above is the sidecar's "
                + "own measurement: before and after each step the sweep scrapes `/q/metrics` and takes the "
                + "difference of these series, summed over every label set of model `").append(o.model)
                .append("`, operation `").append(o.operation()).append("`, `streaming=\"true\"`:\n\n");
        String window = "after warm-up → drained";
        sb.append(new MarkdownTable("figure", "series", "window")
                .row("TTFT", "`gen_ai_server_time_to_first_token_seconds` (every stream that got a first token)", window)
                .row("TPOT", "`gen_ai_server_time_per_output_token_seconds{outcome=\"ok\"}`", window)
                .row("ITL (token-weighted)", "`llm_sidecar_inter_token_latency_seconds{outcome=\"ok\"}`", window)
                .row("E2E", "`gen_ai_server_request_duration_seconds{outcome=\"ok\"}`", window)
                .row("errors", "`llm_sidecar_requests_total` by outcome (not `ok`)", window)
                .row("achieved req/s, output tok/s", "`llm_sidecar_requests_total{outcome=\"ok\"}`, "
                        + "`llm_sidecar_tokens_total{token_type=\"output\"}`", "after warm-up → end of sending, ÷ that time")
                .row("SLO share", "`llm_sidecar_slo_objective_requests_total` / `..._objective_good_requests_total`, "
                        + "`llm_sidecar_slo_good_output_tokens_total` (with `--slo-objective`), else the latency "
                        + "histograms at each threshold", window)
                .row("sidecar knee", "`llm_sidecar_saturation_knee_requests`", "after each step")).append('\n');
        sb.append("- **Steps.** Each step offers its load for the warm-up, scrapes (*before*), keeps the load for the "
                + "step time or the request cap, scrapes (*end*), stops sending and waits for its open requests "
                + "(bounded; still open then: cancelled, counted), waits until the sidecar has none in flight and "
                + "scrapes (*after*). So a step's latency histograms hold the requests that finished in it "
                + "(including warm-up requests finishing after *before*) and none of the next step's.\n");
        sb.append("- **Percentiles** are computed from the bucket differences exactly as PromQL's "
                + "`histogram_quantile` does (promql/quantile.go, `bucketQuantile`): the rank q × count is located in "
                + "the first bucket whose cumulative count reaches it and interpolated linearly inside it (0 as the "
                + "lower bound of the first bucket; a rank in `+Inf` gives the highest finite bound). They are what a "
                + "Prometheus dashboard would show for the same window, with the same bucket error.\n");
        if (o.mode == SweepOptions.Mode.OPEN) {
            sb.append("- **Open loop.** Arrivals are a Poisson process at the step's rate (exponential gaps, seeded), "
                    + "sent whether or not earlier requests finished; an arrival while `--max-in-flight` "
                    + "requests are open is dropped and counted.\n");
        } else if (o.mode == SweepOptions.Mode.TRACE) {
            sb.append("- **Trace replay.** Each step sends the recorded trace's requests at their recorded arrival "
                    + "times divided by the step's speed-up, whether or not earlier requests finished, except that a "
                    + "turn of a session waits for its session's previous turn to end; prompts are built from the "
                    + "hash ids (equal ids, equal 512-token blocks of text) so that the engine's prefix cache sees "
                    + "the recorded sharing. What each step took from the trace is listed under *Trace replay*.\n");
        } else {
            sb.append("- **Closed loop.** The step's number of streams each send their next request as soon as the "
                    + "last one ended (after a failed one, 100 ms later).\n");
        }
        sb.append("- **Prompts** are N random common English words, each one token in the usual vocabularies, plus "
                + "the chat template; the table shows the prompt tokens the engine reported. Outputs ask for "
                + "`max_tokens` tokens").append(o.ignoreEos ? " with `\"ignore_eos\": true`" : "").append(
                        " and `stream_options.include_usage`.\n");
        if (o.slo != null) {
            if (o.sloObjective != null) {
                sb.append("- **SLO share** from the sidecar objective `").append(o.sloObjective).append(
                        "`: its good requests ÷ the requests it judged, per request and exact (server errors count as "
                        + "bad; client errors and harmless cancellations are not judged: docs/slo.md). The histogram "
                        + "estimate is in results.json as a cross-check.\n");
            } else {
                sb.append("- **SLO share** estimated from the histograms: for each threshold, the share m_i of the "
                        + "histogram's requests at or below it (read at the bucket bound when the threshold is one — "
                        + "the sidecar adds every threshold of its configured objectives to the bounds — else "
                        + "interpolated within the bucket); share = (ok ÷ all finished requests) × "
                        + "(1 − Σ (1 − m_i)), a lower bound when several thresholds are set (one request can miss "
                        + "several; the upper bound, with min m_i, is in results.json). Errors count as not good. "
                        + "Configure the same objective in the sidecar and pass `--slo-objective` for the exact "
                        + "per-request share.\n");
            }
            sb.append("- **Goodput** = the highest offered load at which the share is at least the target, reading the "
                    + "steps from the lightest and stopping at the first miss; its good req/s = share × achieved "
                    + "req/s.\n");
        }
        sb.append("- **Knee**: between neighbouring steps a, b the elasticity ln(L_b/L_a) ÷ ln(x_b/x_a) of the TTFT "
                + "(and TPOT) median L to the offered load x; the knee is step a's load for the first pair with "
                + "elasticity > 1, a rise of at least 2 ms, and no heavier step falling back below halfway; the lower "
                + "of the TTFT and TPOT answers (docs/slo-guide.md section 7, on steps instead of load bands; steps "
                + "with fewer than 10 samples are left out). The sidecar's own knee is in requests in flight at "
                + "arrival, from all traffic it saw in its window.\n\n");
        return sb.toString();
    }

    private static String precision(SweepResult r) {
        StringBuilder sb = new StringBuilder();
        sb.append("A percentile read from buckets is only known to lie inside its bucket; the interpolation places it "
                + "linearly. The widest bucket (relative to its upper bound) that held a step's median or p99:\n\n");
        MarkdownTable widest = new MarkdownTable("metric", "median: widest bucket", "p99: widest bucket");
        double lowest = Double.POSITIVE_INFINITY;
        double highest = 0;
        for (int m = 0; m < METRICS.length; m++) {
            String worst50 = Fmt.NONE;
            String worst99 = Fmt.NONE;
            double w50 = -1;
            double w99 = -1;
            for (StepResult s : r.steps()) {
                StepResult.Latency l = s.latency(METRICS[m]);
                if (l.count() == 0) {
                    continue;
                }
                lowest = Math.min(lowest, l.p50());
                highest = Math.max(highest, l.p99());
                double rel50 = relWidth(l.p50Bucket());
                if (rel50 > w50) {
                    w50 = rel50;
                    worst50 = bucketText(l.p50Bucket(), rel50, s);
                }
                double rel99 = relWidth(l.p99Bucket());
                if (rel99 > w99) {
                    w99 = rel99;
                    worst99 = bucketText(l.p99Bucket(), rel99, s);
                }
            }
            widest.row(METRIC_NAMES[m], worst50, worst99);
        }
        sb.append(widest).append('\n');
        sb.append("For a sweep, give the sidecar finer bounds where the latencies are: "
                + "`sidecar.metrics.latency-buckets` replaces the preset's bounds for every latency histogram (the "
                + "`default` preset is already the densest of `default`, `vllm`, `otel`), and every SLO threshold is "
                + "added to them. Bounds 10 % apart around what this sweep measured would be:\n\n```\n"
                + "sidecar.metrics.latency-buckets=").append(suggestBuckets(lowest, highest)).append("\n```\n\n");
        sb.append("That costs one `/q/metrics` line per bound per label set (docs/metrics.md, *series budget*): "
                + "fine on a sidecar used for a load test, worth a thought in production. The client-side figures "
                + "in the comparison below are exact and show the size of the bucket error directly.\n\n");
        return sb.toString();
    }

    private static double relWidth(double[] bucket) {
        if (Double.isNaN(bucket[0]) || Double.isInfinite(bucket[1]) || bucket[1] <= 0) {
            return Double.isInfinite(bucket[1]) ? Double.POSITIVE_INFINITY : -1;
        }
        return (bucket[1] - bucket[0]) / bucket[1];
    }

    private static String bucketText(double[] b, double rel, StepResult s) {
        if (Double.isInfinite(b[1])) {
            return String.format(Locale.ROOT, "(%s s, +Inf] at step %d: beyond the highest bound", f3(b[0]), s.index());
        }
        return String.format(Locale.ROOT, "(%s, %s] s at step %d: %.0f %% of its bound", f3(b[0]), f3(b[1]),
                s.index(), rel * 100);
    }

    /** Bounds about 10 % apart from a little below {@code lo} to a little above {@code hi}, at most 80 of them. */
    static String suggestBuckets(double lo, double hi) {
        if (!(lo > 0) || Double.isInfinite(lo) || !(hi > lo)) {
            lo = 0.001;
            hi = Math.max(hi, 60);
        }
        double from = Math.max(0.0005, lo / 2);
        double to = hi * 2;
        double factor = Math.max(1.1, Math.pow(to / from, 1.0 / 80));
        TreeSet<BigDecimal> bounds = new TreeSet<>();
        for (double b = from; b <= to * factor; b *= factor) {
            bounds.add(new BigDecimal(b).round(new MathContext(2)).stripTrailingZeros());
        }
        List<String> out = new ArrayList<>();
        for (BigDecimal b : bounds) {
            out.add(b.toPlainString());
        }
        return String.join(",", out);
    }

    private static String comparison(SweepResult r) {
        SweepOptions o = r.options();
        StepResult s = compareStep(r);
        if (s == null) {
            return "";
        }
        ClientSummary c = s.client();
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "## Step %d against `vllm bench serve`'s definitions%n%n", s.index()));
        sb.append(String.format(Locale.ROOT, "Step %d (%s %s): the sidecar's histogram figures beside the same "
                + "%d measured requests timed by the sweep's own client, exactly (percentiles of every sample: "
                + "HdrHistogram, 3 significant digits, nearest rank), under the sidecar's definitions and under "
                + "`vllm bench serve`'s "
                + "(vllm/benchmarks/lib/endpoint_request_func.py, serve.py; docs/metrics.md). p50 · p99, ms.%n%n",
                s.index(), o.formatLoad(s.load()), o.loadUnit(), c.ok()));
        MarkdownTable t = new MarkdownTable("figure", "sidecar (its histograms)", "client, sidecar's definition (exact)",
                "client, `vllm bench serve` definition (exact)", "why they differ");
        boolean prelude = c.benchTtft().count() > 0 && c.ttft().count() > 0
                && c.benchTtft().p50() < 0.8 * c.ttft().p50();
        t.row("TTFT", pair(s.ttft()), pair(c.ttft()), pair(c.benchTtft()), prelude
                ? "The bench stops its TTFT clock at the first SSE message with a non-empty `choices`: this "
                        + "engine sends a role-only chunk (`{\"role\":\"assistant\"}`) before its first token, so the "
                        + "bench measures that prelude, not a token. Its TTFT is the sidecar's *time to first response "
                        + "chunk* (`llm_sidecar_time_to_first_response_chunk_seconds`: " + pair(s.firstResponseChunk())
                        + "). The sidecar waits for content, reasoning or a tool call."
                : "Same stop event here (the first message with `choices` carried the first token). The bench's "
                        + "t0 is just before its POST, the sidecar's when the request head reached it: the client's "
                        + "figures include the hop to the sidecar. The sidecar's time to first response chunk: "
                        + pair(s.firstResponseChunk()) + ".");
        t.row("TPOT", pair(s.tpot()), pair(c.tpot()), pair(c.benchTpot()), "Same formula, (E2E − TTFT) ÷ (N − 1) with "
                + "N from `usage`, one sample per request with N ≥ 2. The bench's E2EL ends at the usage-only chunk and "
                + "its TTFT " + (prelude ? "at the role prelude, so its TPOT spreads the prefill over the tokens and "
                        + "comes out larger." : "at the same chunk, so they agree to within the usage chunk's delay."));
        t.row("ITL", pair(s.itl()), pair(c.itl()), pair(c.benchItl()), "The sidecar's ITL is token-weighted (a chunk of "
                + "k tokens after gap g is k samples of g/k, SGLang's method). The bench's ITL list is one sample per "
                + "SSE message after its first, pooled over all requests" + (prelude ? ": its first gap, from the role "
                        + "prelude to the first token, is the whole prefill, which fattens its tail." : ".")
                + " The sidecar's raw chunk gaps (`gen_ai_client_operation_time_per_output_chunk_seconds`: "
                + pair(s.chunkGap()) + "; client " + pair(c.chunkGap()) + ") are the bench's kind of ITL.");
        t.row("E2E / E2EL", pairS(s.e2e()), pairS(c.e2e()), pairS(c.benchE2el()), "The sidecar stops at the last "
                + "token-bearing chunk; the bench at the last message it reads, which on the chat path is the "
                + "usage-only chunk (usually well under a millisecond later). Seconds.");
        double clientSeconds = s.measuredSeconds() + s.drainSeconds();
        t.row("throughput", f3(s.throughput()) + " req/s, " + f3(s.outputTokensPerSecond()) + " output tok/s", Fmt.NONE,
                f3(c.ok() / clientSeconds) + " req/s, " + f3(c.outputTokens() / clientSeconds) + " output tok/s",
                "The sidecar's: completions while the load was held ÷ that time. The bench divides everything it "
                        + "completed by its whole run, ramp-down included (here: the step's measured requests ÷ "
                        + "measured + drain time).");
        if (o.slo != null && s.slo() != null) {
            t.row("goodput", "share " + share(s.slo().share()) + " of all requests (" + s.slo().source() + ")",
                    Fmt.NONE, Fmt.NONE, "The bench's `--goodput ttft:… tpot:… e2el:…` counts good *completed* "
                            + "requests ÷ its duration: failed requests drop out of it instead of counting as bad, and "
                            + "its TTFT is the one in the first row.");
        }
        sb.append(t).append('\n');
        sb.append("Where the sidecar's column differs from the client's same-definition column, the difference is "
                + "the bucket interpolation (see *Precision*) plus the client-to-sidecar hop; where the two client "
                + "columns differ, it is the definitions.\n\n");
        return sb.toString();
    }

    /** The step the comparison uses: --compare-step, else the goodput step, else the middle one. */
    static StepResult compareStep(SweepResult r) {
        if (r.steps().isEmpty()) {
            return null;
        }
        if (r.options().compareStep > 0) {
            return r.steps().get(r.options().compareStep - 1);
        }
        if (r.goodput() != null && r.goodput().found()) {
            return SweepAnalysis.sorted(r.steps()).get(r.goodput().step());
        }
        return r.steps().get((r.steps().size() - 1) / 2);
    }

    // ---- SVG ----

    static String latencySvg(SweepResult r) {
        SweepOptions o = r.options();
        List<StepResult> steps = SweepAnalysis.sorted(r.steps());
        int pw = 400;
        int ph = 230;
        SvgChart svg = new SvgChart(2 * (pw + 90), 2 * (ph + 85) + 40, "Latency vs achieved throughput (sidecar histograms, "
                + o.modeDescription().toLowerCase(Locale.ROOT) + ")");
        double[] x = steps.stream().mapToDouble(StepResult::throughput).toArray();
        double xMax = 0;
        for (double v : x) {
            xMax = Double.isNaN(v) ? xMax : Math.max(xMax, v);
        }
        double[] thresholds = o.slo == null ? new double[4]
                : new double[] {o.slo.ttft(), o.slo.tpot(), Double.NaN, o.slo.e2e()};
        for (int m = 0; m < METRICS.length; m++) {
            int col = m % 2;
            int row = m / 2;
            double scale = METRICS[m].equals("e2e") ? 1 : 1000;
            String unit = METRICS[m].equals("e2e") ? "s" : "ms";
            double[][] ys = new double[3][steps.size()];
            double lo = Double.POSITIVE_INFINITY;
            double hi = 0;
            for (int i = 0; i < steps.size(); i++) {
                StepResult.Latency l = steps.get(i).latency(METRICS[m]);
                ys[0][i] = l.p50() * scale;
                ys[1][i] = l.p95() * scale;
                ys[2][i] = l.p99() * scale;
                for (double[] y : ys) {
                    if (!Double.isNaN(y[i]) && y[i] > 0) {
                        lo = Math.min(lo, y[i]);
                        hi = Math.max(hi, y[i]);
                    }
                }
            }
            boolean log = hi / lo > 20;
            String yLabel = METRIC_NAMES[m] + " (" + unit + ")";
            SvgChart.Panel p = svg.panel(70 + col * (pw + 90), 60 + row * (ph + 85), pw, ph,
                    Axis.linear(0, xMax * 1.05, "achieved requests/s"),
                    log ? Axis.log(lo, hi * 1.1, yLabel) : Axis.linear(lo, hi * 1.1, yLabel),
                    METRIC_NAMES[m] + (log ? " (log scale)" : ""));
            String[] names = {"p50", "p95", "p99"};
            for (int k = 0; k < 3; k++) {
                p.series(x, ys[k], SvgChart.COLORS[k], names[k], false);
            }
            for (int i = 0; i < steps.size(); i++) {
                p.note(x[i], ys[0][i], o.formatLoad(steps.get(i).load()));
            }
            if (!Double.isNaN(thresholds[m]) && thresholds[m] > 0) {
                p.horizontal(thresholds[m] * scale, "#2ca02c", "SLO " + SvgChart.tick(thresholds[m] * scale) + " " + unit);
            }
            if (r.knee().found()) {
                p.vertical(steps.get(r.knee().step()).throughput(), "#d62728", "knee " + o.formatLoad(r.knee().load()),
                        false);
            }
            if (r.goodput() != null && r.goodput().found()) {
                int g = r.goodput().step();
                p.ring(x[g], ys[0][g], "#2ca02c", "goodput");
            }
        }
        svg.text(70, 2 * (ph + 85) + 30, "Point labels: offered load (" + o.loadUnit() + "). Percentiles interpolated "
                + "in the sidecar's buckets, as histogram_quantile does.", "start", 10, "#555");
        return svg.toSvg();
    }

    static String loadSvg(SweepResult r) {
        SweepOptions o = r.options();
        List<StepResult> steps = SweepAnalysis.sorted(r.steps());
        int pw = 280;
        int ph = 220;
        int panels = o.slo != null ? 3 : 2;
        SvgChart svg = new SvgChart(panels * (pw + 90) + 10, ph + 130, "Throughput and SLO share vs offered load");
        double[] x = steps.stream().mapToDouble(StepResult::load).toArray();
        double xMax = x.length == 0 ? 1 : x[x.length - 1];
        double[] rps = steps.stream().mapToDouble(StepResult::throughput).toArray();
        double[] good = steps.stream().mapToDouble(StepResult::goodThroughput).toArray();
        double[] tok = steps.stream().mapToDouble(StepResult::outputTokensPerSecond).toArray();
        double xMin = x.length == 0 ? 1 : x[0];
        boolean logX = xMin > 0 && xMax / xMin >= 8 && medianRatio(x) >= 1.5; // geometric steps: 1, 2, 4 ...
        String xLabel = "offered load (" + o.loadUnit() + (logX ? ", log scale" : "") + ")";
        Axis xAxis = logX ? Axis.log(xMin / 1.3, xMax * 1.3, x, xLabel) : Axis.linear(0, xMax * 1.05, xLabel);
        double rpsMax = max(rps);
        if (o.mode == SweepOptions.Mode.OPEN) {
            rpsMax = Math.max(rpsMax, xMax);
        }
        SvgChart.Panel a = svg.panel(70, 60, pw, ph, xAxis, Axis.linear(0, rpsMax * 1.1, "requests/s"), "requests/s");
        a.series(x, rps, SvgChart.COLORS[0], "achieved", false);
        if (o.slo != null) {
            a.series(x, good, SvgChart.COLORS[3], "good (meeting the SLO)", false);
        }
        if (o.mode == SweepOptions.Mode.OPEN) {
            a.series(x, x, "#999", "offered", true);
        }
        markKneeAndGoodput(r, a, steps);
        SvgChart.Panel b = svg.panel(70 + (pw + 90), 60, pw, ph, xAxis, Axis.linear(0, max(tok) * 1.1,
                "output tokens/s"), "output tokens/s");
        b.series(x, tok, SvgChart.COLORS[1], "achieved", false);
        markKneeAndGoodput(r, b, steps);
        if (o.slo != null) {
            double[] share = steps.stream().mapToDouble(s -> s.slo() == null ? Double.NaN : s.slo().share()).toArray();
            SvgChart.Panel c = svg.panel(70 + 2 * (pw + 90), 60, pw, ph, xAxis, Axis.linear(0, 1, "share"),
                    "share of requests meeting the SLO").legendAtBottom();
            c.series(x, share, SvgChart.COLORS[3], "share (" + (o.sloObjective != null ? "sidecar counters"
                    : "histograms") + ")", false);
            c.horizontal(o.slo.target(), "#d62728", "target " + SloSpec.fmt(o.slo.target()));
            markKneeAndGoodput(r, c, steps);
        }
        svg.text(70, ph + 120, o.slo != null ? "SLO: " + o.slo.describe() : "No SLO given.", "start", 10, "#555");
        return svg.toSvg();
    }

    private static void markKneeAndGoodput(SweepResult r, SvgChart.Panel p, List<StepResult> steps) {
        if (r.knee().found()) {
            p.vertical(r.knee().load(), "#d62728", "knee", false);
        }
        if (r.goodput() != null && r.goodput().found()) {
            p.vertical(r.goodput().load(), "#2ca02c", "goodput", true);
        }
    }

    /** The median ratio of neighbouring loads (1 for fewer than two). */
    static double medianRatio(double[] sortedLoads) {
        if (sortedLoads.length < 2) {
            return 1;
        }
        double[] ratios = new double[sortedLoads.length - 1];
        for (int i = 1; i < sortedLoads.length; i++) {
            ratios[i - 1] = sortedLoads[i] / sortedLoads[i - 1];
        }
        java.util.Arrays.sort(ratios);
        return ratios[ratios.length / 2];
    }

    private static double max(double[] v) {
        double m = 0;
        for (double d : v) {
            if (!Double.isNaN(d) && !Double.isInfinite(d)) {
                m = Math.max(m, d);
            }
        }
        return m > 0 ? m : 1;
    }

    // ---- JSON ----

    static JsonObject json(SweepResult r, String commandLine) {
        SweepOptions o = r.options();
        JsonObject opts = new JsonObject().put("url", o.url.toString()).put("metrics_url", o.metricsUrl)
                .put("model", o.model).put("path", o.path).put("mode", o.mode.name().toLowerCase(Locale.ROOT))
                .put("loads", JsonArray.of((Object[]) boxed(o.loads))).put("trace_notes", new JsonArray(
                        new ArrayList<>(r.notes()))).put("step_seconds", o.stepSeconds)
                .put("warmup_seconds", o.warmupSeconds).put("drain_seconds", o.drainSeconds)
                .put("max_requests", o.maxRequests).put("max_in_flight", o.maxInFlight).put("shapes", r.shapes())
                .put("seed", o.seed).put("ignore_eos", o.ignoreEos).put("slo_objective", o.sloObjective)
                .put("command", commandLine);
        if (o.slo != null) {
            opts.put("slo", new JsonObject().put("ttft", num(o.slo.ttft())).put("tpot", num(o.slo.tpot()))
                    .put("e2e", num(o.slo.e2e())).put("target", o.slo.target()));
        }
        JsonArray steps = new JsonArray();
        for (StepResult s : r.steps()) {
            JsonObject j = new JsonObject().put("step", s.index()).put("offered_load", s.load())
                    .put("measured_seconds", s.measuredSeconds()).put("drain_seconds", s.drainSeconds())
                    .put("completed", s.completed()).put("throughput_rps", num(s.throughput()))
                    .put("output_tokens_per_second", num(s.outputTokensPerSecond()))
                    .put("good_rps", num(s.goodThroughput()))
                    .put("requests_by_outcome",
                            new JsonObject(new java.util.TreeMap<String, Object>(s.requestsByOutcome())))
                    .put("mean_input_tokens", num(s.meanInputTokens()))
                    .put("mean_output_tokens", num(s.meanOutputTokens()))
                    .put("sidecar_knee_requests", num(s.sidecarKnee()))
                    .put("sidecar_in_flight_max_of_scrapes", num(s.sidecarMaxInFlight()));
            JsonObject lat = new JsonObject();
            lat.put("ttft", latency(s.ttft())).put("tpot", latency(s.tpot())).put("itl", latency(s.itl()))
                    .put("e2e", latency(s.e2e())).put("time_to_first_response_chunk", latency(s.firstResponseChunk()))
                    .put("chunk_gap", latency(s.chunkGap()));
            j.put("sidecar_latency_seconds", lat);
            if (s.slo() != null) {
                j.put("slo", new JsonObject().put("source", s.slo().source()).put("share", num(s.slo().share()))
                        .put("histogram_share_low", num(s.slo().histogramLow()))
                        .put("histogram_share_high", num(s.slo().histogramHigh()))
                        .put("histogram_exact", s.slo().histogramExact()).put("requests", num(s.slo().requests()))
                        .put("good", num(s.slo().good())).put("good_token_share", num(s.slo().goodTokenShare()))
                        .put("good_output_tokens_per_second", num(s.goodTokensPerSecond())));
            }
            ClientSummary c = s.client();
            j.put("client", new JsonObject().put("sent", c.sent()).put("ok", c.ok())
                    .put("errors", new JsonObject(new java.util.TreeMap<String, Object>(c.errors())))
                    .put("dropped", c.dropped())
                    .put("output_tokens", c.outputTokens())
                    .put("sidecar_definitions", new JsonObject().put("ttft", dist(c.ttft())).put("tpot", dist(c.tpot()))
                            .put("itl", dist(c.itl())).put("chunk_gap", dist(c.chunkGap())).put("e2e", dist(c.e2e())))
                    .put("vllm_bench_serve_definitions", new JsonObject().put("ttft", dist(c.benchTtft()))
                            .put("tpot", dist(c.benchTpot())).put("itl", dist(c.benchItl()))
                            .put("e2el", dist(c.benchE2el()))));
            steps.add(j);
        }
        JsonObject summary = new JsonObject();
        if (r.knee().found()) {
            summary.put("knee", new JsonObject().put("load", r.knee().load()).put("metric", r.knee().metric())
                    .put("elasticity", num(r.knee().elasticity())));
        } else {
            summary.putNull("knee");
        }
        summary.put("sidecar_knee_requests", num(r.sidecarKnee()));
        if (r.goodput() != null) {
            summary.put("goodput", r.goodput().found() ? new JsonObject().put("load", r.goodput().load())
                    .put("throughput_rps", num(r.goodput().throughput()))
                    .put("good_rps", num(r.goodput().goodThroughput()))
                    .put("later_passing_loads", new JsonArray(new ArrayList<>(r.goodput().laterPassing()))) : null);
        }
        return new JsonObject().put("options", opts).put("started_at", r.startedAt()).put("seconds", r.seconds())
                .put("steps", steps).put("summary", summary)
                .put("sidecar_ttft_bounds", JsonArray.of((Object[]) boxed(r.ttftBounds())))
                .put("sidecar_per_token_bounds", JsonArray.of((Object[]) boxed(r.perTokenBounds())))
                .put("sidecar_slo_objectives", new JsonArray(new ArrayList<>(r.sloObjectives())))
                .put("warnings", new JsonArray(new ArrayList<>(r.warnings())));
    }

    private static JsonObject latency(StepResult.Latency l) {
        CumulativeHistogram d = l.delta();
        return new JsonObject().put("count", l.count()).put("mean", num(l.mean())).put("p50", num(l.p50()))
                .put("p95", num(l.p95())).put("p99", num(l.p99()))
                .put("p50_bucket", JsonArray.of((Object[]) boxed(l.p50Bucket())))
                .put("p99_bucket", JsonArray.of((Object[]) boxed(l.p99Bucket())))
                .put("bucket_bounds", JsonArray.of((Object[]) boxed(upperBounds(d))))
                .put("bucket_cumulative_counts", JsonArray.of((Object[]) boxed(cumulativeCounts(d))));
    }

    /** Every bucket's upper bound, +Inf included, as the exposition has them; none for an empty histogram. */
    static double[] upperBounds(CumulativeHistogram h) {
        double[] les = new double[h.isEmpty() ? 0 : h.bounds().size() + 1];
        for (int i = 0; i < les.length; i++) {
            les[i] = i < h.bounds().size() ? h.bounds().get(i) : Double.POSITIVE_INFINITY;
        }
        return les;
    }

    private static double[] cumulativeCounts(CumulativeHistogram h) {
        return h.isEmpty() ? new double[0] : h.cumulativeCounts().stream().mapToDouble(Long::doubleValue).toArray();
    }

    private static JsonObject dist(ClientSummary.Dist d) {
        return new JsonObject().put("count", d.count()).put("mean", num(d.mean())).put("p50", num(d.p50()))
                .put("p95", num(d.p95())).put("p99", num(d.p99()));
    }

    /** JSON has no NaN or infinity: null for them, and for +Inf bounds the string "+Inf". */
    private static Object num(double v) {
        if (Double.isNaN(v)) {
            return null;
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "+Inf" : "-Inf";
        }
        return v;
    }

    private static Object[] boxed(double[] v) {
        Object[] out = new Object[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = num(v[i]);
        }
        return out;
    }

    // ---- formatting ----

    /** Seconds as milliseconds, 3 significant digits, Fmt.NONE for NaN. */
    static String ms(double seconds) {
        return Double.isNaN(seconds) ? Fmt.NONE : f3(seconds * 1000) + " ms";
    }

    /** 3 significant digits (no exponent), Fmt.NONE for NaN. */
    static String f3(double v) {
        return Fmt.sig(v, 3);
    }

    private static String triple(StepResult.Latency l, double scale) {
        if (l.count() == 0) {
            return Fmt.NONE;
        }
        return f3(l.p50() * scale) + " / " + f3(l.p95() * scale) + " / " + f3(l.p99() * scale);
    }

    private static String pair(StepResult.Latency l) {
        return l.count() == 0 ? Fmt.NONE : f3(l.p50() * 1000) + " · " + f3(l.p99() * 1000);
    }

    private static String pair(ClientSummary.Dist d) {
        return d.count() == 0 ? Fmt.NONE : f3(d.p50() * 1000) + " · " + f3(d.p99() * 1000);
    }

    private static String pairS(StepResult.Latency l) {
        return l.count() == 0 ? Fmt.NONE : f3(l.p50()) + " · " + f3(l.p99());
    }

    private static String pairS(ClientSummary.Dist d) {
        return d.count() == 0 ? Fmt.NONE : f3(d.p50()) + " · " + f3(d.p99());
    }

    private static String share(double v) {
        return Fmt.fixed(v, 3);
    }

    private static String outcomes(Map<String, Double> byOutcome) {
        if (byOutcome.isEmpty()) {
            return Fmt.NONE;
        }
        List<String> parts = new ArrayList<>();
        byOutcome.forEach((k, v) -> parts.add(k + " " + f3(v)));
        return String.join(", ", parts);
    }

    private static String clientErrors(ClientSummary c) {
        if (c.errors().isEmpty()) {
            return "0";
        }
        List<String> parts = new ArrayList<>();
        c.errors().forEach((k, v) -> parts.add(v + " " + k));
        return String.join(", ", parts);
    }

    /** The steps' loads in run order (a search's probes are not --rates). */
    private static String joinLoads(SweepResult r) {
        List<String> parts = new ArrayList<>();
        for (StepResult s : r.steps()) {
            parts.add(r.options().formatLoad(s.load()));
        }
        return String.join(", ", parts);
    }
}
