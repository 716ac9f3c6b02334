package dev.llmsidecar.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.llmsidecar.engine.ExpositionParser.Sample;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.support.Waits;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The scraper against a real HTTP server on loopback, read back through a Prometheus registry scrape. */
class EngineMetricsScraperTest {

    private static final Duration INTERVAL = Duration.ofMillis(50);
    private static final Duration TIMEOUT = Duration.ofSeconds(3); // generous: a cold JVM's first scrape is slow

    private final Vertx vertx = Vertx.vertx();
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final AtomicInteger requests = new AtomicInteger();
    private volatile Handler<HttpServerRequest> engine = req -> req.response().setStatusCode(404).end();
    private HttpServer server;
    private int port;
    private EngineMetricsScraper scraper;

    @BeforeEach
    void startServer() {
        server = await(vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0))
                .requestHandler(req -> {
                    requests.incrementAndGet();
                    engine.handle(req);
                })
                .listen());
        port = server.actualPort();
    }

    @AfterEach
    void stopEverything() {
        try {
            if (scraper != null) {
                await(scraper.stop());
            }
            await(server.close());
        } finally {
            await(vertx.close());
        }
    }

    @Test
    void exportsTheEnginesNormalisedSignals() {
        serve(EngineSamples.text("vllm.txt"));
        start(TIMEOUT);
        eventually("engine up", () -> metric("llm_sidecar_engine_up") == 1.0);

        assertThat(metric("llm_sidecar_engine_requests_waiting")).isEqualTo(7.0);
        assertThat(metric("llm_sidecar_engine_requests_running")).isEqualTo(21.0);
        assertThat(metric("llm_sidecar_engine_kv_cache_usage_ratio")).isEqualTo(0.5);
        assertThat(metric("llm_sidecar_engine_info", "engine", "vllm")).isEqualTo(1.0);
        assertThat(metric("llm_sidecar_engine_scrapes_total", "result", "ok")).isGreaterThanOrEqualTo(1.0);
        assertThat(metric("llm_sidecar_engine_scrapes_total", "result", "error")).isZero();
        assertThat(metric("llm_sidecar_engine_scrapes_total", "result", "unparseable")).isZero();
        assertThat(scraper.up()).isTrue();
        assertThat(scraper.latest().kind()).isEqualTo(EngineKind.VLLM);
        assertThat(scraper.latest().requestsWaiting()).isEqualTo(7.0);
    }

    @Test
    void theFiguresCarryTheirAge() {
        engine = req -> req.response().setStatusCode(503).end();
        start(TIMEOUT);
        eventually("an error counted", () -> metric("llm_sidecar_engine_scrapes_total", "result", "error") >= 1.0);
        assertThat(metric("llm_sidecar_engine_scrape_age_seconds")).as("no figures yet").isNaN();
        assertThat(scraper.view().getValue("scrape_age_seconds")).isNull();

        serve(EngineSamples.text("vllm.txt"));
        eventually("engine up", () -> metric("llm_sidecar_engine_up") == 1.0);
        // read every 50 ms: never older than an interval and a late timer on a busy machine
        assertThat(metric("llm_sidecar_engine_scrape_age_seconds")).isBetween(0.0, 2.0);
        assertThat(scraper.view().getDouble("scrape_age_seconds")).isBetween(0.0, 2.0);
        assertThat(scraper.view().getDouble("requests_running")).isEqualTo(21.0);

        engine = req -> req.response().setStatusCode(503).end();
        eventually("engine down", () -> metric("llm_sidecar_engine_up") == 0.0);
        // no figures now, and the last ones keep ageing: how long the engine has not been read
        eventually("the last figures age", () -> metric("llm_sidecar_engine_scrape_age_seconds") > 0.3);
        assertThat(scraper.view().getValue("requests_running")).isNull();
        assertThat(scraper.view().getDouble("scrape_age_seconds")).isGreaterThan(0.3);
    }

    @Test
    void prefixHitRatioComesFromConsecutiveScrapes() {
        // every scrape sees 2000 more queried tokens and 800 more hits than the one before
        AtomicInteger n = new AtomicInteger();
        engine = req -> {
            int i = n.incrementAndGet();
            req.response().end(EngineNormaliserTest.vllmCounters(1000.0 * i, 400.0 * i, 1000.0 * i, 400.0 * i));
        };
        start(TIMEOUT);
        eventually("a prefix hit ratio", () -> !Double.isNaN(metric("llm_sidecar_engine_prefix_cache_hit_ratio")));
        assertThat(metric("llm_sidecar_engine_prefix_cache_hit_ratio")).isCloseTo(0.4, within(1e-9));
        assertThat(scraper.latest().prefixCacheHitRatio()).isCloseTo(0.4, within(1e-9));
    }

    @Test
    void engineGoneMeansDownWithAnErrorAndNoStaleValues() {
        serve(EngineSamples.text("tgi.txt"));
        start(TIMEOUT);
        eventually("engine up", () -> metric("llm_sidecar_engine_up") == 1.0);
        assertThat(metric("llm_sidecar_engine_requests_waiting")).isEqualTo(6.0);

        await(server.close());
        eventually("engine down", () -> metric("llm_sidecar_engine_up") == 0.0);
        eventually("an error counted", () -> metric("llm_sidecar_engine_scrapes_total", "result", "error") >= 1.0);
        assertThat(metric("llm_sidecar_engine_requests_waiting")).isNaN();
        assertThat(metric("llm_sidecar_engine_requests_running")).isNaN();
        assertThat(scraper.latest()).isEqualTo(EngineSnapshot.unknown());
        assertThat(metric("llm_sidecar_engine_info", "engine", "tgi")).as("identity outlives the outage")
                .isEqualTo(1.0);
    }

    @Test
    void non2xxIsAnError() {
        engine = req -> req.response().setStatusCode(503).end(EngineSamples.text("vllm.txt"));
        start(TIMEOUT);
        eventually("an error counted", () -> metric("llm_sidecar_engine_scrapes_total", "result", "error") >= 1.0);
        assertThat(metric("llm_sidecar_engine_up")).isZero();
        assertThat(metric("llm_sidecar_engine_scrapes_total", "result", "ok")).isZero();
        assertThat(metric("llm_sidecar_engine_requests_waiting")).isNaN();
    }

    @Test
    void garbageBodyIsUnparseable() {
        serve(EngineSamples.text("llamacpp.txt"));
        start(TIMEOUT);
        eventually("engine up", () -> metric("llm_sidecar_engine_up") == 1.0);

        serve("<html><body>It works!</body></html>\n\u0000\u0001 binary \uFFFD\n");
        eventually("unparseable counted",
                () -> metric("llm_sidecar_engine_scrapes_total", "result", "unparseable") >= 1.0);
        eventually("engine down", () -> metric("llm_sidecar_engine_up") == 0.0);
        assertThat(metric("llm_sidecar_engine_kv_cache_usage_ratio")).isNaN();
        assertThat(metric("llm_sidecar_engine_requests_running")).isNaN();
        assertThat(metric("llm_sidecar_engine_scrapes_total", "result", "error")).isZero();
        assertThat(metric("llm_sidecar_engine_info", "engine", "llamacpp")).as("not what answers now").isZero();
        assertThat(registry.scrape()).doesNotContain("engine=\"unknown\"");
    }

    @Test
    void aDifferentEngineFlipsTheInfoSeries() {
        serve(EngineSamples.text("vllm.txt"));
        start(TIMEOUT);
        eventually("vllm", () -> maybe("llm_sidecar_engine_info", "engine", "vllm") == 1.0);

        serve(EngineSamples.text("sglang.txt"));
        eventually("sglang", () -> maybe("llm_sidecar_engine_info", "engine", "sglang") == 1.0);
        assertThat(metric("llm_sidecar_engine_info", "engine", "vllm")).isZero();
        eventually("sglang values", () -> metric("llm_sidecar_engine_requests_waiting") == 5.0);
        assertThat(metric("llm_sidecar_engine_prefix_cache_hit_ratio")).isEqualTo(0.6875);
    }

    @Test
    void bodiesOverTheLimitAreRefused() {
        StringBuilder big = new StringBuilder(EngineSamples.text("vllm.txt"));
        String padding = "# HELP padding " + "x".repeat(1000) + "\n";
        while (big.length() <= EngineMetricsScraper.MAX_BODY_BYTES) {
            big.append(padding);
        }
        Buffer body = Buffer.buffer(big.toString());
        engine = req -> req.response().end(body);
        start(Duration.ofSeconds(2));
        eventually("an error counted", () -> metric("llm_sidecar_engine_scrapes_total", "result", "error") >= 1.0);
        assertThat(metric("llm_sidecar_engine_scrapes_total", "result", "ok")).isZero();
        assertThat(metric("llm_sidecar_engine_up")).isZero();

        serve(EngineSamples.text("vllm.txt"));
        eventually("recovery", () -> metric("llm_sidecar_engine_up") == 1.0);
    }

    @Test
    void aSilentEngineTimesOut() {
        engine = req -> {
            // never answers
        };
        start(Duration.ofMillis(200));
        eventually("a timeout counted", () -> metric("llm_sidecar_engine_scrapes_total", "result", "error") >= 1.0);
        assertThat(metric("llm_sidecar_engine_up")).isZero();

        serve(EngineSamples.text("sglang.txt"));
        eventually("recovery", () -> metric("llm_sidecar_engine_up") == 1.0);
    }

    @Test
    void aDrippingEngineHitsTheWholeScrapeDeadline() {
        // bytes keep coming, so no idle timeout fires: only the scrape's own deadline ends this
        AtomicInteger closedByScraper = new AtomicInteger();
        engine = req -> {
            var response = req.response().setChunked(true);
            response.write("# dripping\n");
            long timer = vertx.setPeriodic(20, id -> response.write("# still here\n"));
            response.closeHandler(v -> {
                vertx.cancelTimer(timer);
                closedByScraper.incrementAndGet();
            });
        };
        start(Duration.ofMillis(300));
        eventually("a timeout counted", () -> metric("llm_sidecar_engine_scrapes_total", "result", "error") >= 1.0);
        assertThat(metric("llm_sidecar_engine_scrapes_total", "result", "ok")).isZero();
        eventually("the abandoned connection closed", () -> closedByScraper.get() >= 1);

        serve(EngineSamples.text("vllm.txt"));
        eventually("recovery on a fresh connection", () -> metric("llm_sidecar_engine_up") == 1.0);
    }

    @Test
    void stopReportsDownAndStopsScraping() throws InterruptedException {
        serve(EngineSamples.text("vllm.txt"));
        start(TIMEOUT);
        eventually("engine up", () -> metric("llm_sidecar_engine_up") == 1.0);

        await(scraper.stop());
        assertThat(scraper.up()).isFalse();
        assertThat(metric("llm_sidecar_engine_up")).isZero();
        assertThat(metric("llm_sidecar_engine_requests_waiting")).isNaN();
        int seen = requests.get();
        Thread.sleep(200); // four intervals: enough for a forgotten timer to show itself
        // one scrape may have been on the wire when stop() returned (abandoned, not recalled) and reach the engine
        // late on a busy machine; a forgotten timer would add one per interval, four here
        assertThat(requests.get()).isBetween(seen, seen + 1);
        await(scraper.stop()); // idempotent
    }

    @Test
    void rejectsAnUnusableConfiguration() {
        assertThatThrownBy(() -> new EngineMetricsScraper(vertx, PrometheusRecorder.only(registry.getPrometheusRegistry()), URI.create("/metrics"), INTERVAL, TIMEOUT))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new EngineMetricsScraper(vertx, PrometheusRecorder.only(registry.getPrometheusRegistry()), URI.create("ftp://h/metrics"), INTERVAL,
                TIMEOUT)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new EngineMetricsScraper(vertx, PrometheusRecorder.only(registry.getPrometheusRegistry()), url(), Duration.ZERO, TIMEOUT))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void exportsTheTokenDriftLimitTheReconciliationRuleReads() {
        new EngineMetricsScraper(vertx, PrometheusRecorder.only(registry.getPrometheusRegistry()), url(), INTERVAL,
                TIMEOUT, 0.12);
        assertThat(metric("llm_sidecar_engine_token_drift_limit_ratio")).isEqualTo(0.12);
        for (double bad : new double[] {0, -0.1, 1.5, Double.NaN}) {
            assertThatThrownBy(() -> new EngineMetricsScraper(vertx,
                    PrometheusRecorder.only(new PrometheusMeterRegistry(
                            PrometheusConfig.DEFAULT).getPrometheusRegistry()),
                    url(), INTERVAL, TIMEOUT, bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sidecar.engine.token-drift-limit");
        }
    }

    private void serve(String body) {
        engine = req -> req.response().putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8")
                .end(body);
    }

    private URI url() {
        return URI.create("http://127.0.0.1:" + port + "/metrics");
    }

    private void start(Duration timeout) {
        scraper = new EngineMetricsScraper(vertx, PrometheusRecorder.only(registry.getPrometheusRegistry()), url(), INTERVAL, timeout);
        await(scraper.start());
    }

    /** The value of one series in the registry's Prometheus scrape; NaN-safe, fails if absent. */
    private double metric(String name, String... labelPairs) {
        return ExpositionParser.parse(registry.scrape()).samples().stream()
                .filter(s -> s.name().equals(name) && hasLabels(s, labelPairs))
                .mapToDouble(Sample::value)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no series " + name + " " + String.join(",", labelPairs)));
    }

    /** Like {@link #metric} but NaN while the series is not registered yet, for polling. */
    private double maybe(String name, String... labelPairs) {
        try {
            return metric(name, labelPairs);
        } catch (AssertionError absent) {
            return Double.NaN;
        }
    }

    private static boolean hasLabels(Sample s, String... pairs) {
        for (int i = 0; i < pairs.length; i += 2) {
            if (!pairs[i + 1].equals(s.labels().get(pairs[i]))) {
                return false;
            }
        }
        return true;
    }

    private void eventually(String what, BooleanSupplier condition) {
        Waits.eventually(registry, "llm_sidecar_engine", java.time.Duration.ofSeconds(5), what, condition);
    }

    private static <T> T await(Future<T> future) {
        return Waits.await(future, java.time.Duration.ofSeconds(10));
    }
}
