package dev.llmsidecar.ops;

import static dev.llmsidecar.metrics.Label.MODEL;
import static dev.llmsidecar.metrics.Label.OPERATION;
import static dev.llmsidecar.metrics.Label.PRIORITY;
import static dev.llmsidecar.metrics.Label.PROVIDER;
import static dev.llmsidecar.metrics.Label.SERVER_ADDRESS;
import static dev.llmsidecar.metrics.Label.SERVER_PORT;
import static dev.llmsidecar.metrics.Label.STREAMING;
import static dev.llmsidecar.metrics.Label.TENANT;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.llmsidecar.metrics.Buckets;
import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.SeriesBudgetTest;
import dev.llmsidecar.metrics.prometheus.MetricsScrape;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.json.JsonArray;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fleet percentiles from native histograms, on a real Prometheus (--enable-feature=native-histograms): three
 * sidecars' registries with known, different TTFT distributions, each also carrying the worst case of one model
 * (SeriesBudgetTest), scraped twice: as Prometheus negotiates it (protobuf, native histograms: job "native") and in
 * the text format (classic buckets: job "classic"). The fleet p50 / p90 / p99 of
 * {@code histogram_quantile(q, sum(rate(<native>[..])))} must be within 2 % of the exact quantiles of every latency
 * recorded; the classic buckets' answer and the series each pod costs are printed beside it.
 */
class OpsNativeHistogramFleetTest {

    static final String TTFT = "gen_ai_server_time_to_first_token_seconds";
    static final String OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    static final int PER_POD = 20_000;
    static final double[] QUANTILES = {0.5, 0.9, 0.99};

    /** One pod: its registry (default buckets, both representations), served on /metrics and /classic. */
    record Pod(String name, PrometheusMeterRegistry registry, Bound ttft, HttpServer server) {
        int port() {
            return server.getAddress().getPort();
        }
    }

    @Test
    void fleetQuantilesFromNativeHistogramsAreWithinTwoPercent(@TempDir Path tmp) throws Exception {
        Path prometheusBinary = OpsTools.require("prometheus", "apt-get install prometheus");
        Random random = new Random(28);
        // a fast pod, a slow one, and one with a slow tail of long prompts (bimodal)
        List<DoubleSupplier> distributions = List.of(
                () -> 0.15 * Math.exp(0.4 * random.nextGaussian()),
                () -> 0.6 * Math.exp(0.35 * random.nextGaussian()),
                () -> random.nextDouble() < 0.8 ? 0.3 * Math.exp(0.2 * random.nextGaussian())
                        : 2.0 * Math.exp(0.3 * random.nextGaussian()));
        List<Pod> pods = new ArrayList<>();
        try {
            for (String name : List.of("a", "b", "c")) {
                pods.add(pod(name));
            }
            String targets = pods.stream().map(p -> "          - targets: ['127.0.0.1:" + p.port() + "']\n"
                    + "            labels: {pod: " + p.name() + "}\n").reduce("", String::concat);
            String config = """
                    global:
                      scrape_interval: 100ms
                      scrape_timeout: 100ms
                    scrape_configs:
                      - job_name: native
                        static_configs:
                    %s  - job_name: classic
                        metrics_path: /classic
                        static_configs:
                    %s""".formatted(targets, targets);
            try (PrometheusServer prom = PrometheusServer.start(prometheusBinary, tmp, config,
                    "native-histograms,exemplar-storage")) {
                // the series exist (bound, all counts 0) and were scraped before any latency: rate() then needs no
                // extrapolation from a first sample, so it scales every bucket alike
                waitFor(prom, "count(" + TTFT + "{job=\"native\",model=\"fleet\"})", 3);
                waitFor(prom, "count(" + TTFT + "_count{job=\"classic\",model=\"fleet\"})", 3);
                double[] all = new double[PER_POD * pods.size()];
                int n = 0;
                for (int i = 0; i < pods.size(); i++) {
                    for (int k = 0; k < PER_POD; k++) {
                        double v = distributions.get(i).getAsDouble();
                        pods.get(i).ttft().record(v);
                        all[n++] = v;
                    }
                }
                waitFor(prom, "sum(histogram_count(" + TTFT + "{job=\"native\",model=\"fleet\"}))", all.length);
                waitFor(prom, "sum(" + TTFT + "_count{job=\"classic\",model=\"fleet\"})", all.length);
                // a span of 100 scrapes: rate() extrapolates each pod by 1/(samples - 1) of its increase, so pods
                // with a sample more or less would weigh differently by far more than the error under test with few
                // samples (a fleet's series are sampled over the whole window)
                waitFor(prom, "min(count_over_time(up[5m])) >= bool 100", 1);
                Arrays.sort(all);

                // what one pod costs Prometheus: the worst case of one model, native against classic
                double nativeSeries = scalar(prom, "count({job=\"native\",pod=\"a\",model=\"m\"})");
                double classicSeries = scalar(prom, "count({job=\"classic\",pod=\"a\",model=\"m\"})");
                double nativeAll = scalar(prom, "count({job=\"native\",pod=\"a\"})");
                double classicAll = scalar(prom, "count({job=\"classic\",pod=\"a\"})");

                // Equal weights for the pods. rate() extrapolates a pod to the query time by the gap since its own
                // last scrape while that gap is under 1.1 scrape intervals, so pods scraped at different offsets weigh
                // differently: with 250 ms scrapes over a few seconds this moved the fleet p90 by -2.3 % on a busy
                // machine and +0.7 % on a quiet one. Once the pods stop answering (a finished rollout), every pod's
                // gap is over that and each is extrapolated by the same half interval: what is left is the
                // histograms' own error.
                pods.forEach(p -> p.server().stop(0));
                waitFor(prom, "sum(up)", 0);
                Thread.sleep(500);

                StringBuilder report = new StringBuilder(String.format(Locale.ROOT,
                        "fleet TTFT, %d pods x %d requests%n%-6s %10s %10s %8s %10s %8s%n", pods.size(), PER_POD,
                        "q", "exact", "native", "error", "classic", "error"));
                List<String> misses = new ArrayList<>();
                for (double q : QUANTILES) {
                    double exact = all[(int) Math.ceil(q * all.length) - 1];
                    double nat = scalar(prom, "histogram_quantile(" + q + ", sum(rate(" + TTFT
                            + "{job=\"native\",model=\"fleet\"}[5m])))");
                    double classic = scalar(prom, "histogram_quantile(" + q + ", sum by (le) (rate(" + TTFT
                            + "_bucket{job=\"classic\",model=\"fleet\"}[5m])))");
                    report.append(String.format(Locale.ROOT, "p%-5s %10.4f %10.4f %+7.2f%% %10.4f %+7.2f%%%n",
                            trim(q * 100), exact, nat, 100 * (nat / exact - 1), classic, 100 * (classic / exact - 1)));
                    if (!(Math.abs(nat / exact - 1) <= 0.02)) {
                        misses.add("native p" + trim(q * 100) + ": " + nat + " vs exact " + exact);
                    }
                }
                report.append(String.format(Locale.ROOT, "series stored for pod a, job native: %.0f for model m's "
                        + "worst case, %.0f in all%n", nativeSeries, nativeAll));
                report.append(String.format(Locale.ROOT, "series stored for pod a, job classic: %.0f for model m's "
                        + "worst case, %.0f in all%n", classicSeries, classicAll));
                System.out.print(report);
                Files.writeString(OpsTools.outDir().resolve("native-histogram-fleet.txt"), report);
                assertThat(misses).as(report.toString()).isEmpty();
                assertThat(nativeSeries).isEqualTo(103);
                assertThat(classicSeries).isEqualTo(2022);
            }
        } finally {
            pods.forEach(p -> p.server().stop(0));
        }
    }

