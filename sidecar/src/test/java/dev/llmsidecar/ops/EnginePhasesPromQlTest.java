package dev.llmsidecar.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.llmsidecar.engine.EngineMetricsScraper;
import dev.llmsidecar.metrics.prometheus.MetricsScrape;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The re-exported engine phase histogram is one a real Prometheus takes and answers quantiles from: an engine whose
 * queue histogram grows with 49 of every 50 requests under 0.3 s and 1 in (0.5 s, 0.8 s], scraped by the sidecar,
 * the sidecar's /q/metrics (OpenMetrics, as Prometheus asks) scraped by Debian's prometheus. The p99 of the increase is
 * then 0.5 + (0.99 × 50 − 49) / (50 − 49) × 0.3 = 0.65 s, by Prometheus's linear interpolation in the bucket.
 */
class EnginePhasesPromQlTest {

    private static final String P99 = "histogram_quantile(0.99, sum by (le) "
            + "(rate(llm_sidecar_engine_phase_duration_seconds_bucket{phase=\"queue\"}[1m])))";

    @Test
    void histogramQuantileOfTheQueuePhase(@TempDir Path tmp) throws Exception {
        Path prometheusBinary = OpsTools.require("prometheus", "apt-get install prometheus");
        Vertx vertx = Vertx.vertx();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        EngineMetricsScraper scraper = null;
        try {
            long t0 = System.nanoTime();
            HttpServer engine = await(vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0))
                    .requestHandler(req -> req.response().end(vllmQueue((System.nanoTime() - t0) / 20_000_000L)))
                    .listen());
            scraper = new EngineMetricsScraper(vertx, PrometheusRecorder.only(registry.getPrometheusRegistry()),
                    URI.create("http://127.0.0.1:" + engine.actualPort() + "/metrics"), Duration.ofMillis(200),
                    Duration.ofSeconds(2));
            await(scraper.start());
            HttpServer management = await(vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1")
                    .setPort(0)).requestHandler(req -> {
                        MetricsScrape.Rendered scrape = new MetricsScrape().render(registry.getPrometheusRegistry(), req.getHeader("accept"));
                        req.response().putHeader("content-type", scrape.contentType()).end(io.vertx.core.buffer.Buffer.buffer(scrape.body()));
                    }).listen());
            String config = """
                    global:
                      scrape_interval: 1s
                      scrape_timeout: 1s
                    scrape_configs:
                      - job_name: llm-sidecar
                        metrics_path: /q/metrics
                        static_configs:
                          - targets: ['127.0.0.1:%d']
                    """.formatted(management.actualPort());
            try (PrometheusServer prom = PrometheusServer.start(prometheusBinary, tmp, config)) {
                JsonArray result = null;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
                while (System.nanoTime() < deadline) {
                    result = PrometheusServer.result(prom.query(P99));
                    if (result != null && !result.isEmpty()
                            && !"NaN".equals(result.getJsonObject(0).getJsonArray("value").getString(1))) {
                        break;
                    }
                    Thread.sleep(250);
                }
                assertThat(result).as("no p99 after 40 s; targets: " + prom.api("/api/v1/targets") + "\nlog:\n"
                        + prom.log()).isNotNull().isNotEmpty();
                double p99 = Double.parseDouble(result.getJsonObject(0).getJsonArray("value").getString(1));
                assertThat(p99).isCloseTo(0.65, within(1e-9));
                // the bounds Prometheus stored are the engine's
                JsonArray les = PrometheusServer.result(prom.query(
                        "count by (le) (llm_sidecar_engine_phase_duration_seconds_bucket{phase=\"queue\"})"));
                assertThat(les.stream().map(o -> ((JsonObject) o).getJsonObject("metric").getString("le")))
                        .containsExactlyInAnyOrder("0.3", "0.5", "0.8", "1.0", "+Inf");
            }
        } finally {
            if (scraper != null) {
                await(scraper.stop());
            }
            await(vertx.close());
        }
    }

    /** vLLM's queue histogram after {@code k} ticks of 50 requests: 49 at 0.1 s, 1 at 0.6 s. */
    private static String vllmQueue(long k) {
        return String.format(Locale.ROOT, """
                vllm:num_requests_running{engine="0",model_name="m"} 1.0
                vllm:request_queue_time_seconds_bucket{engine="0",le="0.3",model_name="m"} %1$d.0
                vllm:request_queue_time_seconds_bucket{engine="0",le="0.5",model_name="m"} %1$d.0
                vllm:request_queue_time_seconds_bucket{engine="0",le="0.8",model_name="m"} %2$d.0
                vllm:request_queue_time_seconds_bucket{engine="0",le="1.0",model_name="m"} %2$d.0
                vllm:request_queue_time_seconds_bucket{engine="0",le="+Inf",model_name="m"} %2$d.0
                vllm:request_queue_time_seconds_count{engine="0",model_name="m"} %2$d.0
                vllm:request_queue_time_seconds_sum{engine="0",model_name="m"} %3$s
                """, 49 * k, 50 * k, k * (49 * 0.1 + 0.6));
    }

    private static <T> T await(Future<T> future) {
        return dev.llmsidecar.support.Waits.await(future, java.time.Duration.ofSeconds(10));
    }
}
