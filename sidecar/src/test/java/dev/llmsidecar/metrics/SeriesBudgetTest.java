package dev.llmsidecar.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.measure.LiveWindows;
import dev.llmsidecar.measure.LiveRequest;
import dev.llmsidecar.measure.RequestLabels;
import dev.llmsidecar.measure.RequestSeriesRig;
import dev.llmsidecar.measure.SloMetrics;
import dev.llmsidecar.measure.Upstream;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.slo.SloEvaluator;
import dev.llmsidecar.slo.SloPolicy;
import dev.llmsidecar.support.TestConfigs;
import dev.llmsidecar.testkit.Repo;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.Usage;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The series budget docs/metrics.md states: the /q/metrics lines one model can produce (every histogram bucket is a
 * line) with the default buckets, one operation, one SLO class and one objective, when every label value that can
 * occur did (both kinds of request, every outcome and end_reason, cache hit / miss / unknown, every finish reason, every
 * criterion).
 */
public class SeriesBudgetTest {

    static final long MS = 1_000_000;
    @Test
    void theDocumentedBudgetPerModelIsTheMeasuredWorstCase() throws Exception {
        String docs = Files.readString(Repo.root().resolve("docs/metrics.md"));
        for (Buckets.Preset preset : Buckets.Preset.values()) {
            Budget measured = measure(preset, List.of());
            String name = preset.name().toLowerCase(java.util.Locale.ROOT);
            Matcher m = Pattern.compile("\\| `" + name + "` \\| (\\d+) \\| (\\d+) \\|").matcher(docs);
            assertThat(m.find()).as("docs/metrics.md has a budget row | `" + name + "` | N | N |").isTrue();
            assertThat(Long.parseLong(m.group(1))).as(name + ": documented budget vs measured")
                    .isEqualTo(measured.lines());
            assertThat(Long.parseLong(m.group(2))).as(name + ": documented native series vs measured")
                    .isEqualTo(measured.nativeSeries());
        }
    }

    /**
     * The tenant budget docs/metrics.md states: the lines one tenant adds per model, the same worst case, with the
     * default tenant series and with every series that can carry a tenant (the latency histograms too).
     */
    @Test
    void theDocumentedBudgetPerTenantIsTheMeasuredWorstCase() throws Exception {
        String docs = Files.readString(Repo.root().resolve("docs/metrics.md"));
        List<String> every = Contract.all().stream().filter(s -> s.labels().contains(Label.TENANT))
                .map(Series::name).toList();
        List<String> defaults = TestConfigs.sidecar("http://127.0.0.1:1", Map.of()).tenants().series();
        for (var row : Map.of("default", defaults, "every", every).entrySet()) {
            long lines = linesPerModel(Buckets.Preset.DEFAULT, row.getValue());
            Matcher m = Pattern.compile("\\| " + row.getKey() + " tenant series[^|]*\\| (\\d+) \\|").matcher(docs);
            assertThat(m.find()).as("docs/metrics.md has a row | " + row.getKey() + " tenant series | N |").isTrue();
            assertThat(Long.parseLong(m.group(1))).as(row.getKey() + ": documented vs measured").isEqualTo(lines);
        }
    }

    static long linesPerModel(Buckets.Preset preset) {
        return measure(preset, List.of()).lines();
    }

    static long linesPerModel(Buckets.Preset preset, List<String> tenantSeries) {
        return measure(preset, tenantSeries).lines();
    }

    /**
     * @param lines /q/metrics lines in a text format (classic buckets: one line per bucket)
     * @param nativeSeries series Prometheus stores when it scrapes protobuf with native histograms: one per label set
     *     of each series, histograms included
     */
    record Budget(long lines, long nativeSeries) {
    }

