package dev.llmsidecar.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.engine.EngineHealth;
import dev.llmsidecar.engine.EngineMetricsScraper;
import dev.llmsidecar.measure.LiveWindows;
import dev.llmsidecar.measure.ModelLabels;
import dev.llmsidecar.measure.RequestLabels;
import dev.llmsidecar.measure.RequestSeriesRig;
import dev.llmsidecar.measure.SloMetrics;
import dev.llmsidecar.measure.Upstream;
import dev.llmsidecar.metrics.otlp.OtelHistogramProducer;
import dev.llmsidecar.metrics.otlp.OtelRecorder;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.otel.OtlpExportStats;
import dev.llmsidecar.slo.SloEvaluator;
import dev.llmsidecar.slo.SloPolicy;
import dev.llmsidecar.support.CollectingMetricReader;
import dev.llmsidecar.support.TestConfigs;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.Usage;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.vertx.core.Vertx;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Both backends are built from one declaration per series: after the same traffic, the Prometheus registry and the
 * OTLP meter hold the same series (but those declared for one backend only), each with exactly the declared labels
 * (OTLP: their attribute keys; the OTLP-only GenAI attributes where the series declares them).
 */
class MetricsContractParityTest {

    static final long MS = 1_000_000;

    static RequestResult stream(Outcome outcome, int status, boolean withTimings) {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        t.onUpstreamHeaders(5 * MS);
        t.onDataChunk(10 * MS);
        t.onTokenChunk(100 * MS, true, -1);
        t.onTokenChunk(150 * MS, false, -1);
        t.onTokenChunk(170 * MS, false, -1);
        t.onUsage(new Usage(20, 3, 8));
        t.onFinishReason("stop");
        if (withTimings) {
            t.onServerTimings(new ServerTimings(2 * MS, -1, 60 * MS, 80 * MS));
        }
        t.onUndecodable();
        return t.finish(200 * MS, outcome, status);
    }

    static RequestResult whole(boolean withTimings) {
        RequestTimeline t = new RequestTimeline(0, false, RequestTimeline.LiveListener.NONE);
        t.onTokenChunk(300 * MS, false, -1);
        t.onUsage(new Usage(20, 7, 0));
        if (withTimings) {
            t.onServerTimings(new ServerTimings(1 * MS, -1, 50 * MS, 200 * MS));
        }
        return t.finish(300 * MS, Outcome.OK, 200);
    }

