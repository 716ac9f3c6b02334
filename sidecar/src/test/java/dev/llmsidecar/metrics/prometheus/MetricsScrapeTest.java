package dev.llmsidecar.metrics.prometheus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.metrics.ExemplarSource;
import dev.llmsidecar.metrics.HistogramMode;
import io.prometheus.metrics.model.registry.MetricType;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Exemplar;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricMetadata;
import java.util.List;
import org.junit.jupiter.api.Test;

/** /q/metrics content negotiation, as Prometheus and plain clients ask. */
class MetricsScrapeTest {

    /** Prometheus 2.42 with --enable-feature=native-histograms. */
    static final String PROMETHEUS_NATIVE = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
            + "encoding=delimited;q=0.8,application/openmetrics-text;version=1.0.0;q=0.7,text/plain;version=0.0.4;q=0.6";
    /** Prometheus without it. */
    static final String PROMETHEUS_TEXT = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
            + "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

    private final MetricsScrape scrape = new MetricsScrape();

    private static PrometheusRegistry registryWithOneHistogram() {
        ExemplarSource trace = new ExemplarSource() {
            @Override
            public boolean sampled() {
                return true;
            }

            @Override
            public Labels labels() {
                return Labels.of(Exemplar.TRACE_ID, "0af7651916cd43dd8448eb211c80319c", Exemplar.SPAN_ID,
                        "b7ad6b7169203331");
            }
        };
        LatencyHistogram h = new LatencyHistogram(List.of(0.1, 1.0), HistogramMode.BOTH, 160, trace);
        h.observe(0.05);
        h.observe(0.5);
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(new io.prometheus.metrics.model.registry.Collector() {
            @Override
            public HistogramSnapshot collect() {
                return new HistogramSnapshot(new MetricMetadata("x_seconds", "x"),
                        List.of(h.snapshot(Labels.of("model", "m"))));
            }

            @Override
            public String getPrometheusName() {
                return "x_seconds";
            }

            @Override
            public MetricType getMetricType() {
                return MetricType.HISTOGRAM;
            }
        });
        return registry;
    }

    @Test
    void prometheusWithNativeHistogramsGetsProtobuf() {
        MetricsScrape.Rendered r = scrape.render(registryWithOneHistogram(), PROMETHEUS_NATIVE);
        assertThat(r.contentType()).startsWith("application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily;"
                + " encoding=delimited");
        assertThat(r.body()).isNotEmpty();
    }

    @Test
    void prometheusWithoutThemGetsOpenMetricsWithBucketExemplarsOnly() {
        MetricsScrape.Rendered r = scrape.render(registryWithOneHistogram(), PROMETHEUS_TEXT);
        assertThat(r.contentType()).startsWith("application/openmetrics-text; version=1.0.0");
        assertThat(r.text()).contains("x_seconds_bucket{model=\"m\",le=\"0.1\"} 1 # {span_id=\"b7ad6b7169203331\","
                        + "trace_id=\"0af7651916cd43dd8448eb211c80319c\"} 0.05 ")
                .containsPattern("x_seconds_count\\{model=\"m\"} 2\n") // no exemplar on _count (Prometheus < 2.43)
                .endsWith("# EOF\n");
    }

    @Test
    void aClientAskingForNothingGetsTheTextFormat() {
        MetricsScrape.Rendered r = scrape.render(registryWithOneHistogram(), null);
        assertThat(r.contentType()).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
        assertThat(r.text()).contains("x_seconds_bucket{model=\"m\",le=\"1.0\"} 2\n").doesNotContain("trace_id");
    }
}