    /** With {@code tenantSeries} empty, the lines of model m; else the lines of model m and tenant "a". */
    static Budget measure(Buckets.Preset preset, List<String> tenantSeries) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        worstCase(registry, preset, tenantSeries);
        long lines = registry.scrape().lines().filter(l -> !l.startsWith("#") && l.contains("model=\"m\"")
                && (tenantSeries.isEmpty() || l.contains("tenant=\"a\""))).count();
        long nativeSeries = 0;
        for (var family : registry.getPrometheusRegistry().scrape()) {
            nativeSeries += family.getDataPoints().stream().filter(p -> "m".equals(p.getLabels().get("model"))
                    && (tenantSeries.isEmpty() || "a".equals(p.getLabels().get("tenant")))).count();
        }
        return new Budget(lines, nativeSeries);
    }

    /**
     * The worst case of model m (and tenant "a") recorded on {@code registry}, through the recorders returned (a
     * test can record more through them).
     */
    public static Recorders worstCase(PrometheusMeterRegistry registry, Buckets.Preset preset,
            List<String> tenantSeries) {
        return worstCase(registry, preset, tenantSeries, PrometheusRecorder.Histograms.DEFAULT);
    }

    /** The same, with these histograms (classic, native or both). */
    public static Recorders worstCase(PrometheusMeterRegistry registry, Buckets.Preset preset,
            List<String> tenantSeries, PrometheusRecorder.Histograms histograms) {
        var config = TestConfigs.sidecar("http://127.0.0.1:1", Map.of(
                // thresholds that already are default bounds: the count is the preset's
                "sidecar.slo.objectives.interactive.ttft", "PT0.5S", "sidecar.slo.objectives.interactive.tpot",
                "PT0.05S", "sidecar.slo.objectives.interactive.e2e", "PT30S",
                "sidecar.slo.objectives.interactive.itl", "PT0.1S"));
        SloPolicy policy = new SloPolicy(config.slo());
        Buckets buckets = new Buckets(preset, List.of(), List.of(), policy.thresholdsSeconds());
        Recorders recorders = new Recorders(List.of(new PrometheusRecorder(registry.getPrometheusRegistry(), buckets, histograms)),
                tenantSeries);
        run(recorders, config, policy);
        return recorders;
    }

    private static void run(Recorders recorders, dev.llmsidecar.config.SidecarConfig config, SloPolicy policy) {
        RequestSeriesRig metrics = new RequestSeriesRig(recorders, Upstream.NONE);
        RequestLabels labels = RequestSeriesRig.labels("m", "a", "");
        SloMetrics slo = new SloMetrics(recorders, policy.objectives());
        LiveWindows windows = new LiveWindows(recorders, config.windows(), System::nanoTime);
        // cost at a per-token price: its spend series is per model (and tenant)
        dev.llmsidecar.measure.WorkMetrics work = new dev.llmsidecar.measure.WorkMetrics(recorders, TestConfigs.sidecar(
                "http://127.0.0.1:1", Map.of("sidecar.cost.output-price-per-million", "1")).cost(), System::nanoTime);

        List<String> finishReasons = Arrays.asList("stop", "length", "tool_calls", "content_filter", "function_call",
                "abort", "error", "something_new", null);
        int n = 0;
        for (boolean streaming : new boolean[] {true, false}) {
            for (Outcome outcome : Outcome.values()) {
                if (outcome == Outcome.SHED) {
                    continue; // refused before the engine: recorded below, as the proxy does (no timeline)
                }
                for (int status : outcome == Outcome.UPSTREAM_ERROR ? new int[] {500, 429, 400} : new int[] {200}) {
                    for (long cached : new long[] {60, 0, -1}) {
                        for (boolean slow : new boolean[] {false, true}) {
                            LiveRequest live = metrics.started(labels, streaming);
                            RequestTimeline t = new RequestTimeline(0, streaming, live);
                            long gap = slow ? 2000 * MS : 20 * MS;
                            t.onUpstreamHeaders(5 * MS);
                            t.onDataChunk(10 * MS);
                            t.onTokenChunk((slow ? 900 : 100) * MS, n % 2 == 0, -1);
                            t.onTokenChunk((slow ? 900 : 100) * MS + gap, false, -1);
                            t.onTokenChunk((slow ? 900 : 100) * MS + 2 * gap, false, -1);
                            t.onUsage(new Usage(100, 3, cached));
                            t.onFinishReason(finishReasons.get(n % finishReasons.size()));
                            t.onServerTimings(new ServerTimings(MS, MS, 50 * MS, 40 * MS));
                            RequestResult r = t.finish((slow ? 40_000 : 200) * MS, outcome, status);
                            metrics.finished(live, r);
                            var verdict = SloEvaluator.evaluate(r, policy.applicable("m", "default"),
                                    policy.badClientStatuses());
                            slo.record(labels, r.outputTokens(), verdict);
                            work.record(labels, r, verdict);
                            windows.record(labels, r);
                            n++;
                        }
                    }
                }
            }
            // the end_reason values the loop above cannot reach: an error inside a 200 stream, no head at all, a
            // client gone before the first token
            LiveRequest inStreamLive = metrics.started(labels, streaming);
            RequestTimeline inStream = new RequestTimeline(0, streaming, inStreamLive);
            inStream.onUpstreamHeaders(5 * MS);
            inStream.onStreamError();
            metrics.finished(inStreamLive, inStream.finish(100 * MS, Outcome.OK, 200));
            LiveRequest noHeadLive = metrics.started(labels, streaming);
            RequestTimeline noHead = new RequestTimeline(0, streaming, noHeadLive);
            metrics.finished(noHeadLive, noHead.finish(100 * MS, Outcome.UPSTREAM_ERROR, 502));
            LiveRequest goneLive = metrics.started(labels, streaming);
            RequestTimeline gone = new RequestTimeline(0, streaming, goneLive);
            gone.onUpstreamHeaders(5 * MS);
            metrics.finished(goneLive, gone.finish(100 * MS, Outcome.CLIENT_CANCELLED, 200));
            // a client that stopped reading, cut at the send timeout
            LiveRequest stoppedLive = metrics.started(labels, streaming);
            RequestTimeline stopped = new RequestTimeline(0, streaming, stoppedLive);
            stopped.onUpstreamHeaders(5 * MS);
            stopped.onClientStoppedReading();
            metrics.finished(stoppedLive, stopped.finish(100 * MS, Outcome.CLIENT_CANCELLED, 200));
        }
        // memory past its mark: refused before the engine, as the model the engine serves (none here: "unknown")
        metrics.shed("unknown", "chat", "openai_chat");
    }
}
