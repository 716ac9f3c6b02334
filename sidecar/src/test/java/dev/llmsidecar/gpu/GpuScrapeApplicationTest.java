package dev.llmsidecar.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.app.GpuScrapeLifecycle;
import dev.llmsidecar.app.SimulatedEngineResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** The application as configured by default (no sidecar.gpu.dcgm-url): no GPU scraper, no GPU series. */
@QuarkusTest
@QuarkusTestResource(SimulatedEngineResource.class)
class GpuScrapeApplicationTest {

    @Inject
    GpuScrapeLifecycle lifecycle;

    @TestHTTPResource(value = "/metrics", management = true)
    URL metrics;

    @Test
    void nothingAboutGpusWithoutTheExportersUrl() throws Exception {
        assertThat(lifecycle.scraper()).isNull();
        HttpResponse<String> scrape = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(java.time.Duration.ofSeconds(5)).build()
                .send(HttpRequest.newBuilder(metrics.toURI()).timeout(java.time.Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(scrape.statusCode()).isEqualTo(200);
        assertThat(scrape.body()).contains("llm_sidecar_engine_up").doesNotContain("llm_sidecar_gpu");
    }
}
