package dev.llmsidecar.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.llmsidecar.engine.ExpositionParser.Sample;
import dev.llmsidecar.metrics.Buckets;
import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.CumulativeHistogram;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.otlp.OtelHistogramProducer;
import dev.llmsidecar.metrics.otlp.OtelRecorder;
import dev.llmsidecar.metrics.prometheus.MetricsScrape;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.otel.OtelPipeline;
import dev.llmsidecar.support.CollectingMetricReader;
import dev.llmsidecar.support.Waits;
import dev.llmsidecar.testkit.OtlpReceiver;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.MetricDataType;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The engine's phase histograms and counters through the scraper to both backends: a well-formed Prometheus histogram
 * with the engine's bounds on the registry's scrape (text and OpenMetrics), a cumulative explicit-bucket OTLP
 * histogram, and what a failed scrape and an engine restart do to them.
 */
class EnginePhaseExportTest {

    private static final Duration INTERVAL = Duration.ofMillis(50);
    private static final Duration TIMEOUT = Duration.ofSeconds(3);
    private static final String PHASE = "llm_sidecar_engine_phase_duration_seconds";
    private static final AttributeKey<String> PHASE_KEY = AttributeKey.stringKey("llm_sidecar.engine.phase");

    private final Vertx vertx = Vertx.vertx();
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final CollectingMetricReader reader = new CollectingMetricReader();
    private final OtelHistogramProducer produced = new OtelHistogramProducer("test");
    private final SdkMeterProvider provider = SdkMeterProvider.builder().registerMetricReader(reader)
            .registerMetricProducer(produced).build();
    private final Buckets buckets = new Buckets(Buckets.Preset.DEFAULT, List.of(), List.of(), List.of());
    private volatile Handler<HttpServerRequest> engine = req -> req.response().setStatusCode(404).end();
    private HttpServer server;
    private EngineMetricsScraper scraper;