    private static Pod pod(String name) throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Recorders recorders = SeriesBudgetTest.worstCase(registry, Buckets.Preset.DEFAULT, List.of());
        Bound ttft = recorders.live(Contract.TTFT, LabelValues.of(MODEL, "fleet").and(OPERATION, "chat")
                .and(STREAMING, "true").and(TENANT, "unknown").and(PRIORITY, "").and(PROVIDER, null).and(SERVER_ADDRESS, null)
                .and(SERVER_PORT, null));
        MetricsScrape scrape = new MetricsScrape();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            // /classic: the text format whatever is asked (a scraper without native histograms)
            String accept = exchange.getRequestURI().getPath().equals("/classic") ? OPENMETRICS
                    : exchange.getRequestHeaders().getFirst("accept");
            MetricsScrape.Rendered r = scrape.render(registry.getPrometheusRegistry(), accept);
            exchange.getResponseHeaders().set("content-type", r.contentType());
            exchange.sendResponseHeaders(200, r.body().length);
            try (var out = exchange.getResponseBody()) {
                out.write(r.body());
            }
        });
        server.start();
        return new Pod(name, registry, ttft, server);
    }

    /** Polls an instant query (every 200 ms, at most 60 s) until its single value is {@code expected}. */
    private static void waitFor(PrometheusServer prom, String promql, double expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        double last = Double.NaN;
        while (System.nanoTime() < deadline) {
            last = scalar(prom, promql);
            if (last == expected) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError(promql + " stayed " + last + ", expected " + expected + "\n" + prom.log());
    }

    /** The value of a query with one result, NaN when it has none. */
    private static double scalar(PrometheusServer prom, String promql) {
        JsonArray result = PrometheusServer.result(prom.query(promql));
        if (result == null || result.isEmpty()) {
            return Double.NaN;
        }
        return Double.parseDouble(result.getJsonObject(0).getJsonArray("value").getString(1));
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }
}
