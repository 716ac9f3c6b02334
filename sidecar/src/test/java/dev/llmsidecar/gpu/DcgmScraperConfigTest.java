package dev.llmsidecar.gpu;

import static dev.llmsidecar.gpu.GpuSamples.KUBERNETES;
import static dev.llmsidecar.gpu.GpuSamples.OTHER_POD;
import static dev.llmsidecar.gpu.GpuSamples.POD;
import static dev.llmsidecar.gpu.GpuSamples.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.gpu.DcgmScraper;
import dev.llmsidecar.gpu.GpuReading;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.support.TestConfigs;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What sidecar.gpu.* starts: nothing without a URL; with one, the GPUs of sidecar.gpu.pod, else of HOSTNAME. */
class DcgmScraperConfigTest {

    private final Vertx vertx = Vertx.vertx();
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private DcgmScraper scraper;

    @AfterEach
    void stop() {
        if (scraper != null) {
            DcgmScraperTest.await(scraper.stop());
        }
        DcgmScraperTest.await(vertx.close());
    }

    @Test
    void withoutAUrlNothingIsCreatedOrRegistered() {
        SidecarConfig.Gpu gpu = config(Map.of("sidecar.gpu.pod", POD)).gpu();
        assertThat(gpu.dcgmUrl()).isEmpty();
        Supplier<Recorders> recorders = () -> {
            throw new AssertionError("recorders asked for without sidecar.gpu.dcgm-url");
        };
        assertThat(DcgmScraper.configured(vertx, recorders, gpu, name -> POD)).isNull();
        assertThat(registry.getMeters()).isEmpty();
        assertThat(registry.scrape()).doesNotContain("llm_sidecar_gpu");
    }

    @Test
    void theDocumentedDefaults() {
        SidecarConfig.Gpu gpu = config(Map.of()).gpu();
        assertThat(gpu.pod()).isEmpty();
        assertThat(gpu.scrapeInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(gpu.scrapeTimeout()).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void thePodDefaultsToHostname() {
        String url = exporter();
        start(Map.of("sidecar.gpu.dcgm-url", url), Map.of("HOSTNAME", POD));
        eventually(() -> scraper.up());
        assertThat(scraper.latest()).extracting(GpuReading::gpu).containsExactly("0", "1");
        assertThat(registry.scrape()).contains("llm_sidecar_gpu_utilization_ratio{gpu=\"0\"");
    }

    @Test
    void anExplicitPodWinsOverHostname() {
        String url = exporter();
        start(Map.of("sidecar.gpu.dcgm-url", url, "sidecar.gpu.pod", OTHER_POD), Map.of("HOSTNAME", POD));
        eventually(() -> scraper.up());
        assertThat(scraper.latest()).extracting(GpuReading::gpu).containsExactly("2");
    }

    @Test
    void withoutPodOrHostnameNoGpuIsSelected() {
        String url = exporter();
        start(Map.of("sidecar.gpu.dcgm-url", url), Map.of());
        eventually(() -> Scrape.value(registry.getPrometheusRegistry(), "llm_sidecar_gpu_scrapes", "result", "ok") >= 1);
        assertThat(scraper.up()).isFalse();
        assertThat(scraper.latest()).isEmpty();
    }

    private void start(Map<String, String> properties, Map<String, String> env) {
        scraper = DcgmScraper.configured(vertx, () -> PrometheusRecorder.only(registry.getPrometheusRegistry()), config(properties).gpu(),
                env::get);
        assertThat(scraper).isNotNull();
        DcgmScraperTest.await(scraper.start());
    }

    /** A DCGM exporter on loopback serving the Kubernetes fixture; its metrics URL. */
    private String exporter() {
        String body = text(KUBERNETES);
        HttpServer server = DcgmScraperTest.await(vertx.createHttpServer()
                .requestHandler(req -> req.response().end(body)).listen(0, "127.0.0.1"));
        return "http://127.0.0.1:" + server.actualPort() + "/metrics";
    }

    private static SidecarConfig config(Map<String, String> properties) {
        return TestConfigs.sidecar("http://127.0.0.1:1", new HashMap<>(properties));
    }

    private static void eventually(java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited 5 s").isLessThan(deadline);
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
