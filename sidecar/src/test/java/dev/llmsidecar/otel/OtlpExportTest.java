package dev.llmsidecar.otel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.OtlpReceiver;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.trace.v1.Span;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Known traffic through the proxy, exported over OTLP to a real receiver that decodes with opentelemetry-proto:
 * metric names, units, attributes and values, span attributes and events, trace context to the upstream, and
 * trace-id exemplars on the Prometheus side that match the exported spans.
 */
class OtlpExportTest {

    static final long TTFT_MS = 100;
    static final long GAP_MS = 20;
    static final int TOKENS = 5;
    static final EngineBehaviour ENGINE = EngineBehaviour.defaults()
            .withTiming(Duration.ofMillis(TTFT_MS), Duration.ofMillis(GAP_MS)).withOutputTokens(TOKENS);
    static final Map<String, String> SLO = Map.of(
            "sidecar.slo.objectives.fast.ttft", "PT0.5S",
            "sidecar.slo.objectives.strict.ttft", "PT0.05S");
    static final String MODEL = "otel-model";
    /** Asks for usage itself: exact token counts from the first request (the sidecar injects only once it learned). */
    static final String BODY = "{\"model\":\"" + MODEL + "\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    /**
     * Exact agreement is asserted against the Prometheus side. Against the schedule, a value is never below it
     * (causal: the engine's timer never fires early) and at most this much above it: five times the 100 ms TTFT, so
     * the bound tells a measurement from a wrong one (a TTFT taken at the end, or in milliseconds) and still holds
     * when a busy machine delays one request by a scheduler quantum, or a hundred.
     */
    static final double SLACK_S = 0.5;
    static final String CLIENT_TRACE = "0af7651916cd43dd8448eb211c80319c";
    static final String CLIENT_SPAN = "b7ad6b7169203331";

    final Vertx vertx = Vertx.vertx();
    final OtlpReceiver receiver = new OtlpReceiver(vertx);

    @AfterEach
    void close() {
        receiver.close();
        ProxyFixture.await(vertx.close());
    }

    Map<String, String> otel(String protocol, String... more) {
        Map<String, String> m = new HashMap<>(Map.of(
                "otel.exporter.otlp.endpoint", receiver.endpoint(),
                "otel.exporter.otlp.protocol", protocol,
                "otel.metric.export.interval", "200",
                "otel.bsp.schedule.delay", "50"));
        for (int i = 0; i < more.length; i += 2) {
            m.put(more[i], more[i + 1]);
        }
        return m;
    }

    static List<ProxyFixture.Received> send(ProxyFixture f, int n, Map<String, String> headers) {
        List<Future<ProxyFixture.Received>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", Buffer.buffer(BODY), headers));
        }
        return all.stream().map(ProxyFixture::await).toList();
    }

