package dev.llmsidecar.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.metrics.prometheus.MetricsScrape;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.testkit.Repo;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What one pod's /q/metrics costs with one model's worst case (SeriesBudgetTest, default buckets) in each histogram
 * mode and format: bytes on the wire and the series Prometheus stores. Printed (and written to
 * target/ops/scrape-size.txt at the repository root) for docs/metrics.md; the assertions are the reasons to have native histograms.
 */
class ScrapeSizeTest {

    static final String TEXT = "text/plain; version=0.0.4; charset=utf-8";
    static final String OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    static final String PROTOBUF = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "
            + "encoding=delimited";

    record Size(int textBytes, int openMetricsBytes, int protobufBytes, long textLines, long storedFromProtobuf) {
    }

    @Test
    void nativeHistogramsCutTheSeriesAndTheBytesPrometheusReads() throws Exception {
        Map<HistogramMode, Size> sizes = new EnumMap<>(HistogramMode.class);
        for (HistogramMode mode : HistogramMode.values()) {
            sizes.put(mode, measure(mode));
        }
        StringBuilder report = new StringBuilder(String.format(Locale.ROOT,
                "one model's worst case, default buckets, whole registry%n%-8s %12s %12s %12s %12s %14s%n", "mode",
                "text B", "OpenMetr. B", "protobuf B", "text lines", "series (proto)"));
        sizes.forEach((mode, s) -> report.append(String.format(Locale.ROOT, "%-8s %12d %12d %12d %12d %14d%n",
                mode.name().toLowerCase(Locale.ROOT), s.textBytes(), s.openMetricsBytes(), s.protobufBytes(),
                s.textLines(), s.storedFromProtobuf())));
        System.out.print(report);
        Path out = Repo.root().resolve("target/ops");
        Files.createDirectories(out);
        Files.writeString(out.resolve("scrape-size.txt"), report);

        Size classic = sizes.get(HistogramMode.CLASSIC);
        Size both = sizes.get(HistogramMode.BOTH);
        Size nat = sizes.get(HistogramMode.NATIVE);
        // text scrapers see the same classic buckets in classic and both
        assertThat(both.textLines()).isEqualTo(classic.textLines());
        // a protobuf scraper stores one series per histogram label set: about 20 times fewer
        assertThat(both.storedFromProtobuf() * 10).isLessThan(classic.storedFromProtobuf());
        assertThat(nat.storedFromProtobuf()).isEqualTo(both.storedFromProtobuf());
        // and native-only protobuf is the smallest body (both carries the classic buckets too)
        assertThat(nat.protobufBytes()).isLessThan(both.protobufBytes()).isLessThan(classic.textBytes());
    }

    static Size measure(HistogramMode mode) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        SeriesBudgetTest.worstCase(registry, Buckets.Preset.DEFAULT, List.of(),
                new PrometheusRecorder.Histograms(mode, 160, ExemplarSource.NONE));
        MetricsScrape scrape = new MetricsScrape();
        MetricsScrape.Rendered text = scrape.render(registry.getPrometheusRegistry(), TEXT);
        MetricsScrape.Rendered om = scrape.render(registry.getPrometheusRegistry(), OPENMETRICS);
        MetricsScrape.Rendered proto = scrape.render(registry.getPrometheusRegistry(), PROTOBUF);
        assertThat(proto.contentType()).startsWith("application/vnd.google.protobuf");
        long lines = text.text().lines().filter(l -> !l.startsWith("#")).count();
        return new Size(text.body().length, om.body().length, proto.body().length, lines,
                storedFromProtobuf(registry));
    }

    /**
     * Series Prometheus stores from a protobuf scrape (scrape_classic_histograms off): one per point of a histogram
     * with native buckets, else one per classic bucket plus _count and _sum; one per point of any other metric.
     */
    static long storedFromProtobuf(PrometheusMeterRegistry registry) {
        long n = 0;
        for (var family : registry.getPrometheusRegistry().scrape()) {
            for (var point : family.getDataPoints()) {
                if (point instanceof io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot h
                        && !h.hasNativeHistogramData()) {
                    n += h.getClassicBuckets().size() + 2;
                } else {
                    n++;
                }
            }
        }
        return n;
    }
}