    @BeforeEach
    void startServer() {
        server = await(vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0))
                .requestHandler(req -> engine.handle(req)).listen());
    }

    @AfterEach
    void stopEverything() {
        try {
            if (scraper != null) {
                await(scraper.stop());
            }
            await(server.close());
            provider.close();
        } finally {
            await(vertx.close());
        }
    }

    @Test
    void prometheusGetsAClassicHistogramWithTheEnginesBounds() {
        serve(EngineSamples.text("vllm.txt"));
        start(Recorders.of(new PrometheusRecorder(registry.getPrometheusRegistry(), buckets)));
        eventually("phases exported", () -> registry.scrape().contains(PHASE + "_count"));

        String text = registry.scrape();
        assertThat(text).contains("# TYPE " + PHASE + " histogram\n");
        List<Sample> samples = ExpositionParser.parse(text).samples();
        for (EnginePhase phase : EnginePhase.values()) {
            List<Sample> buckets = samples.stream().filter(s -> s.name().equals(PHASE + "_bucket")
                    && phase.label().equals(s.labels().get("phase"))).toList();
            // vLLM's own bounds, written as Prometheus writes them, then +Inf
            assertThat(buckets).extracting(s -> s.labels().get("le")).containsExactly("0.3", "0.5", "0.8", "1.0",
                    "1.5", "2.0", "2.5", "5.0", "10.0", "15.0", "20.0", "30.0", "40.0", "50.0", "60.0", "120.0",
                    "240.0", "480.0", "960.0", "1920.0", "7680.0", "+Inf");
            CumulativeHistogram expected = scraper.latest().phase(phase);
            assertThat(buckets).extracting(Sample::value)
                    .containsExactlyElementsOf(expected.cumulativeCounts().stream().map(Long::doubleValue).toList());
            assertThat(value(samples, PHASE + "_count", phase)).isEqualTo(3549.0);
            assertThat(value(samples, PHASE + "_sum", phase)).isCloseTo(expected.sum(), within(1e-9));
        }
        assertThat(value(samples, PHASE + "_bucket", EnginePhase.QUEUE, "le", "0.3")).isEqualTo(2252.0);

        // the counters, passed through
        assertThat(value(samples, "llm_sidecar_engine_prompt_tokens_total")).isEqualTo(2_672_667.0);
        assertThat(value(samples, "llm_sidecar_engine_prompt_tokens_cached_total")).isEqualTo(119_552.0);
        assertThat(value(samples, "llm_sidecar_engine_spec_decode_drafts_total")).isEqualTo(188_343.0);
        assertThat(value(samples, "llm_sidecar_engine_spec_decode_draft_tokens_total")).isEqualTo(565_029.0);
        assertThat(value(samples, "llm_sidecar_engine_spec_decode_accepted_tokens_total")).isEqualTo(331_144.0);

        // OpenMetrics, as Prometheus asks for it on /q/metrics
        String openMetrics = new MetricsScrape().render(registry.getPrometheusRegistry(),
                "application/openmetrics-text;version=1.0.0").text();
        assertThat(openMetrics).contains("# TYPE " + PHASE + " histogram\n")
                .contains(PHASE + "_bucket{phase=\"queue\",le=\"0.3\"} 2252\n")
                .contains(PHASE + "_bucket{phase=\"queue\",le=\"+Inf\"} 3549\n")
                .endsWith("# EOF\n");
    }

    @Test
    void enginesWithoutAPhaseHaveNoLinesForIt() {
        serve(EngineSamples.text("tgi.txt"));
        start(Recorders.of(new PrometheusRecorder(registry.getPrometheusRegistry(), buckets)));
        eventually("phases exported", () -> registry.scrape().contains(PHASE + "_count"));
        List<Sample> samples = ExpositionParser.parse(registry.scrape()).samples();
        assertThat(samples.stream().filter(s -> s.name().equals(PHASE + "_count")).map(s -> s.labels().get("phase")))
                .containsExactlyInAnyOrder("queue", "inference");
        assertThat(samples.stream().filter(s -> s.name().equals(PHASE + "_bucket")
                && "queue".equals(s.labels().get("phase")))).hasSize(36);
        assertThat(value(samples, "llm_sidecar_engine_spec_decode_drafts_total")).isNaN();
    }

    @Test
    void otlpGetsACumulativeExplicitBucketHistogram() {
        serve(EngineSamples.text("sglang.txt"));
        start(Recorders.of(new OtelRecorder(provider.get("test"), buckets, produced)));
        eventually("engine up", () -> scraper.up());

        MetricData data = phaseMetric(reader.collect());
        assertThat(data.getType()).isEqualTo(MetricDataType.HISTOGRAM);
        assertThat(data.getUnit()).isEqualTo("s");
        assertThat(data.getHistogramData().getAggregationTemporality()).isEqualTo(AggregationTemporality.CUMULATIVE);
        assertThat(data.getHistogramData().getPoints()).extracting(p -> p.getAttributes().get(PHASE_KEY))
                .containsExactlyInAnyOrder("queue", "prefill");
        HistogramPointData queue = point(data, "queue");
        CumulativeHistogram expected = scraper.latest().phase(EnginePhase.QUEUE);
        assertThat(queue.getBoundaries()).isEqualTo(expected.bounds()).startsWith(0.0, 0.1, 0.2, 0.5);
        assertThat(queue.getCounts()).isEqualTo(expected.bucketCounts()).startsWith(0L, 2204L, 615L, 882L);
        assertThat(queue.getCount()).isEqualTo(4120);
        assertThat(queue.getSum()).isCloseTo(729.2669255575984, within(1e-9));
        assertThat(queue.getAttributes()).isEqualTo(Attributes.of(PHASE_KEY, "queue"));

        // the next collection: same series, same start
        long start = queue.getStartEpochNanos();
        assertThat(point(phaseMetric(reader.collect()), "queue").getStartEpochNanos()).isEqualTo(start);
    }

    @Test
    void aFailedScrapeTakesThePhasesOutOfBothBackendsAndARestartStartsTheOtlpSeriesAnew() throws Exception {
        String vllm = EngineSamples.text("vllm.txt");
        serve(vllm);
        start(Recorders.of(new PrometheusRecorder(registry.getPrometheusRegistry(), buckets),
                new OtelRecorder(provider.get("test"), buckets, produced)));
        eventually("phases exported", () -> registry.scrape().contains(PHASE + "_count"));
        long start = point(phaseMetric(reader.collect()), "queue").getStartEpochNanos();
        double promptTokens = value(ExpositionParser.parse(registry.scrape()).samples(),
                "llm_sidecar_engine_prompt_tokens_total");

        engine = req -> req.response().setStatusCode(503).end();
        eventually("engine down", () -> !scraper.up());
        assertThat(registry.scrape()).doesNotContain(PHASE).contains("llm_sidecar_engine_up 0.0");
        assertThat(reader.collect()).extracting(MetricData::getName).doesNotContain(Contract.ENGINE_PHASE.name());
        // counters are held, not NaN: a NaN between two values would hide a restart's reset from rate()
        assertThat(value(ExpositionParser.parse(registry.scrape()).samples(),
                "llm_sidecar_engine_prompt_tokens_total")).isEqualTo(promptTokens).isEqualTo(2672667.0);

        // back, same counts: the same cumulative series
        serve(vllm);
        eventually("engine up again", () -> scraper.up());
        assertThat(registry.scrape()).contains(PHASE + "_bucket{phase=\"queue\",le=\"0.3\"} 2252");
        assertThat(point(phaseMetric(reader.collect()), "queue").getStartEpochNanos()).isEqualTo(start);

        // the engine restarted: its counts fell, the OTLP series starts again (Prometheus sees the counter reset)
        Thread.sleep(2);
        serve("""
                vllm:request_queue_time_seconds_bucket{engine="0",le="0.3",model_name="m"} 1.0
                vllm:request_queue_time_seconds_bucket{engine="0",le="+Inf",model_name="m"} 2.0
                vllm:request_queue_time_seconds_count{engine="0",model_name="m"} 2.0
                vllm:request_queue_time_seconds_sum{engine="0",model_name="m"} 0.9
                """);
        eventually("the restarted engine's counts", () -> scraper.latest().phase(EnginePhase.QUEUE) != null
                && scraper.latest().phase(EnginePhase.QUEUE).count() == 2);
        HistogramPointData restarted = point(phaseMetric(reader.collect()), "queue");
        assertThat(restarted.getStartEpochNanos()).isGreaterThan(start);
        assertThat(restarted.getBoundaries()).containsExactly(0.3);
        assertThat(restarted.getCounts()).containsExactly(1L, 1L);
        assertThat(registry.scrape()).contains(PHASE + "_bucket{phase=\"queue\",le=\"+Inf\"} 2")
                .doesNotContain("phase=\"prefill\"");
    }

    @Test
    void otlpThroughTheSdkPipelineToACollector() {
        Vertx otlpVertx = Vertx.vertx();
        OtlpReceiver receiver = new OtlpReceiver(otlpVertx);
        try (receiver; OtelPipeline otel = OtelPipeline.create(Map.of("otel.exporter.otlp.endpoint",
                receiver.endpoint(), "otel.exporter.otlp.protocol", "http/protobuf", "otel.traces.exporter", "none",
                "otel.metric.export.interval", "200"), new io.prometheus.metrics.model.registry.PrometheusRegistry())) {
            assertThat(otel.enabled()).isTrue();
            serve(EngineSamples.text("tgi.txt"));
            start(Recorders.of(new OtelRecorder(otel.openTelemetry().getMeter(OtelPipeline.METER_NAME), buckets,
                    otel.producedHistograms())));
            eventually("engine up", () -> scraper.up());
            otel.flush();
            eventually("exported", () -> !receiver.metrics(Contract.ENGINE_PHASE.name()).isEmpty());
            var metric = receiver.metrics(Contract.ENGINE_PHASE.name()).get(0);
            assertThat(metric.getUnit()).isEqualTo("s");
            assertThat(metric.getHistogram().getAggregationTemporality()).isEqualTo(
                    io.opentelemetry.proto.metrics.v1.AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE);
            var points = metric.getHistogram().getDataPointsList();
            assertThat(points).extracting(p -> OtlpReceiver.attributes(p.getAttributesList())
                    .get("llm_sidecar.engine.phase")).containsExactlyInAnyOrder("queue", "inference");
            var queue = points.stream().filter(p -> OtlpReceiver.attributes(p.getAttributesList())
                    .get("llm_sidecar.engine.phase").equals("queue")).findFirst().orElseThrow();
            assertThat(queue.getExplicitBoundsList()).hasSize(35).startsWith(0.00015000000000000001);
            assertThat(queue.getBucketCountsList()).startsWith(478L, 255L, 371L);
            assertThat(queue.getCount()).isEqualTo(5290);
            assertThat(queue.getSum()).isCloseTo(183.2025054461642, within(1e-9));
        } finally {
            await(otlpVertx.close());
        }
    }

    private void serve(String body) {
        engine = req -> req.response().putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8")
                .end(body);
    }

    private void start(Recorders recorders) {
        scraper = new EngineMetricsScraper(vertx, recorders,
                URI.create("http://127.0.0.1:" + server.actualPort() + "/metrics"), INTERVAL, TIMEOUT);
        await(scraper.start());
    }

    private static MetricData phaseMetric(java.util.Collection<MetricData> data) {
        return data.stream().filter(d -> d.getName().equals(Contract.ENGINE_PHASE.name())).findFirst()
                .orElseThrow(() -> new AssertionError("no " + Contract.ENGINE_PHASE.name() + " in " + data));
    }

    private static HistogramPointData point(MetricData data, String phase) {
        return data.getHistogramData().getPoints().stream()
                .filter(p -> phase.equals(p.getAttributes().get(PHASE_KEY))).findFirst()
                .orElseThrow(() -> new AssertionError("no " + phase + " point"));
    }

    private static double value(List<Sample> samples, String name, EnginePhase phase, String... more) {
        List<String> pairs = new ArrayList<>(List.of("phase", phase.label()));
        pairs.addAll(List.of(more));
        return value(samples, name, pairs.toArray(String[]::new));
    }

    private static double value(List<Sample> samples, String name, String... labelPairs) {
        return samples.stream().filter(s -> {
            if (!s.name().equals(name)) {
                return false;
            }
            for (int i = 0; i < labelPairs.length; i += 2) {
                if (!labelPairs[i + 1].equals(s.labels().get(labelPairs[i]))) {
                    return false;
                }
            }
            return true;
        }).mapToDouble(Sample::value).findFirst().orElseThrow(() -> new AssertionError("no " + name));
    }

    private void eventually(String what, BooleanSupplier condition) {
        Waits.eventually(registry, "llm_sidecar_engine", java.time.Duration.ofSeconds(10), what, condition);
    }

    private static <T> T await(Future<T> future) {
        return Waits.await(future, java.time.Duration.ofSeconds(10));
    }
}