    @Test
    void bothBackendsExportTheDeclaredSeriesWithTheDeclaredLabels() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        CollectingMetricReader collector = new CollectingMetricReader();
        OtelHistogramProducer produced = new OtelHistogramProducer("parity");
        SdkMeterProvider provider = SdkMeterProvider.builder().registerMetricReader(collector)
                .registerMetricProducer(produced).build();
        Buckets buckets = new Buckets(Buckets.Preset.DEFAULT, List.of(), List.of(), List.of(0.3));
        // every series that can carry a tenant or a priority does: the declared labels are then all exported
        Map<Label, List<String>> optional = new java.util.HashMap<>();
        for (Label l : Recorders.OPTIONAL) {
            optional.put(l, Contract.all().stream().filter(x -> x.labels().contains(l)).map(Series::name).toList());
        }
        Recorders recorders = new Recorders(List.of(new PrometheusRecorder(registry.getPrometheusRegistry(), buckets),
                new OtelRecorder(provider.get("parity"), buckets, produced)), optional);
        var config = TestConfigs.sidecar("http://127.0.0.1:1", Map.of(
                "sidecar.slo.objectives.interactive.ttft", "PT0.3S",
                "sidecar.windows.durations", "PT1M,PT5M", "sidecar.windows.drift-short", "PT1M",
                "sidecar.windows.drift-baseline", "PT5M"));
        SloPolicy policy = new SloPolicy(config.slo());
        RequestSeriesRig metrics = new RequestSeriesRig(recorders, new Upstream("127.0.0.1", 8000));
        dev.llmsidecar.app.FeatureEvents.register(metrics.traffic.proxy()); // include_usage's events, as the app does
        ModelLabels models = new ModelLabels(config.metrics().maxModels(), List.of());
        SloMetrics slo = new SloMetrics(recorders, policy.objectives(), true); // declared values too
        LiveWindows windows = new LiveWindows(recorders, config.windows(), System::nanoTime);
        dev.llmsidecar.measure.SaturationMetrics saturation = new dev.llmsidecar.measure.SaturationMetrics(recorders,
                config.saturation(), metrics.inFlight::count, System::nanoTime);
        // useful / wasted tokens and cost, at a per-token price (a GPU-hour price is the other way: WorkMetricsTest)
        dev.llmsidecar.measure.WorkMetrics work = new dev.llmsidecar.measure.WorkMetrics(recorders,
                TestConfigs.sidecar("http://127.0.0.1:1", Map.of("sidecar.cost.input-price-per-million", "0.5",
                        "sidecar.cost.output-price-per-million", "2")).cost(), System::nanoTime);
        Vertx vertx = Vertx.vertx();
        try {
            // the engine's series: a scrape of a vLLM exposition (gauges, counters, a phase histogram), a health probe
            String exposition = """
                    vllm:num_requests_running{model_name="m"} 1
                    vllm:num_requests_waiting{model_name="m"} 0
                    vllm:kv_cache_usage_perc{model_name="m"} 0.5
                    vllm:num_preemptions_total{model_name="m"} 2
                    vllm:prompt_tokens_total{model_name="m"} 100
                    vllm:prompt_tokens_cached_total{model_name="m"} 60
                    vllm:generation_tokens_total{model_name="m"} 50
                    vllm:spec_decode_num_drafts_total{model_name="m"} 10
                    vllm:spec_decode_num_draft_tokens_total{model_name="m"} 30
                    vllm:spec_decode_num_accepted_tokens_total{model_name="m"} 20
                    vllm:request_queue_time_seconds_bucket{le="0.3",model_name="m"} 1.0
                    vllm:request_queue_time_seconds_bucket{le="+Inf",model_name="m"} 2.0
                    vllm:request_queue_time_seconds_count{model_name="m"} 2.0
                    vllm:request_queue_time_seconds_sum{model_name="m"} 0.9
                    """;
            var server = vertx.createHttpServer().requestHandler(r -> r.response().end(r.path().equals("/metrics")
                    ? exposition : r.path().equals("/v1/models") ? "{\"object\":\"list\",\"data\":[{\"id\":\"m\"}]}"
                    : "ok"));
            int port = server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS)
                    .actualPort();
            EngineMetricsScraper scraper = new EngineMetricsScraper(vertx, recorders,
                    URI.create("http://127.0.0.1:" + port + "/metrics"), Duration.ofMillis(100), Duration.ofSeconds(1));
            scraper.start();
            EngineHealth health = new EngineHealth(vertx, recorders, dev.llmsidecar.config.HttpTarget.of(URI.create("http://127.0.0.1:" + port + "/health")),
                    Duration.ofMillis(100), Duration.ofSeconds(1));
            health.start();
            dev.llmsidecar.engine.ServedModels served = new dev.llmsidecar.engine.ServedModels(vertx, recorders,
                    URI.create("http://127.0.0.1:" + port + "/v1/models"), Duration.ofMillis(100),
                    Duration.ofSeconds(1), models::listed);
            served.start();

