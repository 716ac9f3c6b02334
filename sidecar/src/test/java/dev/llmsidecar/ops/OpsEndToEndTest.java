package dev.llmsidecar.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.engine.EngineHealth;
import dev.llmsidecar.engine.EngineMetricsScraper;
import dev.llmsidecar.metrics.prometheus.MetricsScrape;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.testkit.OtlpReceiver;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * End to end: a real Prometheus (Debian's binary) scrapes the sidecar (the real ProxyServer, telemetry, engine
 * scraper and JVM binders, served on a loopback management endpoint) in front of the simulated vLLM-like engine,
 * evaluating the shipped deploy/prometheus/rules.yml unchanged. Traffic runs a healthy phase, then a degraded one
 * (slow prefill, slow decode, 500s, broken streams, client cancels, a non-JSON body). OTLP export goes to a local
 * receiver, so the OTLP self-metrics have data and the latency histograms carry trace-id exemplars (Prometheus scrapes
 * the OpenMetrics form and must store them, pointing to spans the receiver got).
 *
 * <p>Alert windows: the rules are used as shipped, with their real 5m/30m/1h/6h/3d windows. The test's whole history
 * is about a minute, so every window covers all of it: after the healthy phase the fast-burn page must be silent,
 * after the degraded phase (most requests violating objective {@code interactive}, target 0.99) the 1h and 5m burn
 * rates are far above 14.4 and {@code LLMSidecarSLOBurnRateFast} must go pending (its {@code for: 2m} keeps it from
 * firing inside the test). Then every recording rule, every dashboard panel query and every template-variable query
 * must return data through the Prometheus HTTP API.
 */
class OpsEndToEndTest {

    static final Path DASHBOARDS = OpsTools.ROOT.resolve("grafana/dashboards");
    static final Path RULES = OpsTools.ROOT.resolve("deploy/prometheus/rules.yml");
    /**
     * Panel queries empty by design in this test (keyed by the series they read), with the reason. Every other
     * panel query must return data: a counter that exists only after its first event would show "No data" instead
     * of 0, which is why the sidecar exports its counters with known label values at 0 from the start.
     */
    static final Map<String, String> EMPTY_BY_DESIGN = Map.of(
            "llm_sidecar_cost_gpu_spend_total", "this test prices per token; a GPU-hour price is the other way "
                    + "(WorkMetricsTest)",
            "llm_sidecar_undecodable_chunks_total", "labelled by wire format and operation, created at the first "
                    + "undecodable event, which the simulated engine never sends",
            "llm_sidecar_engine_reported_decode_seconds", "decode time is reported per request by llama.cpp "
                    + "(timings.predicted_ms), Ollama and TGI; the simulated engine speaks vLLM's per-request metrics, "
                    + "which give queue time and time to first token only",
            "llm_sidecar_request_duration_outside_engine_seconds", "needs the engine's whole time for a response that "
                    + "does not stream (time to first token and decode); the simulated engine's vLLM per-request "
                    + "metrics have no decode time (NonStreamingSeriesTest covers it with Ollama and TGI)");
    static final Duration HEALTHY = Duration.ofSeconds(20);
    static final Duration DEGRADED_BEFORE_CHECK = Duration.ofSeconds(15);

    enum Phase { HEALTHY, DEGRADED, STOPPED }

    @TempDir
    Path tmp;

