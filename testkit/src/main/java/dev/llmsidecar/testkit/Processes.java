package dev.llmsidecar.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The two real processes of the end-to-end suite, started as users start them and stopped by their PID:
 * llama-server (bin/real-engine builds it) and the packaged sidecar ({@code java -jar sidecar/target/quarkus-app/...}).
 */
public final class Processes {

    public static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private Processes() {
    }

    /** A started process whose output lines are kept (and echoed to the test log with a prefix). */
    public static final class Running implements AutoCloseable {
        public final Process process;
        public final List<String> lines = new CopyOnWriteArrayList<>();

        public Running(List<String> command, Map<String, String> env, String name) throws IOException {
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            pb.environment().putAll(env);
            process = pb.start();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null;) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    // the process ended
                }
            }, name + "-output");
            reader.setDaemon(true);
            reader.start();
        }

        /** Waits for an output line matching {@code pattern}; returns its match. */
        public Matcher await(Pattern pattern, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                for (String line : lines) {
                    Matcher m = pattern.matcher(line);
                    if (m.find()) {
                        return m;
                    }
                }
                if (!process.isAlive()) {
                    throw new IllegalStateException("process ended: " + String.join("\n", lines));
                }
                Thread.sleep(20);
            }
            throw new IllegalStateException("no line matching " + pattern + " in:\n" + String.join("\n", lines));
        }

        /** SIGTERM, then SIGKILL after 10 s. */
        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    public static Path required(String property) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank() || value.startsWith("${") || !Files.exists(Path.of(value))) {
            throw new IllegalStateException("system property " + property + " (" + value + ") names no file: run "
                    + "the suite with bin/test, which builds llama-server and its model with bin/real-engine");
        }
        return Path.of(value);
    }

    /** llama-server on a free loopback port with 4 slots and /metrics, waited for until healthy. */
    public static Running llamaServer(int port) throws Exception {
        List<String> command = List.of(required("llama.server").toString(), "-m", required("llama.model").toString(),
                "-a", "tiny", "--host", "127.0.0.1", "--port", Integer.toString(port), "--metrics", "--slots",
                "-c", "8192", "-np", "4", "-t", "1", "-tb", "1", "--seed", "7");
        Running r = new Running(command, Map.of(), "llama-server");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            try {
                if (get("http://127.0.0.1:" + port + "/health").statusCode() == 200) {
                    return r;
                }
            } catch (IOException notYet) {
                // loading
            }
            if (!r.process.isAlive()) {
                throw new IllegalStateException("llama-server ended: " + String.join("\n", r.lines));
            }
            Thread.sleep(50);
        }
        r.close();
        throw new IllegalStateException("llama-server never became healthy: " + String.join("\n", r.lines));
    }

    /** The packaged sidecar, its ports chosen by the OS and read off its start line. */
    public static final class Sidecar implements AutoCloseable {
        public final Running running;
        public final int proxyPort;
        public final int managementPort;

        public Sidecar(String upstream, Map<String, String> env) throws Exception {
            this(upstream, env, Map.of());
        }

        /** @param properties system properties for the sidecar ({@code -Dkey=value}), e.g. objectives by name */
        public Sidecar(String upstream, Map<String, String> env, Map<String, String> properties) throws Exception {
            Path jar = required("sidecar.jar");
            Map<String, String> all = new java.util.HashMap<>(Map.of(
                    "SIDECAR_UPSTREAM_URL", upstream,
                    "QUARKUS_HTTP_HOST", "127.0.0.1", "QUARKUS_HTTP_PORT", "0",
                    "QUARKUS_MANAGEMENT_HOST", "127.0.0.1", "QUARKUS_MANAGEMENT_PORT", "0",
                    "SIDECAR_ENGINE_SCRAPE_INTERVAL", "PT0.5S"));
            all.putAll(env);
            List<String> command = new ArrayList<>(List.of(javaBinary()));
            properties.forEach((k, v) -> command.add("-D" + k + "=" + v));
            command.addAll(List.of("-jar", jar.toString()));
            running = new Running(command, all, "sidecar");
            proxyPort = Integer.parseInt(running.await(Pattern.compile(
                    "llm-sidecar proxy listening on http://127\\.0\\.0\\.1:(\\d+)"), Duration.ofSeconds(60)).group(1));
            managementPort = Integer.parseInt(running.await(Pattern.compile(
                    "Management interface listening on http://127\\.0\\.0\\.1:(\\d+)"), Duration.ofSeconds(60)).group(1));
        }

        public long pid() {
            return running.process.pid();
        }

        public String metrics() throws Exception {
            return get("http://127.0.0.1:" + managementPort + "/q/metrics").body();
        }

        @Override
        public void close() throws InterruptedException {
            running.close();
        }
    }

    public static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    public static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    public static int freePort() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
