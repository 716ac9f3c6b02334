package dev.llmsidecar.ops;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A real Prometheus server (Debian's prometheus binary) on a loopback port, stopped by PID on close. Public for the
 * tools' demo test (DemoAlertsPrometheusIT).
 */
public final class PrometheusServer implements AutoCloseable {

    private final Process process;
    private final Path log;
    public final int port;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private PrometheusServer(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    /**
     * The configuration of a Prometheus that evaluates {@code rules} every second and scrapes one sidecar's
     * /q/metrics on {@code managementPort} every second, its series labelled {@code namespace} and {@code pod} as the
     * chart's ServiceMonitor labels them.
     */
    public static String scrapingSidecar(Object rules, int managementPort, String namespace, String pod) {
        return """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                  evaluation_interval: 1s
                rule_files:
                  - %s
                scrape_configs:
                  - job_name: llm-sidecar
                    metrics_path: /q/metrics
                    static_configs:
                      - targets: ['127.0.0.1:%d']
                        labels: {namespace: %s, pod: %s}
                """.formatted(rules, managementPort, namespace, pod);
    }

    /**
     * Debian's prometheus in a new temporary directory, evaluating the shipped rules (deploy/prometheus/rules.yml) and
     * scraping one sidecar every second ({@link #scrapingSidecar}); the tests that run a packaged sidecar use it.
     */
    public static PrometheusServer withShippedRules(int managementPort, String namespace, String pod)
            throws Exception {
        return start(OpsTools.require("prometheus", "apt-get install prometheus"),
                Files.createTempDirectory(pod + "-prometheus"),
                scrapingSidecar(OpsTools.ROOT.resolve("deploy/prometheus/rules.yml"), managementPort, namespace, pod));
    }

    /** Starts prometheus with {@code config} (YAML) in {@code dir}; waits (at most 60 s) until /-/ready. */
    public static PrometheusServer start(Path binary, Path dir, String config) throws Exception {
        return start(binary, dir, config, "exemplar-storage");
    }

    /** The same, with these feature flags (e.g. native-histograms). */
    public static PrometheusServer start(Path binary, Path dir, String config, String features) throws Exception {
        Path configFile = dir.resolve("prometheus.yml");
        Files.writeString(configFile, config);
        IllegalStateException last = null;
        for (int attempt = 1; attempt <= 3; attempt++) {
            int port = OpsTools.freePort();
            Path log = dir.resolve("prometheus-" + attempt + ".log");
            Process p = new ProcessBuilder(binary.toString(), "--config.file=" + configFile,
                    "--storage.tsdb.path=" + dir.resolve("data-" + attempt),
                    "--web.listen-address=127.0.0.1:" + port, "--enable-feature=" + features,
                    "--log.level=warn")
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            PrometheusServer server = new PrometheusServer(p, log, port);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline && p.isAlive()) {
                if (server.status("/-/ready") == 200) {
                    return server;
                }
                Thread.sleep(200);
            }
            server.close();
            last = new IllegalStateException("prometheus did not become ready on port " + port + ":\n"
                    + Files.readString(log));
        }
        throw last;
    }

    private int status(String path) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** GET an API path; returns the JSON answer (status and data; errors are returned, not thrown). */
    public JsonObject api(String pathAndQuery) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + pathAndQuery)).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new JsonObject(r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Instant query; the answer's {@code data.result} (the answer itself when the query failed). */
    public JsonObject query(String promql) {
        return api("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
    }

    public static JsonArray result(JsonObject answer) {
        JsonObject data = answer.getJsonObject("data");
        return data == null ? null : data.getJsonArray("result");
    }

    public String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return e.toString();
        }
    }

    @Override
    public void close() {
        process.destroy(); // SIGTERM to this PID only
        try {
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