    /**
     * @param nativeHistograms Prometheus with native histograms on: it scrapes protobuf and stores the sidecar's
     *     histograms as native ones only, so every rule and panel must also read those
     */
    @ParameterizedTest(name = "native histograms: {0}")
    @ValueSource(booleans = {false, true})
    void prometheusScrapesTheSidecarAndEveryRuleAndPanelReturnsDataAndTheBurnRateAlertGoesPending(
            boolean nativeHistograms) throws Exception {
        Path prometheusBinary = OpsTools.require("prometheus", "apt-get install prometheus");
        EngineBehaviour engine = EngineBehaviour.defaults().withTiming(Duration.ofMillis(40), Duration.ofMillis(4))
                .withOutputTokens(8).withCachedTokenRatio(0.5).withSlots(6).withPerRequestMetrics(true)
                .withJitter(0.2);
        Map<String, String> config = new LinkedHashMap<>();
        config.put("sidecar.slo.classes", "default,batch");
        config.put("sidecar.slo.objectives.interactive.slo-class", "default");
        config.put("sidecar.slo.objectives.interactive.ttft", "PT0.3S");
        config.put("sidecar.slo.objectives.interactive.tpot", "PT0.03S");
        config.put("sidecar.slo.objectives.interactive.target", "0.99");
        config.put("sidecar.slo.objectives.batch.slo-class", "batch");
        config.put("sidecar.slo.objectives.batch.e2e", "PT3S");
        config.put("sidecar.slo.objectives.batch.target", "0.95");
        config.put("sidecar.windows.durations", "PT6S,PT30S");
        config.put("sidecar.windows.drift-short", "PT6S");
        config.put("sidecar.windows.drift-baseline", "PT30S");
        config.put("sidecar.windows.drift-min-samples", "5");
        config.put("sidecar.tenants.source", "api-key-hash"); // the tenant panels read real label values
        config.put("sidecar.slo.declared.enabled", "true"); // the declared-target panels read real buckets
        config.put("sidecar.slo.declared.trust-all", "true"); // from the test's own traffic
        config.put("sidecar.priority.enabled", "true"); // and the priority panels real priorities
        config.put("sidecar.conversations.enabled", "true"); // the conversation panels: agent loops below
        config.put("sidecar.conversations.max-age", "PT5S"); // turns leave the table: turns per conversation
        config.put("sidecar.cost.input-price-per-million", "0.2"); // the cost panels read real values
        config.put("sidecar.cost.output-price-per-million", "0.8");

        // OTLP on, to a local receiver: spans give the latency histograms trace-id exemplars, and the OTLP
        // self-metrics of the health dashboard have data
        Vertx otlpVertx = Vertx.vertx();
        OtlpReceiver receiver = new OtlpReceiver(otlpVertx);
        Map<String, String> otel = Map.of("otel.exporter.otlp.endpoint", receiver.endpoint(),
                "otel.exporter.otlp.protocol", "http/protobuf", "otel.metric.export.interval", "1000",
                "otel.bsp.schedule.delay", "200");
        try (receiver; ProxyFixture f = new ProxyFixture(engine, config, null, otel)) {
            // what the Quarkus application adds around the proxy: JVM/process binders, the engine scraper and the
            // queue-depth sampler (ProxyServer), and the management endpoint that serves /q/metrics
            new JvmMemoryMetrics().bindTo(f.registry);
            JvmGcMetrics gc = new JvmGcMetrics();
            gc.bindTo(f.registry);
            new JvmThreadMetrics().bindTo(f.registry);
            new ProcessorMetrics().bindTo(f.registry);
            new FileDescriptorMetrics().bindTo(f.registry);
            EngineMetricsScraper scraper = new EngineMetricsScraper(f.vertx, PrometheusRecorder.only(f.registry.getPrometheusRegistry()),
                    URI.create("http://127.0.0.1:" + f.enginePort + "/metrics"), Duration.ofSeconds(1),
                    Duration.ofSeconds(1));
            ProxyFixture.await(scraper.start());
            EngineHealth health = new EngineHealth(f.vertx, PrometheusRecorder.only(f.registry.getPrometheusRegistry()),
                    dev.llmsidecar.config.HttpTarget.of(URI.create("http://127.0.0.1:" + f.enginePort + "/health")), Duration.ofSeconds(1),
                    Duration.ofSeconds(1));
            health.start();
            // the GPU row of the dashboards: a recorded DCGM exporter answer, this test's "pod" holds GPUs 0 and 1
            String dcgm = Files.readString(Path.of("src/test/resources/gpu-metrics/dcgm-exporter-kubernetes.txt"));
            HttpServer dcgmServer = ProxyFixture.await(f.vertx.createHttpServer()
                    .requestHandler(r -> r.response().end(dcgm)).listen(0, "127.0.0.1"));
            dev.llmsidecar.gpu.DcgmScraper gpus = new dev.llmsidecar.gpu.DcgmScraper(f.vertx,
                    PrometheusRecorder.only(f.registry.getPrometheusRegistry()),
                    URI.create("http://127.0.0.1:" + dcgmServer.actualPort() + "/metrics"),
                    new dev.llmsidecar.gpu.DcgmNormaliser("vllm-llama-70b-6d5f7c9b8-x2kqp"), Duration.ofSeconds(1),
                    Duration.ofSeconds(1));
            ProxyFixture.await(gpus.start());
            long sampler = f.vertx.setPeriodic(250, id -> f.telemetry.inFlight().sampleQueueDepth());
            HttpServer management = f.vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0));
            // content negotiation as on /q/metrics: Prometheus asks for OpenMetrics (exemplars) first
            management.requestHandler(req -> {
                MetricsScrape.Rendered scrape = new MetricsScrape().render(f.registry.getPrometheusRegistry(), req.getHeader("accept"));
                req.response().putHeader("content-type", scrape.contentType()).end(io.vertx.core.buffer.Buffer.buffer(scrape.body()));
            });
            int managementPort = ProxyFixture.await(management.listen()).actualPort();
            System.gc(); // so jvm_gc_pause_seconds has a sample

