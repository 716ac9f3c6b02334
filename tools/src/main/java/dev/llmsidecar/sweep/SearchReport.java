package dev.llmsidecar.sweep;

import dev.llmsidecar.report.Fmt;
import dev.llmsidecar.report.MarkdownTable;
import dev.llmsidecar.report.SvgChart;
import dev.llmsidecar.report.SvgChart.Axis;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Writes a search's report: search.md, search.svg (attainment with its 95 % interval against the load for every
 * probe, the target and the found load marked; the miss share on a log scale; good and achieved requests/s) and
 * search.json. The probes' own latency and throughput report (sweep.md ...) is written beside it by {@link Report}.
 */
final class SearchReport {

    private SearchReport() {
    }

    static String write(Search.Result r, Path dir, String commandLine) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("search.json"), json(r, commandLine).encodePrettily() + "\n",
                StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("search.svg"), svg(r), StandardCharsets.UTF_8);
        String md = markdown(r, commandLine);
        Files.writeString(dir.resolve("search.md"), md, StandardCharsets.UTF_8);
        return md;
    }

    /** What is searched: "request rate (req/s)" or "speed-up of the recorded trace". */
    private static String variable(SweepOptions o) {
        return o.mode == SweepOptions.Mode.TRACE ? "the recorded trace's speed-up" : "the request rate (open loop, "
                + "Poisson arrivals)";
    }

    static String markdown(Search.Result r, String commandLine) {
        SweepOptions o = r.options();
        StringBuilder md = new StringBuilder();
        md.append("# ").append(o.title != null ? o.title : "The load the SLO allows").append("\n\n");
        md.append(String.format(Locale.ROOT, "A search on %s through llm-sidecar for the SLO %s; model `%s` at "
                + "`%s%s`, attainment read from `%s` (%s). Each probe: %s s warm-up, %s s measured (extended by %s s "
                + "at a time up to %s s while inconclusive), then drained. Request lengths: %s. Started %s, took "
                + "%.0f s.%n%n", variable(o), o.slo.describe(), o.model, o.url, o.path, o.metricsUrl,
                o.sloObjective != null ? "the sidecar's SLO objective `" + o.sloObjective + "`"
                        : "the histograms' estimate at each threshold", SloSpec.fmt(o.warmupSeconds),
                SloSpec.fmt(o.probeSeconds), SloSpec.fmt(o.probeSeconds), SloSpec.fmt(o.probeMaxSeconds),
                r.sweep().shapes(), r.sweep().startedAt(), r.sweep().seconds()));
        if (commandLine != null) {
            md.append("```\n").append(commandLine).append("\n```\n\n");
        }
        md.append("## Result\n\n").append(summary(r)).append("\n\n");
        md.append("![Attainment with its 95 % interval against the load, the target and the found load marked]"
                + "(search.svg)\n\n");
        md.append("## Probes\n\n");
        md.append("In run order. *Sent req/s*: the requests the probe actually sent in its measured time (a Poisson "
                + "count varies around the rate by about √(rate ÷ seconds) req/s). *Attainment* = good ÷ judged "
                + "requests (a request is good when it completed and met every criterion); the interval is its 95 % "
                + "Wilson score interval. TTFT and TPOT from the sidecar's histograms, milliseconds.\n\n");
        MarkdownTable t = new MarkdownTable("probe", "load (" + o.loadUnit() + ")", "measured s", "sent req/s",
                "judged", "good", "attainment", "95 % interval", "verdict", "achieved req/s", "good req/s",
                "good output tok/s", "TTFT p50 / p99", "TPOT p50 / p99", "errors sidecar / client")
                .align("rrrrrrrllrrrllr");
        int i = 0;
        for (Search.Probe p : r.probes()) {
            StepResult s = p.step();
            t.row(++i, o.formatLoad(p.load()), Fmt.fixed(s.measuredSeconds(), 1)
                    + (p.extensions() > 0 ? " (" + p.extensions() + "× extended)" : ""),
                    Report.f3(s.client().sent() / s.measuredSeconds()), Fmt.fixed(p.judged(), 0),
                    Fmt.fixed(p.good(), 0), Fmt.fixed(p.attainment(), 4), interval(p), p.verdict().text()
                            + (p == r.found() ? " — **found**" : p == r.next() ? " — next step up" : ""),
                    Report.f3(s.throughput()), Report.f3(s.goodThroughput()), Report.f3(p.goodTokensPerSecond()),
                    pair(s.ttft()), pair(s.tpot()), Fmt.fixed(s.sidecarErrors(), 0) + " / " + s.client().errorCount());
        }
        md.append(t).append('\n');
        if (!r.sweep().notes().isEmpty()) {
            md.append("## Trace replay\n\n");
            for (String n : r.sweep().notes()) {
                md.append("- ").append(n).append('\n');
            }
            md.append('\n');
        }
        md.append("## Method\n\n").append(method(o)).append('\n');
        if (!r.sweep().warnings().isEmpty()) {
            md.append("## Warnings\n\n");
            for (String w : r.sweep().warnings()) {
                md.append("- ").append(w).append('\n');
            }
            md.append('\n');
        }
        md.append("Each probe's latencies, throughput and errors in full: [sweep.md](sweep.md) (the probes as sweep "
                + "steps); every number: `search.json`, `results.json`.\n");
        return md.toString();
    }

    static String summary(Search.Result r) {
        SweepOptions o = r.options();
        StringBuilder sb = new StringBuilder();
        Search.Probe f = r.found();
        if (f == null) {
            sb.append("- **No load was shown above the target** (").append(r.stop()).append(").");
        } else {
            StepResult s = f.step();
            sb.append(String.format(Locale.ROOT, "- **%s %s**: attainment %s of %.0f judged requests, 95 %% interval "
                    + "%s, above the target %s.", o.formatLoad(f.load()), o.loadUnit(), Fmt.fixed(f.attainment(), 4),
                    f.judged(), interval(f), SloSpec.fmt(o.slo.target())));
            if (o.mode == SweepOptions.Mode.TRACE) {
                sb.append(String.format(Locale.ROOT, " The trace's requests at that speed-up arrived at %s req/s.",
                        Report.f3(s.client().sent() / s.measuredSeconds())));
            }
            sb.append(String.format(Locale.ROOT, "%n- **Goodput there**: %s good req/s and %s good output tok/s "
                    + "(achieved %s req/s, %s output tok/s).", Report.f3(s.goodThroughput()),
                    Report.f3(f.goodTokensPerSecond()), Report.f3(s.throughput()),
                    Report.f3(s.outputTokensPerSecond())));
        }
        Search.Probe n = r.next();
        if (n != null) {
            sb.append(String.format(Locale.ROOT, "%n- **Next step up, %s %s**: attainment %s, interval %s: %s.",
                    o.formatLoad(n.load()), o.loadUnit(), Fmt.fixed(n.attainment(), 4), interval(n),
                    n.verdict() == Search.Verdict.BELOW ? "below the target"
                            : "inconclusive even after " + n.extensions() + " extensions (the interval straddles "
                                    + "the target): the limit lies between the two loads, possibly above the found "
                                    + "one by up to the step"));
        }
        sb.append(String.format(Locale.ROOT, "%n- **Stopped**: %s, after %d probes.", r.stop(), r.probes().size()));
        long inconclusive = r.probes().stream().filter(p -> p.verdict() == Search.Verdict.INCONCLUSIVE).count();
        if (inconclusive > 0) {
            sb.append(String.format(Locale.ROOT, " %d probe%s stayed inconclusive up to --probe-max-seconds and "
                    + "counted as not above the target.", inconclusive, inconclusive == 1 ? "" : "s"));
        }
        return sb.toString();
    }

    private static String method(SweepOptions o) {
        return String.format(Locale.ROOT, """
                - **Attainment** of a probe: the share of its judged requests that were good, from %s; a request is \
                good when it completed and met every criterion of %s.
                - **Verdict**: the 95 %% Wilson score interval (p̂ + z²/2n ± z·√(p̂(1 − p̂)/n + z²/4n²)) ÷ (1 + z²/n), \
                z = 1.96, n judged requests: *above* when its lower bound is at least the target %s, *below* when its \
                upper bound is under it, else *inconclusive*. An inconclusive probe keeps its load running and is \
                measured %s s longer at a time, up to %s s; still inconclusive, it counts as not above. Near a target \
                of 0.99 this takes many requests: with no miss at all, the lower bound reaches 0.99 only from 381 \
                requests on.
                - **Bisection**: probe %s; while no probe is above, halve the load, while none is not above, double \
                it (within %s and %s). Then probe the geometric middle √(lo·hi) of the highest load above (lo) and \
                the lowest load not above (hi) until hi ≤ (1 + %s)·lo. At most %d probes. The found load is lo; hi is \
                the next step up.
                - **Load**: %s. Every probe runs a fresh step with its own seed: its arrivals%s are independent of \
                the other probes'.
                """, o.sloObjective != null ? "the sidecar's objective `" + o.sloObjective + "` (its good and judged "
                        + "request counters)" : "the sidecar's histograms (the estimate at each threshold: a lower "
                        + "bound with several criteria)", o.slo.describe(), SloSpec.fmt(o.slo.target()),
                SloSpec.fmt(o.probeSeconds), SloSpec.fmt(o.probeMaxSeconds), o.formatLoad(o.loads[0]),
                Double.isNaN(o.searchMin) ? "start ÷ 1024" : o.formatLoad(o.searchMin),
                Double.isNaN(o.searchMax) ? "start × 1024" : o.formatLoad(o.searchMax), SloSpec.fmt(o.resolution),
                o.maxProbes, o.mode == SweepOptions.Mode.TRACE
                        ? "the recorded trace replayed at its arrival times divided by the speed-up"
                        : "Poisson arrivals at the rate", o.mode == SweepOptions.Mode.TRACE
                                ? " (the part of the trace it takes: see *Trace replay*)" : "");
    }

    private static String interval(Search.Probe p) {
        return Double.isNaN(p.interval()[0]) ? Fmt.NONE
                : "[" + Fmt.fixed(p.interval()[0], 4) + ", " + Fmt.fixed(p.interval()[1], 4) + "]";
    }

    private static String pair(StepResult.Latency l) {
        return l.count() == 0 ? Fmt.NONE : Report.f3(l.p50() * 1000) + " / " + Report.f3(l.p99() * 1000);
    }

    static String svg(Search.Result r) {
        SweepOptions o = r.options();
        List<Search.Probe> sorted = r.probes().stream().sorted(Comparator.comparingDouble(Search.Probe::load))
                .toList();
        int pw = 300;
        int ph = 230;
        SvgChart svg = new SvgChart(3 * (pw + 90) + 10, ph + 130, "Attainment of the SLO against "
                + (o.mode == SweepOptions.Mode.TRACE ? "speed-up" : "request rate") + " (every probe, 95 % Wilson "
                + "interval)");
        double[] x = sorted.stream().mapToDouble(Search.Probe::load).toArray();
        double xMin = x.length == 0 ? 1 : x[0];
        double xMax = x.length == 0 ? 1 : x[x.length - 1];
        String xLabel = o.loadUnit() + (xMax / xMin >= 8 ? ", log scale" : "");
        Axis xAxis = xMax / xMin >= 8 ? Axis.log(xMin / 1.3, xMax * 1.3, x, xLabel) : Axis.linear(0, xMax * 1.1,
                xLabel);
        double target = o.slo.target();
        SvgChart.Panel a = svg.panel(70, 60, pw, ph, xAxis, Axis.linear(0, 1, "attainment"), "attainment")
                .legendAtBottom();
        a.series(x, sorted.stream().mapToDouble(Search.Probe::attainment).toArray(), SvgChart.COLORS[0],
                "attainment", false);
        double missFloor = 1;
        for (Search.Probe p : sorted) {
            a.errorBar(p.load(), p.interval()[0], p.interval()[1], SvgChart.COLORS[0]);
            if (p.attainment() < 1) {
                missFloor = Math.min(missFloor, 1 - p.attainment());
            }
            missFloor = Math.min(missFloor, 1 - p.interval()[1]);
        }
        a.horizontal(target, "#d62728", "target " + SloSpec.fmt(target));
        mark(r, a);
        // the miss share on a log scale: near a target of 0.99 the intervals are visible here
        double lowMiss = Math.max(1e-4, Math.min(missFloor, (1 - target) / 10));
        SvgChart.Panel b = svg.panel(70 + (pw + 90), 60, pw, ph, xAxis, Axis.log(lowMiss, 1, "1 − attainment"),
                "miss share (log scale)").legendAtBottom();
        b.series(x, sorted.stream().mapToDouble(p -> 1 - p.attainment()).toArray(), SvgChart.COLORS[1],
                "1 − attainment", false);
        for (Search.Probe p : sorted) {
            b.errorBar(p.load(), Math.max(lowMiss, 1 - p.interval()[1]), 1 - p.interval()[0], SvgChart.COLORS[1]);
        }
        b.horizontal(1 - target, "#d62728", "1 − target");
        mark(r, b);
        double rpsMax = sorted.stream().mapToDouble(p -> p.step().throughput()).filter(v -> !Double.isNaN(v))
                .max().orElse(1);
        SvgChart.Panel c = svg.panel(70 + 2 * (pw + 90), 60, pw, ph, xAxis, Axis.linear(0, rpsMax * 1.1,
                "requests/s"), "requests/s").legendAtBottom();
        c.series(x, sorted.stream().mapToDouble(p -> p.step().throughput()).toArray(), SvgChart.COLORS[0],
                "achieved", false);
        c.series(x, sorted.stream().mapToDouble(p -> p.step().goodThroughput()).toArray(), SvgChart.COLORS[3],
                "good (meeting the SLO)", false);
        mark(r, c);
        svg.text(70, ph + 120, "SLO: " + o.slo.describe() + ". Found: " + (r.found() == null ? "none"
                : o.formatLoad(r.found().load()) + " " + o.loadUnit()) + "; stopped: " + r.stop() + ".", "start", 10,
                "#555");
        return svg.toSvg();
    }

    private static void mark(Search.Result r, SvgChart.Panel p) {
        if (r.found() != null) {
            p.vertical(r.found().load(), "#2ca02c", "found " + r.options().formatLoad(r.found().load()), true);
        }
        if (r.next() != null) {
            p.vertical(r.next().load(), "#d62728", "next", false);
        }
    }

    static JsonObject json(Search.Result r, String commandLine) {
        SweepOptions o = r.options();
        JsonArray probes = new JsonArray();
        for (Search.Probe p : r.probes()) {
            StepResult s = p.step();
            probes.add(new JsonObject().put("load", p.load()).put("measured_seconds", s.measuredSeconds())
                    .put("extensions", p.extensions()).put("judged", p.judged()).put("good", p.good())
                    .put("attainment", num(p.attainment())).put("wilson95_low", num(p.interval()[0]))
                    .put("wilson95_high", num(p.interval()[1])).put("verdict", p.verdict().name().toLowerCase(
                            Locale.ROOT)).put("throughput_rps", num(s.throughput()))
                    .put("good_rps", num(s.goodThroughput())).put("good_output_tokens_per_second",
                            num(p.goodTokensPerSecond())).put("output_tokens_per_second",
                                    num(s.outputTokensPerSecond())));
        }
        return new JsonObject().put("command", commandLine).put("variable", o.mode == SweepOptions.Mode.TRACE
                ? "speedup" : "rate_rps").put("slo", new JsonObject().put("ttft", num(o.slo.ttft()))
                        .put("tpot", num(o.slo.tpot())).put("e2e", num(o.slo.e2e())).put("target", o.slo.target()))
                .put("slo_objective", o.sloObjective).put("probe_seconds", o.probeSeconds)
                .put("probe_max_seconds", o.probeMaxSeconds).put("resolution", o.resolution)
                .put("max_probes", o.maxProbes).put("probes", probes)
                .put("found", r.found() == null ? null : r.found().load())
                .put("next_step_up", r.next() == null ? null : r.next().load()).put("stop", r.stop())
                .put("trace_notes", new JsonArray(new java.util.ArrayList<>(r.sweep().notes())));
    }

    private static Object num(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : v;
    }
}