            // ---- GPUs: a scrape of a DCGM exporter (its own server), one GPU of pod "p"; waits until it is up ----
            String dcgm = """
                    DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",device="nvidia0",pod="p"} 87
                    DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-1",device="nvidia0",pod="p"} 73460
                    DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-1",device="nvidia0",pod="p"} 7893
                    DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-1",device="nvidia0",pod="p"} 312.448000
                    """;
            int dcgmPort = vertx.createHttpServer().requestHandler(r -> r.response().end(dcgm))
                    .listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS)
                    .actualPort();
            dev.llmsidecar.gpu.DcgmScraper gpus = new dev.llmsidecar.gpu.DcgmScraper(vertx, recorders,
                    URI.create("http://127.0.0.1:" + dcgmPort + "/metrics"), new dev.llmsidecar.gpu.DcgmNormaliser("p"),
                    Duration.ofMillis(100), Duration.ofSeconds(1));
            gpus.start();
            for (long gpuDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                    !gpus.up() && System.nanoTime() < gpuDeadline; ) {
                Thread.sleep(20);
            }
            // ---- end of GPUs ----
            new OtlpExportStats(registry.getPrometheusRegistry()); // Prometheus only, by declaration
            new dev.llmsidecar.trace.TraceStats(recorders, () -> 1234, () -> 5678, () -> 1); // the trace recorder's, when on
            dev.llmsidecar.app.ProxyGauges.register(recorders, new dev.llmsidecar.proxy.MemoryMark(0.85, 0.85),
                    () -> 1000, () -> 2000); // the proxy's memory budgets

            // traffic: every kind of request
            RequestLabels request = RequestSeriesRig.labels("m", "t", "1");
            for (RequestResult r : List.of(stream(Outcome.OK, 200, true), stream(Outcome.UPSTREAM_ERROR, 500, false),
                    stream(Outcome.CLIENT_CANCELLED, 200, false), whole(true))) {
                var live = metrics.started(request, r.streaming());
                live.onFirstResponseChunk(10 * MS);
                live.onFirstToken(100 * MS);
                live.onFirstReasoningToken(100 * MS);
                live.onFirstAnswerToken(150 * MS);
                live.onChunkGap(50 * MS);
                live.onEnd();
                metrics.finished(live, r);
                saturation.record(live.loadAtArrival(), r);
                var verdict = SloEvaluator.evaluate(r, policy.applicable("m", "default"));
                slo.record(request, r.outputTokens(), verdict);
                windows.record(request, r);
                work.record(request, r, verdict);
            }
            slo.record(request, 1, SloEvaluator.evaluate(stream(Outcome.OK, 200, false), List.of()));
            // conversations (sidecar.conversations): a first turn, a turn after a tool's result, and a turn long after
            // both, which the age limit leaves the table for (turns per conversation, evictions)
            dev.llmsidecar.conversation.Conversations conversations = new dev.llmsidecar.conversation.Conversations(
                    recorders, TestConfigs.sidecar("http://127.0.0.1:1", Map.of("sidecar.conversations.enabled", "true",
                            "sidecar.conversations.max-age", "PT10S")).conversations(), Duration.ofMinutes(5),
                    System::nanoTime);
            long t0 = System.nanoTime();
            var first = conversations.arrived(new dev.llmsidecar.wire.ConversationReader.Conversation(
                    new dev.llmsidecar.wire.TurnCounter.Position(1, dev.llmsidecar.wire.TurnCounter.After.USER), 11, 0),
                    "m", t0);
            conversations.ended(first, stream(Outcome.OK, 200, false), null, t0 + 200 * MS);
            var tool = conversations.arrived(new dev.llmsidecar.wire.ConversationReader.Conversation(
                    new dev.llmsidecar.wire.TurnCounter.Position(2, dev.llmsidecar.wire.TurnCounter.After.TOOL), 12, 11),
                    "m", t0 + 300 * MS);
            conversations.ended(tool, stream(Outcome.OK, 200, false), null, t0 + 500 * MS);
            conversations.arrived(new dev.llmsidecar.wire.ConversationReader.Conversation(
                    new dev.llmsidecar.wire.TurnCounter.Position(1, dev.llmsidecar.wire.TurnCounter.After.USER), 21, 0),
                    "m", t0 + 60_000 * MS);
            metrics.traffic.chunkWritten(MS);
            Thread.sleep(300); // the waiting depth is sampled on a 250 ms grid: one grid point has passed
            metrics.inFlight.sampleQueueDepth();
            metrics.traffic.httpRequest("llm", "2xx");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!(scraper.latest().kind() != dev.llmsidecar.engine.EngineKind.UNKNOWN && health.started()
                    && !served.names().isEmpty()) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }

            Map<String, Set<String>> prometheus = prometheusSeries(registry);
            Map<String, Set<String>> otlp = otlpSeries(collector.collect());
            Map<String, Series> byName = Contract.all().stream().collect(Collectors.toMap(Series::name,
                    Function.identity()));
            List<String> problems = new ArrayList<>();
            prometheus.forEach((name, labels) -> {
                Series s = byName.get(name);
                if (s == null) {
                    problems.add("Prometheus exports undeclared " + name);
                    return;
                }
                Set<String> declared = new TreeSet<>();
                s.prometheusLabels().forEach(l -> declared.add(l.prometheus()));
                if (!labels.equals(declared)) {
                    problems.add(name + " Prometheus labels " + labels + ", declared " + declared);
                }
            });
            otlp.forEach((name, keys) -> {
                Series s = byName.get(name);
                if (s == null) {
                    problems.add("OTLP exports undeclared " + name);
                    return;
                }
                Set<String> declared = new TreeSet<>();
                s.labels().forEach(l -> declared.add(l.otel()));
                Set<String> required = new TreeSet<>();
                s.labels().stream().filter(l -> !l.otelOnly() || l != Label.ERROR_TYPE).forEach(l -> required.add(l.otel()));
                required.remove(Label.ERROR_TYPE.otel());
                if (!declared.containsAll(keys) || !keys.containsAll(required)) {
                    problems.add(name + " OTLP attributes " + keys + ", declared " + declared);
                }
            });
            for (Series s : Contract.all()) {
                boolean inPrometheus = prometheus.containsKey(s.name());
                boolean inOtlp = otlp.containsKey(s.name());
                // an unknown gauge reads NaN on the Prometheus side and is left out of OTLP (no point = unknown)
                boolean unknownGauge = s.kind() == Series.Kind.GAUGE && allNaN(registry, s);
                if (s.on(Backend.PROMETHEUS) && s.on(Backend.OTLP) && inPrometheus != inOtlp && !unknownGauge) {
                    problems.add(s.name() + (inPrometheus ? " only in Prometheus" : " only in OTLP"));
                }
                if (!s.on(Backend.OTLP) && inOtlp) {
                    problems.add(s.name() + " is declared Prometheus-only but went to OTLP");
                }
            }
            assertThat(problems).isEmpty();
            // the traffic above reaches (almost) every declared series: parity is not checked on an empty set
            Set<String> missing = new TreeSet<>();
            // (but the span queue's gauges: they exist while a span queue does, with OTLP tracing on)
            Set<Series> withSpanQueue = Set.of(Contract.OTLP_SPAN_QUEUE, Contract.OTLP_SPAN_QUEUE_CAPACITY);
            // (and the GPU-hour spend: one price or the other, the per-token one here; WorkMetricsTest has both)
            Set<Series> otherPricing = Set.of(Contract.COST_GPU_SPEND);
            Contract.all().stream().filter(s -> s.on(Backend.PROMETHEUS) && !prometheus.containsKey(s.name())
                    && !withSpanQueue.contains(s) && !otherPricing.contains(s)).forEach(s -> missing.add(s.name()));
            assertThat(missing).isEmpty();
            assertThat(otlp).containsKeys(Contract.TTFT.name(), Contract.ENGINE_PREEMPTIONS.name(),
                    Contract.SLO_EXCLUDED.name(), Contract.WINDOW_P99.name(), Contract.USAGE_SKIPPED.name(),
                    Contract.ENGINE_PHASE.name(), Contract.ENGINE_SPEC_ACCEPTED.name());
            scraper.stop();
            health.stop();
            served.stop();
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            provider.close();
        }
    }

    /** Whether the Prometheus side has the gauge and every label set of it reads NaN. */
    static boolean allNaN(PrometheusMeterRegistry registry, Series s) {
        for (var family : registry.getPrometheusRegistry().scrape()) {
            if (family.getMetadata().getPrometheusName().equals(s.prometheusName())) {
                return !family.getDataPoints().isEmpty() && family.getDataPoints().stream().allMatch(
                        p -> Double.isNaN(((io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot) p)
                                .getValue()));
            }
        }
        return false;
    }

    /**
     * Contract name (dotted) -> tag keys, of every llm_sidecar / gen_ai meter, and of the histograms and gauges that
     * are collectors on the Prometheus registry underneath rather than meters (their label names).
     */
    static Map<String, Set<String>> prometheusSeries(PrometheusMeterRegistry registry) {
        Map<String, Set<String>> series = new TreeMap<>();
        // client_java names a counter family without its _total
        Map<String, Series> byFamily = Contract.all().stream().collect(Collectors.toMap(
                s -> s.kind() == Series.Kind.COUNTER ? s.prometheusName().replaceFirst("_total$", "")
                        : s.prometheusName(), Function.identity()));
        for (var family : registry.getPrometheusRegistry().scrape()) {
            Series s = byFamily.get(family.getMetadata().getPrometheusName());
            if (s != null) {
                Set<String> keys = new TreeSet<>();
                family.getDataPoints().forEach(p -> p.getLabels().forEach(l -> keys.add(l.getName())));
                series.put(s.name(), keys);
            }
        }
        return series;
    }

    /** Metric name -> the union of its points' attribute keys. */
    static Map<String, Set<String>> otlpSeries(Collection<MetricData> data) {
        Map<String, Set<String>> series = new HashMap<>();
        for (MetricData d : data) {
            Set<String> keys = series.computeIfAbsent(d.getName(), n -> new TreeSet<>());
            for (PointData p : d.getData().getPoints()) {
                p.getAttributes().forEach((k, v) -> keys.add(k.getKey()));
            }
        }
        return series;
    }
}