    /** A cold JVM's first requests are slow: warm up under another model, which the assertions filter out. */
    static void warmUp(ProxyFixture f) {
        List<Future<ProxyFixture.Received>> all = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            all.add(f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions",
                    Buffer.buffer(BODY.replace(MODEL, "warmup")), Map.of()));
        }
        all.forEach(ProxyFixture::await);
    }

    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    static Map<String, Object> attributes(List<KeyValue> kvs) {
        return OtlpReceiver.attributes(kvs);
    }

    /** The histogram point of the model in the latest (cumulative) export of {@code name}. */
    HistogramDataPoint latestPoint(String name, Map<String, Object> match) {
        List<Metric> exports = receiver.metrics(name);
        assertThat(exports).as(name + " exported").isNotEmpty();
        Metric last = exports.get(exports.size() - 1);
        return last.getHistogram().getDataPointsList().stream()
                .filter(p -> attributes(p.getAttributesList()).entrySet().containsAll(match.entrySet()))
                .findFirst().orElseThrow(() -> new AssertionError("no point " + match + " in " + last));
    }

    long latestCount(String name, Map<String, Object> match) {
        List<Metric> exports = receiver.metrics(name);
        if (exports.isEmpty()) {
            return 0;
        }
        Metric last = exports.get(exports.size() - 1);
        return last.getHistogram().getDataPointsList().stream()
                .filter(p -> attributes(p.getAttributesList()).entrySet().containsAll(match.entrySet()))
                .mapToLong(HistogramDataPoint::getCount).sum();
    }

    /** Sum of the matching counter points in the latest export; 0 when never exported (a counter never added to). */
    double latestSum(String name, Map<String, Object> match) {
        List<Metric> exports = receiver.metrics(name);
        if (exports.isEmpty()) {
            return 0;
        }
        Metric last = exports.get(exports.size() - 1);
        return last.getSum().getDataPointsList().stream()
                .filter(p -> attributes(p.getAttributesList()).entrySet().containsAll(match.entrySet()))
                .mapToDouble(NumberDataPoint::getAsInt).sum();
    }

    @Test
    void genAiMetricsAndSpansOverHttpProtobuf() {
        try (ProxyFixture f = new ProxyFixture(ENGINE, ProxyFixture.pinned(SLO, MODEL), null, otel("http/protobuf"))) {
            warmUp(f);
            send(f, 3, Map.of());
            send(f, 1, Map.of("traceparent", "00-" + CLIENT_TRACE + "-" + CLIENT_SPAN + "-01"));
            Map<String, Object> ok = Map.of("gen_ai.request.model", MODEL, "llm_sidecar.outcome", "ok");
            // OTel GenAI: TTFT of successful requests only, so it has no outcome attribute
            Map<String, Object> model = Map.of("gen_ai.request.model", MODEL);
            // a periodic export may fall between two recordings of one request's end: wait for an export that
            // holds all of them
            Map<String, Object> sloClass = Map.of("gen_ai.request.model", MODEL, "llm_sidecar.slo_class", "default");
            await("12 spans, 4 TTFT samples and 4 SLO requests",
                    () -> receiver.spans().size() >= 12 && latestCount("gen_ai.server.time_to_first_token", model) >= 4
                            && latestSum("llm_sidecar.slo.requests", sloClass) >= 4
                            && latestSum("llm_sidecar.slo.objective_requests", Map.of("gen_ai.request.model", MODEL,
                                    "llm_sidecar.objective", "strict")) >= 4);

            // metrics: names, units, required GenAI attributes, values against the schedule
            Metric ttftMetric = receiver.metrics("gen_ai.server.time_to_first_token").get(0);
            assertThat(ttftMetric.getUnit()).isEqualTo("s");
            HistogramDataPoint ttft = latestPoint("gen_ai.server.time_to_first_token", model);
            assertThat(attributes(ttft.getAttributesList())).containsEntry("gen_ai.operation.name", "chat")
                    .containsEntry("gen_ai.provider.name", "openai").containsEntry("llm_sidecar.streaming", true)
                    .containsEntry("server.address", "127.0.0.1").containsEntry("server.port", (long) f.enginePort)
                    .doesNotContainKey("error.type");
            assertThat(ttft.getCount()).isEqualTo(4);
            // the same measurement as the Prometheus series, and consistent with the engine's schedule
            Scrape prom = f.scrape();
            String[] labels = {"model", MODEL};
            assertThat(ttft.getSum()).isCloseTo(prom.sum("gen_ai_server_time_to_first_token_seconds_sum", labels), within(1e-6));
            assertThat(ttft.getSum() / 4).isBetween(TTFT_MS / 1000.0, TTFT_MS / 1000.0 + SLACK_S);
            // the same bucket bounds as the Prometheus histograms (SLO thresholds included)
            assertThat(ttft.getExplicitBoundsList()).isEqualTo(f.telemetry.buckets().bounds(Contract.TTFT.buckets()));
            assertThat(ttft.getExplicitBoundsList()).contains(0.05, 0.5);

            HistogramDataPoint tpot = latestPoint("gen_ai.server.time_per_output_token", ok);
            assertThat(tpot.getCount()).isEqualTo(4);
            assertThat(tpot.getSum()).isCloseTo(prom.sum("gen_ai_server_time_per_output_token_seconds_sum", labels), within(1e-6));
            assertThat(tpot.getSum() / 4).isBetween(GAP_MS / 1000.0 * 0.9, GAP_MS / 1000.0 + SLACK_S);
            HistogramDataPoint e2e = latestPoint("gen_ai.server.request.duration", ok);
            assertThat(e2e.getSum()).isCloseTo(prom.sum("gen_ai_server_request_duration_seconds_sum", labels), within(1e-6));
            assertThat(e2e.getSum() / 4).isGreaterThanOrEqualTo((TTFT_MS + (TOKENS - 1) * GAP_MS) / 1000.0);
            assertThat(latestPoint("llm_sidecar.inter_token_latency", ok).getCount()).isEqualTo(4 * (TOKENS - 1));
            assertThat(latestPoint("gen_ai.client.operation.time_per_output_chunk",
                    Map.of("gen_ai.request.model", MODEL)).getCount()).isEqualTo(4 * (TOKENS - 1));
            assertThat(latestPoint("gen_ai.client.operation.time_to_first_chunk", model).getCount()).isEqualTo(4);

            Metric usage = receiver.metrics("gen_ai.client.token.usage").get(0);
            assertThat(usage.getUnit()).isEqualTo("{token}");
            HistogramDataPoint output = latestPoint("gen_ai.client.token.usage",
                    Map.of("gen_ai.request.model", MODEL, "gen_ai.token.type", "output"));
            assertThat(output.getCount()).isEqualTo(4);
            assertThat(output.getSum()).isEqualTo(4.0 * TOKENS);
            HistogramDataPoint input = latestPoint("gen_ai.client.token.usage",
                    Map.of("gen_ai.request.model", MODEL, "gen_ai.token.type", "input"));
            assertThat(input.getSum()).isPositive();

            // SLO counters: every request met "fast" (0.5 s), none met "strict" (50 ms)
            Map<String, Object> slo = Map.of("gen_ai.request.model", MODEL, "llm_sidecar.slo_class", "default");
            assertThat(latestSum("llm_sidecar.slo.requests", slo)).isEqualTo(4);
            assertThat(latestSum("llm_sidecar.slo.good_requests", slo)).isEqualTo(0);
            assertThat(latestSum("llm_sidecar.slo.objective_good_requests",
                    Map.of("gen_ai.request.model", MODEL, "llm_sidecar.objective", "fast"))).isEqualTo(4);
            assertThat(latestSum("llm_sidecar.slo.objective_requests",
                    Map.of("gen_ai.request.model", MODEL, "llm_sidecar.objective", "strict"))).isEqualTo(4);
            assertThat(receiver.metrics("llm_sidecar.requests_in_flight")).isNotEmpty();

            // spans: one server span per request, GenAI attributes, first-token event at TTFT, SLO verdict
            List<Span> spans = receiver.spans().stream()
                    .filter(s -> MODEL.equals(attributes(s.getAttributesList()).get("gen_ai.request.model"))).toList();
            assertThat(spans).hasSize(4).allSatisfy(s -> {
                assertThat(s.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
                assertThat(s.getName()).isEqualTo("chat " + MODEL);
                Map<String, Object> a = attributes(s.getAttributesList());
                assertThat(a).containsEntry("gen_ai.operation.name", "chat")
                        .containsEntry("gen_ai.provider.name", "openai")
                        .containsEntry("gen_ai.request.model", MODEL)
                        .containsEntry("gen_ai.request.stream", true)
                        .containsEntry("gen_ai.usage.output_tokens", (long) TOKENS)
                        .containsEntry("gen_ai.response.finish_reasons", List.of("length"))
                        .containsEntry("llm_sidecar.outcome", "ok")
                        .containsEntry("llm_sidecar.slo.good", false)
                        .containsEntry("llm_sidecar.slo.violated", List.of("strict:ttft"))
                        .containsEntry("http.response.status_code", 200L)
                        .containsEntry("gen_ai.response.model", MODEL)
                        .containsEntry("server.address", "127.0.0.1")
                        .containsEntry("server.port", (long) f.enginePort)
                        .containsKey("gen_ai.usage.input_tokens");
                double ttftSeconds = (Double) a.get("llm_sidecar.time_to_first_token");
                assertThat(ttftSeconds).isBetween(TTFT_MS / 1000.0, TTFT_MS / 1000.0 + SLACK_S);
                // time to first chunk is the first chunk of generated content (semantic-conventions#3483); the
                // engine's role-only prelude comes at once, and has a name of its own
                assertThat((Double) a.get("gen_ai.response.time_to_first_chunk")).isEqualTo(ttftSeconds);
                assertThat((Double) a.get("llm_sidecar.time_to_first_response_chunk")).isLessThan(TTFT_MS / 1000.0);
                assertThat(s.getEventsList()).hasSize(1);
                var event = s.getEvents(0);
                assertThat(event.getName()).isEqualTo("llm_sidecar.first_token");
                assertThat((event.getTimeUnixNano() - s.getStartTimeUnixNano()) / 1e9).isCloseTo(ttftSeconds, within(1e-6));
                assertThat(s.getEndTimeUnixNano() - s.getStartTimeUnixNano())
                        .isGreaterThanOrEqualTo((TTFT_MS + (TOKENS - 1) * GAP_MS) * 1_000_000L);
                assertThat(a.keySet()).noneMatch(k -> k.contains("prompt") || k.contains("completion")
                        || k.contains("messages") || k.contains("content"));
            });
            // the span of the request that carried a traceparent continues the client's trace
            List<Span> continued = spans.stream().filter(s -> hex(s.getTraceId().toByteArray()).equals(CLIENT_TRACE)).toList();
            assertThat(continued).hasSize(1);
            assertThat(hex(continued.get(0).getParentSpanId().toByteArray())).isEqualTo(CLIENT_SPAN);
            assertThat(spans.stream().filter(s -> s.getParentSpanId().isEmpty()).count()).isEqualTo(3);

            // exemplars: OpenMetrics TTFT buckets point to exported traces
            String openMetrics = f.registry.scrape("application/openmetrics-text; version=1.0.0; charset=utf-8");
            Pattern exemplar = Pattern.compile("^gen_ai_server_time_to_first_token_seconds_bucket\\{[^}]*model=\""
                    + MODEL + "\"[^}]*} \\S+ # \\{span_id=\"([0-9a-f]{16})\",trace_id=\"([0-9a-f]{32})\"} (\\S+)",
                    Pattern.MULTILINE);
            Matcher m = exemplar.matcher(openMetrics);
            List<String> exemplarTraces = new ArrayList<>();
            List<String> exemplarSpans = new ArrayList<>();
            while (m.find()) {
                exemplarSpans.add(m.group(1));
                exemplarTraces.add(m.group(2));
                assertThat(Double.parseDouble(m.group(3))).isBetween(TTFT_MS / 1000.0, TTFT_MS / 1000.0 + SLACK_S);
            }
            assertThat(exemplarTraces).as("TTFT exemplars in\n" + openMetrics).isNotEmpty();
            var spanIds = spans.stream().map(s -> hex(s.getSpanId().toByteArray())).collect(Collectors.toSet());
            var traceIds = spans.stream().map(s -> hex(s.getTraceId().toByteArray())).collect(Collectors.toSet());
            assertThat(traceIds).containsAll(exemplarTraces);
            assertThat(spanIds).containsAll(exemplarSpans);
            assertThat(receiver.transports()).allMatch(t -> t.startsWith("http "));
            assertThat(f.scrape().sum("llm_sidecar_otlp_spans_exported_total")).isEqualTo(12);
        }
    }

    /**
     * sidecar.metrics.otlp-histograms=exponential gives base-2 exponential histograms although the SDK's default
     * aggregation stays explicit, and with the delta temporality preference each point holds only what was recorded
     * since the previous export: the points add up to the requests sent.
     */
    @Test
    void grpcTransportExponentialHistogramsAndDeltaTemporality() {
        try (ProxyFixture f = new ProxyFixture(ENGINE, ProxyFixture.pinned(Map.of("sidecar.metrics.otlp-histograms", "exponential"), MODEL), null,
                otel("grpc", "otel.exporter.otlp.metrics.temporality.preference", "delta"))) {
            warmUp(f);
            long before = exponentialCount();
            send(f, 2, Map.of());
            await("10 spans and TTFT over gRPC", () -> receiver.spans().size() >= 10
                    && exponentialCount() - before >= 2);
            assertThat(receiver.transports()).isNotEmpty().allMatch(t -> t.equals("grpc HTTP_2"));
            List<Metric> ttft = receiver.metrics("gen_ai.server.time_to_first_token");
            assertThat(ttft).allSatisfy(m -> {
                assertThat(m.getDataCase()).isEqualTo(Metric.DataCase.EXPONENTIAL_HISTOGRAM);
                assertThat(m.getExponentialHistogram().getAggregationTemporality()).isEqualTo(
                        io.opentelemetry.proto.metrics.v1.AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA);
            });
            List<io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint> points = exponentialPoints();
            assertThat(points).allSatisfy(p -> assertThat(p.getScale()).isPositive());
            // delta points do not overlap: each starts at or after the end of the one before
            for (int i = 1; i < points.size(); i++) {
                assertThat(points.get(i).getStartTimeUnixNano()).isGreaterThanOrEqualTo(
                        points.get(i - 1).getTimeUnixNano());
            }
            assertThat(exponentialCount() - before).isEqualTo(2);
            double sum = points.stream().mapToDouble(p -> p.getSum()).sum();
            long count = exponentialCount();
            assertThat(sum / count).isBetween(TTFT_MS / 1000.0, TTFT_MS / 1000.0 + SLACK_S);
            assertThat(receiver.spans()).allSatisfy(s -> assertThat(attributes(s.getAttributesList()))
                    .containsEntry("gen_ai.usage.output_tokens", (long) TOKENS));
        }
    }

    /** TTFT points of the test's model in every export so far (exponential histograms). */
    List<io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint> exponentialPoints() {
        return receiver.metrics("gen_ai.server.time_to_first_token").stream()
                .flatMap(m -> m.getExponentialHistogram().getDataPointsList().stream())
                .filter(p -> MODEL.equals(attributes(p.getAttributesList()).get("gen_ai.request.model")))
                .toList();
    }

    /** Observations in all those delta points. */
    long exponentialCount() {
        return exponentialPoints().stream().mapToLong(p -> p.getCount()).sum();
    }

    @Test
    void anthropicMessagesAreAttributedToTheAnthropicProvider() {
        try (ProxyFixture f = new ProxyFixture(ENGINE, ProxyFixture.pinned("m-claude"), null, otel("http/protobuf"))) {
            ProxyFixture.Received r = f.post(f.proxyPort, "/v1/messages", "{\"model\":\"m-claude\",\"max_tokens\":6,"
                    + "\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", Map.of());
            assertThat(r.status()).isEqualTo(200);
            await("the span and TTFT", () -> receiver.spans().size() >= 1
                    && latestCount("gen_ai.server.time_to_first_token", Map.of("gen_ai.request.model", "m-claude")) >= 1);
            assertThat(attributes(receiver.spans().get(0).getAttributesList()))
                    .containsEntry("gen_ai.provider.name", "anthropic").containsEntry("gen_ai.operation.name", "chat")
                    .containsEntry("gen_ai.response.model", "m-claude");
            assertThat(attributes(latestPoint("gen_ai.server.time_to_first_token",
                    Map.of("gen_ai.request.model", "m-claude")).getAttributesList()))
                    .containsEntry("gen_ai.provider.name", "anthropic");
        }
    }

    /**
     * sidecar.otel.semconv=v1.36 pins the names of the GenAI conventions' v1.36.0 baseline: gen_ai.system where the
     * latest say gen_ai.provider.name, on spans and metrics alike; gen_ai_latest_experimental in
     * OTEL_SEMCONV_STABILITY_OPT_IN (here its property form) overrides the pin.
     */
    @Test
    void semconvV136NamesTheProviderGenAiSystemUnlessTheLatestAreOptedIn() {
        for (boolean optIn : new boolean[] {false, true}) {
            String model = optIn ? "m-opted-in" : "m-v136";
            Map<String, String> settings = optIn
                    ? otel("http/protobuf", "otel.semconv-stability.opt-in", "http,gen_ai_latest_experimental")
                    : otel("http/protobuf");
            try (ProxyFixture f = new ProxyFixture(ENGINE, ProxyFixture.pinned(Map.of("sidecar.otel.semconv", "v1.36"), model), null, settings)) {
                ProxyFixture.await(f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions",
                        Buffer.buffer(BODY.replace(MODEL, model)), Map.of()));
                await("the span and TTFT", () -> receiver.spans().stream().anyMatch(sp -> model.equals(
                        attributes(sp.getAttributesList()).get("gen_ai.request.model")))
                        && latestCount("gen_ai.server.time_to_first_token", Map.of("gen_ai.request.model", model)) >= 1);
                String present = optIn ? "gen_ai.provider.name" : "gen_ai.system";
                String absent = optIn ? "gen_ai.system" : "gen_ai.provider.name";
                Span span = receiver.spans().stream().filter(sp -> model.equals(
                        attributes(sp.getAttributesList()).get("gen_ai.request.model"))).findFirst().orElseThrow();
                assertThat(attributes(span.getAttributesList())).as("span, opt-in " + optIn)
                        .containsEntry(present, "openai").doesNotContainKey(absent);
                assertThat(attributes(latestPoint("gen_ai.server.time_to_first_token",
                        Map.of("gen_ai.request.model", model)).getAttributesList())).as("TTFT, opt-in " + optIn)
                        .containsEntry(present, "openai").doesNotContainKey(absent);
            }
        }
    }

    @Test
    void traceContextReachesTheUpstream() {
        // a minimal upstream that records the headers it got and answers with a short stream
        ConcurrentLinkedQueue<Map<String, String>> seen = new ConcurrentLinkedQueue<>();
        HttpServer upstream = vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0));
        upstream.requestHandler(req -> req.body().onSuccess(b -> {
            seen.add(Map.of("traceparent", String.valueOf(req.getHeader("traceparent")),
                    "tracestate", String.valueOf(req.getHeader("tracestate"))));
            req.response().putHeader("content-type", "text/event-stream").end(
                    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"
                    + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
                    + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\ndata: [DONE]\n\n");
        }));
        int port = ProxyFixture.await(upstream.listen()).actualPort();
        try (ProxyFixture f = new ProxyFixture(ENGINE, Map.of(), "http://127.0.0.1:" + port, otel("http/protobuf"))) {
            send(f, 1, Map.of("traceparent", "00-" + CLIENT_TRACE + "-" + CLIENT_SPAN + "-01", "tracestate", "vendor=x"));
            send(f, 1, Map.of());
            await("2 spans", () -> receiver.spans().size() >= 2);
            List<Span> spans = receiver.spans();
            List<Map<String, String>> headers = List.copyOf(seen);
            assertThat(headers).hasSize(2);
            for (Map<String, String> h : headers) {
                Matcher m = Pattern.compile("00-([0-9a-f]{32})-([0-9a-f]{16})-0[13]").matcher(h.get("traceparent"));
                assertThat(m.matches()).as(h.get("traceparent")).isTrue();
                // the upstream's parent is the sidecar's span, in the same trace
                assertThat(spans).anySatisfy(s -> {
                    assertThat(hex(s.getTraceId().toByteArray())).isEqualTo(m.group(1));
                    assertThat(hex(s.getSpanId().toByteArray())).isEqualTo(m.group(2));
                });
            }
            assertThat(headers.get(0).get("traceparent")).startsWith("00-" + CLIENT_TRACE + "-")
                    .doesNotContain(CLIENT_SPAN);
            assertThat(headers.get(0).get("tracestate")).isEqualTo("vendor=x");
        } finally {
            ProxyFixture.await(upstream.close());
        }
    }

    static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }
}