            String promConfig = PrometheusServer.scrapingSidecar(RULES, managementPort, "ops-e2e", "llm-sidecar-e2e-0");
            Traffic traffic = new Traffic(f);
            try (PrometheusServer prom = PrometheusServer.start(prometheusBinary, tmp, promConfig,
                    nativeHistograms ? "native-histograms,exemplar-storage" : "exemplar-storage")) {
                traffic.start();
                sleep(HEALTHY);
                // for diagnosis: the OpenMetrics form, with trace-id exemplars
                String openMetrics = f.registry.scrape("application/openmetrics-text; version=1.0.0; charset=utf-8");
                Files.writeString(OpsTools.outDir().resolve("e2e-scrape.openmetrics.txt"), openMetrics);
                assertThat(openMetrics).containsPattern(
                        "gen_ai_server_time_to_first_token_seconds_bucket\\{.*\\} \\S+ # \\{.*trace_id=\"[0-9a-f]{32}\"");
                waitForScrapes(prom);
                if (nativeHistograms) {
                    // the histograms are native, and Prometheus 2.42 keeps no exemplars of native histograms
                    assertThat(PrometheusServer.result(prom.query("gen_ai_server_time_to_first_token_seconds_bucket")))
                            .isEmpty();
                    assertThat(single(prom, "count(gen_ai_server_time_to_first_token_seconds)")).isPositive();
                } else {
                    assertStoredExemplarsNameExportedSpans(prom, f, receiver);
                }
                // healthy: data flows, burn rate low, no page
                assertThat(single(prom, "up{job=\"llm-sidecar\"}")).isEqualTo(1.0);
                double healthyBurn = single(prom,
                        "llm_sidecar:slo_objective_burn_rate:rate5m{objective=\"interactive\"}");
                assertThat(healthyBurn).as("burn rate after the healthy phase").isLessThan(14.4);
                assertThat(activeAlerts(prom, "LLMSidecarSLOBurnRateFast")).as("healthy: no fast-burn page").isEmpty();

                traffic.phase.set(Phase.DEGRADED);
                sleep(DEGRADED_BEFORE_CHECK);
                JsonObject pending = null;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
                while (pending == null && System.nanoTime() < deadline) {
                    pending = activeAlerts(prom, "LLMSidecarSLOBurnRateFast").stream()
                            .filter(a -> "interactive".equals(a.getJsonObject("labels").getString("objective")))
                            .findFirst().orElse(null);
                    if (pending == null) {
                        Thread.sleep(500);
                    }
                }
                assertThat(pending).as("LLMSidecarSLOBurnRateFast{objective=interactive} active; alerts: "
                        + prom.api("/api/v1/alerts") + "; traffic " + traffic).isNotNull();
                assertThat(pending.getString("state")).isIn("pending", "firing");
                assertThat(pending.getJsonObject("labels").getString("severity")).isEqualTo("critical");
                assertThat(pending.getJsonObject("labels").getString("namespace")).isEqualTo("ops-e2e");
                assertThat(single(prom, "llm_sidecar:slo_objective_burn_rate:rate1h{objective=\"interactive\"}"))
                        .isGreaterThan(14.4);

                List<String> problems = new ArrayList<>();
                int recording = checkRecordingRules(prom, problems);
                int panelQueries = checkDashboards(prom, problems);
                assertThat(problems).as("recording rules and dashboard queries without data").isEmpty();
                assertThat(recording).as("recording rules evaluated").isGreaterThanOrEqualTo(25);
                assertThat(panelQueries).as("dashboard queries run").isGreaterThanOrEqualTo(50);
                assertThat(traffic.completed.get()).as(traffic.toString()).isGreaterThan(100);
            } finally {
                traffic.stop();
                f.vertx.cancelTimer(sampler);
                ProxyFixture.await(scraper.stop());
                ProxyFixture.await(gpus.stop());
                ProxyFixture.await(dcgmServer.close());
                ProxyFixture.await(management.close());
                gc.close();
            }
        } finally {
            ProxyFixture.await(otlpVertx.close());
        }
    }

    /** Prometheus stored the bucket exemplars, and they name spans the OTLP receiver got. */
    static void assertStoredExemplarsNameExportedSpans(PrometheusServer prom, ProxyFixture f, OtlpReceiver receiver) {
        f.telemetry.otel().flush();
        JsonArray exemplars = prom.api("/api/v1/query_exemplars?query="
                + URLEncoder.encode("gen_ai_server_time_to_first_token_seconds_bucket", StandardCharsets.UTF_8)
                + "&start=" + (System.currentTimeMillis() / 1000 - 300) + "&end="
                + (System.currentTimeMillis() / 1000 + 60)).getJsonArray("data");
        List<String> exemplarTraces = new ArrayList<>();
        exemplars.forEach(series -> ((JsonObject) series).getJsonArray("exemplars").forEach(
                e -> exemplarTraces.add(((JsonObject) e).getJsonObject("labels").getString("trace_id"))));
        assertThat(exemplarTraces).as("stored TTFT exemplars: " + exemplars).isNotEmpty();
        java.util.Set<String> spanTraces = new java.util.HashSet<>();
        receiver.spans().forEach(s -> spanTraces.add(java.util.HexFormat.of().formatHex(s.getTraceId().toByteArray())));
        // (requests still running have an exemplar but no exported span yet)
        assertThat(exemplarTraces).anyMatch(spanTraces::contains);
    }

    /** Every recording rule of the loaded rule files: healthy and returning at least one sample. */
    static int checkRecordingRules(PrometheusServer prom, List<String> problems) {
        JsonArray groups = prom.api("/api/v1/rules?type=record").getJsonObject("data").getJsonArray("groups");
        int count = 0;
        for (Object g : groups) {
            for (Object r : ((JsonObject) g).getJsonArray("rules")) {
                JsonObject rule = (JsonObject) r;
                count++;
                if (!"ok".equals(rule.getString("health"))) {
                    problems.add("rule " + rule.getString("name") + " health " + rule.getString("health") + ": "
                            + rule.getString("lastError"));
                }
                JsonArray result = PrometheusServer.result(prom.query(rule.getString("name")));
                if (result == null || result.isEmpty()) {
                    problems.add("recording rule " + rule.getString("name") + " has no data");
                }
            }
        }
        JsonArray alerting = prom.api("/api/v1/rules?type=alert").getJsonObject("data").getJsonArray("groups");
        for (Object g : alerting) {
            for (Object r : ((JsonObject) g).getJsonArray("rules")) {
                JsonObject rule = (JsonObject) r;
                if (!"ok".equals(rule.getString("health"))) {
                    problems.add("alert " + rule.getString("name") + " health " + rule.getString("health") + ": "
                            + rule.getString("lastError"));
                }
            }
        }
        return count;
    }

    static final Pattern LABEL_VALUES = Pattern.compile("label_values\\((.*),\\s*(\\w+)\\)");

    /** Every panel target and template-variable query of grafana/dashboards, with the variables set to All. */
    static int checkDashboards(PrometheusServer prom, List<String> problems) throws Exception {
        int count = 0;
        List<Path> files;
        try (Stream<Path> s = Files.list(DASHBOARDS)) {
            files = s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
        assertThat(files).hasSizeGreaterThanOrEqualTo(4);
        for (Path file : files) {
            JsonObject dashboard = new JsonObject(Files.readString(file));
            for (Object v : dashboard.getJsonObject("templating").getJsonArray("list")) {
                JsonObject variable = (JsonObject) v;
                if (!"query".equals(variable.getString("type"))) {
                    continue;
                }
                Matcher m = LABEL_VALUES.matcher(variable.getJsonObject("query").getString("query"));
                assertThat(m.matches()).as(variable.encode()).isTrue();
                String selector = interpolate(m.group(1));
                JsonObject answer = prom.api("/api/v1/label/" + m.group(2) + "/values?match[]="
                        + URLEncoder.encode(selector, StandardCharsets.UTF_8));
                JsonArray values = answer.getJsonArray("data");
                count++;
                if (values == null || values.isEmpty()) {
                    problems.add(file.getFileName() + " variable " + variable.getString("name") + ": " + answer);
                }
            }
            for (Object p : dashboard.getJsonArray("panels")) {
                JsonObject panel = (JsonObject) p;
                for (Object t : panel.getJsonArray("targets")) {
                    String expr = interpolate(((JsonObject) t).getString("expr"));
                    JsonObject answer = prom.query(expr);
                    count++;
                    String where = file.getFileName() + " \"" + panel.getString("title") + "\": " + expr;
                    if (!"success".equals(answer.getString("status"))) {
                        problems.add(where + " failed: " + answer);
                    } else if (PrometheusServer.result(answer).isEmpty()
                            && EMPTY_BY_DESIGN.keySet().stream().noneMatch(expr::contains)) {
                        problems.add(where + " returned no data");
                    }
                }
            }
        }
        return count;
    }

    /** Grafana's interpolation with every variable at All (allValue ".*"), the job constant and a rate interval. */
    static String interpolate(String expr) {
        return expr.replace("$__rate_interval", "20s").replace("$namespace", ".*").replace("$pod", ".*")
                .replace("$model", ".*").replace("$slo_class", ".*").replace("$job", "llm-sidecar");
    }

    static List<JsonObject> activeAlerts(PrometheusServer prom, String name) {
        List<JsonObject> out = new ArrayList<>();
        for (Object a : prom.api("/api/v1/alerts").getJsonObject("data").getJsonArray("alerts")) {
            JsonObject alert = (JsonObject) a;
            if (name.equals(alert.getJsonObject("labels").getString("alertname"))) {
                out.add(alert);
            }
        }
        return out;
    }

    static double single(PrometheusServer prom, String promql) {
        JsonObject answer = prom.query(promql);
        JsonArray result = PrometheusServer.result(answer);
        assertThat(result).as(promql + " -> " + answer).hasSize(1);
        return Double.parseDouble(result.getJsonObject(0).getJsonArray("value").getString(1));
    }

    /** Waits (bounded) until the target was scraped and the recording rules saw traffic. */
    static void waitForScrapes(PrometheusServer prom) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            JsonArray r = PrometheusServer.result(
                    prom.query("llm_sidecar:slo_objective_burn_rate:rate5m{objective=\"interactive\"}"));
            if (r != null && !r.isEmpty()) {
                return;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("no burn-rate sample after 30 s; targets: " + prom.api("/api/v1/targets")
                + "\nprometheus log:\n" + prom.log());
    }

    static void sleep(Duration d) throws InterruptedException {
        Thread.sleep(d.toMillis());
    }

    /** Open-loop traffic: one request every 125 ms (at most 48 in flight), mix chosen by phase and counter. */
    static final class Traffic {
        final AtomicReference<Phase> phase = new AtomicReference<>(Phase.HEALTHY);
        final AtomicInteger sent = new AtomicInteger();
        final AtomicInteger completed = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final AtomicInteger inFlight = new AtomicInteger();
        private final ProxyFixture f;
        private final HttpClient client;
        private final Context context;
        private long timer = -1;

        Traffic(ProxyFixture f) {
            this.f = f;
            this.client = f.vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1"),
                    new PoolOptions().setHttp1MaxSize(64));
            this.context = f.vertx.getOrCreateContext();
        }

        void start() {
            context.runOnContext(v -> timer = f.vertx.setPeriodic(125, id -> tick()));
        }

        void stop() {
            phase.set(Phase.STOPPED);
            context.runOnContext(v -> f.vertx.cancelTimer(timer));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (inFlight.get() > 0 && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            ProxyFixture.await(client.close());
        }

        /**
         * Turn {@code step % 3} of agent loop {@code step / 3}: the user's task, the tool's result after the model's
         * call, then the user again after the model's answer. The assistant messages are the client's own: the sidecar
         * links turns by the history the client resends, not by what the engine said.
         */
        static String agentTurn(int step, boolean stream) {
            String task = "x".repeat(400) + " task " + (step / 3); // 50+ prompt tokens: cached tokens reported
            JsonArray messages = new JsonArray().add(new JsonObject().put("role", "user").put("content", task));
            if (step % 3 >= 1) {
                messages.add(new JsonObject().put("role", "assistant").put("tool_calls", new JsonArray().add(
                        new JsonObject().put("id", "call_" + step / 3).put("type", "function").put("function",
                                new JsonObject().put("name", "search").put("arguments", "{}")))));
                messages.add(new JsonObject().put("role", "tool").put("tool_call_id", "call_" + step / 3)
                        .put("content", "found it"));
            }
            if (step % 3 == 2) {
                messages.add(new JsonObject().put("role", "assistant").put("content", "done"));
                messages.add(new JsonObject().put("role", "user").put("content", "thanks"));
            }
            return new JsonObject().put("model", "sim-llama-8b").put("stream", stream).put("messages", messages)
                    .encode();
        }

        private void tick() {
            Phase p = phase.get();
            if (p == Phase.STOPPED || inFlight.get() >= 48) {
                return;
            }
            int i = sent.getAndIncrement();
            boolean longPrompt = (i / 2) % 2 == 0; // 50+ prompt tokens: the engine reports cached tokens (cache hit)
            String prompt = longPrompt ? "x".repeat(400) : "hi";
            String sloClass = i % 8 == 0 ? "batch" : "default";
            boolean completions = i % 8 == 1;
            boolean stream = i % 8 != 2 && i % 8 != 0;
            String path = completions ? "/v1/completions" : "/v1/chat/completions";
            String body = completions
                    ? new JsonObject().put("model", "sim-llama-8b").put("prompt", prompt).put("stream", stream).encode()
                    : new JsonObject().put("model", i % 3 == 0 ? "sim-qwen-7b" : "sim-llama-8b").put("stream", stream)
                            .put("messages", new JsonArray().add(new JsonObject().put("role", "user")
                                    .put("content", prompt))).encode();
            if (!completions && i % 8 == 4) {
                body = agentTurn(i / 8, stream); // a 3-turn agent loop, one turn a second
            }
            if (!completions && i % 4 == 3) {
                body = new JsonObject(body).put("priority", i % 3).encode(); // vLLM's scheduling priority
            }
            RequestOptions options = new RequestOptions().setPort(f.proxyPort).setMethod(HttpMethod.POST).setURI(path)
                    .putHeader("content-type", "application/json").putHeader("x-slo-class", sloClass);
            if (i % 8 == 5) {
                options.putHeader("x-llm-d-slo-ttft-ms", i % 16 == 5 ? "400" : "1500"); // caller-declared targets
            }
            boolean cancel = false;
            if (p == Phase.DEGRADED) {
                switch (i % 10) {
                    case 6 -> options.putHeader("x-sim-inter-chunk-ms", "45");
                    case 7 -> options.putHeader("x-sim-status", "500");
                    case 8 -> options.putHeader("x-sim-fail-after-chunks", "2");
                    case 9 -> cancel = stream;
                    default -> options.putHeader("x-sim-ttft-ms", "700");
                }
                if (i % 25 == 3) {
                    body = "this is not json";
                    options.putHeader("content-type", "text/plain");
                }
            }
            inFlight.incrementAndGet();
            boolean cancelAfterFirstRead = cancel;
            String payload = body;
            client.request(options).compose(req -> req.send(Buffer.buffer(payload)).compose(res -> {
                io.vertx.core.Promise<Void> done = io.vertx.core.Promise.promise();
                res.handler(b -> {
                    if (cancelAfterFirstRead) {
                        req.reset();
                        done.tryComplete();
                    }
                });
                res.endHandler(x -> done.tryComplete());
                res.exceptionHandler(done::tryFail);
                return done.future();
            })).onComplete(ar -> {
                inFlight.decrementAndGet();
                (ar.succeeded() ? completed : failed).incrementAndGet();
            });
        }

        @Override
        public String toString() {
            return "sent=" + sent + " completed=" + completed + " failed=" + failed + " inFlight=" + inFlight;
        }
    }
}
