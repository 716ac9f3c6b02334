package dev.llmsidecar.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Real processes, started as users start them and stopped by their PID: llama-server (bin/real-engine builds it) for
 * the end-to-end suite, and the packaged sidecar ({@code java -jar sidecar/target/quarkus-app/...}) for that suite, the
 * sweep's {@code --sim}, the demo and the benchmark ({@link Sidecar#launch}).
 */
public final class Processes {

    public static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private Processes() {
    }

    /**
     * A started process whose output lines (stdout and stderr) are kept, the first {@value #KEPT_LINES}, and each
     * handed to an optional consumer as it comes (to echo or log them).
     */
    public static final class Running implements AutoCloseable {
        static final int KEPT_LINES = 100_000;
        public final Process process;
        public final List<String> lines = new CopyOnWriteArrayList<>();
        private final Thread reader;
        private Duration grace = Duration.ofSeconds(10);

        public Running(List<String> command, Map<String, String> env, String name) throws IOException {
            this(command, env, name, null);
        }

        /** @param each gets every output line on the reader thread (null: none) */
        public Running(List<String> command, Map<String, String> env, String name, Consumer<String> each)
                throws IOException {
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            pb.environment().putAll(env);
            process = pb.start();
            reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null;) {
                        if (lines.size() < KEPT_LINES) {
                            lines.add(line);
                        }
                        if (each != null) {
                            each.accept(line);
                        }
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

        /** Waits until the process has ended and its every output line is in {@link #lines}. */
        public boolean awaitEnd(Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                return false;
            }
            reader.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            return !reader.isAlive();
        }

        /** SIGTERM, then SIGKILL after the grace (10 s unless set). */
        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
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

    /**
     * The packaged sidecar, its ports read off its start lines ({@code llm-sidecar proxy listening on ...},
     * {@code Management interface listening on ...}): chosen by the OS unless {@link Launch#ports} fixes them.
     */
    public static final class Sidecar implements AutoCloseable {
        static final Pattern PROXY_LISTENING = Pattern.compile(
                "llm-sidecar proxy listening on http://127\\.0\\.0\\.1:(\\d+)");
        static final Pattern MANAGEMENT_LISTENING = Pattern.compile(
                "Management interface listening on http://127\\.0\\.0\\.1:(\\d+)");

        public final Running running;
        public final int proxyPort;
        public final int managementPort;
        private final Writer log;

        /** The tests' sidecar: {@code -Dsidecar.jar}, no JVM flags, engine scraped every 0.5 s. */
        public Sidecar(String upstream, Map<String, String> env) throws Exception {
            this(upstream, env, Map.of());
        }

        /** @param properties system properties for the sidecar ({@code -Dkey=value}), e.g. objectives by name */
        public Sidecar(String upstream, Map<String, String> env, Map<String, String> properties) throws Exception {
            this(launch(required("sidecar.jar")).upstream(upstream).env("SIDECAR_ENGINE_SCRAPE_INTERVAL", "PT0.5S")
                    .env(env).properties(properties));
        }

        private Sidecar(Launch l) throws Exception {
            if (!Files.isRegularFile(l.jar)) {
                throw new IllegalStateException("no sidecar jar at " + l.jar + ": build it (bin/build)");
            }
            Map<String, String> env = new HashMap<>(Map.of(
                    "QUARKUS_HTTP_HOST", "127.0.0.1", "QUARKUS_HTTP_PORT", Integer.toString(l.proxyPort),
                    "QUARKUS_MANAGEMENT_HOST", "127.0.0.1",
                    "QUARKUS_MANAGEMENT_PORT", Integer.toString(l.managementPort)));
            if (l.upstream != null) {
                env.put("SIDECAR_UPSTREAM_URL", l.upstream);
            }
            env.putAll(l.env);
            List<String> command = new ArrayList<>(List.of(javaBinary()));
            command.addAll(l.jvmOptions);
            l.properties.forEach((k, v) -> command.add("-D" + k + "=" + v));
            command.addAll(List.of("-jar", l.jar.toString()));
            log = l.log == null ? null : Files.newBufferedWriter(l.log, StandardCharsets.UTF_8);
            running = new Running(command, env, "sidecar", line -> {
                if (l.echo != null) {
                    l.echo.println(line);
                }
                if (log != null) {
                    try {
                        synchronized (log) {
                            log.write(line + "\n");
                            log.flush();
                        }
                    } catch (IOException e) {
                        // the log is a convenience: the lines are kept anyway
                    }
                }
            });
            running.grace = l.grace;
            try {
                if (l.proxyPort != 0 && l.managementPort != 0) {
                    // fixed ports: nothing to read off the log (a build before the Netty proxy printed other lines)
                    proxyPort = l.proxyPort;
                    managementPort = l.managementPort;
                } else {
                    proxyPort = Integer.parseInt(running.await(PROXY_LISTENING, Duration.ofSeconds(60)).group(1));
                    managementPort = Integer.parseInt(running.await(MANAGEMENT_LISTENING, Duration.ofSeconds(60))
                            .group(1));
                }
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }

        /** How to start a packaged sidecar: {@code launch(jar)....start()}. */
        public static Launch launch(Path jar) {
            return new Launch(jar);
        }

        public long pid() {
            return running.process.pid();
        }

        public String metrics() throws Exception {
            return get("http://127.0.0.1:" + managementPort + "/q/metrics").body();
        }

        /** Waits until {@code /q/health/ready} answers 200. */
        public void awaitReady(Duration timeout) throws Exception {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                try {
                    if (get("http://127.0.0.1:" + managementPort + "/q/health/ready").statusCode() == 200) {
                        return;
                    }
                } catch (IOException notYet) {
                    // not listening yet
                }
                if (!running.process.isAlive()) {
                    throw new IllegalStateException("the sidecar ended: " + String.join("\n", running.lines));
                }
                Thread.sleep(100);
            }
            throw new IllegalStateException("the sidecar did not become ready on port " + managementPort);
        }

        /** SIGTERM, then SIGKILL after the launch's grace. */
        @Override
        public void close() throws InterruptedException {
            running.close();
            if (log != null) {
                try {
                    log.close();
                } catch (IOException e) {
                    // nothing more to write
                }
            }
        }
    }

    /** What a packaged sidecar is started with; every setting optional. */
    public static final class Launch {
        final Path jar;
        List<String> jvmOptions = List.of();
        final Map<String, String> properties = new LinkedHashMap<>();
        final Map<String, String> env = new LinkedHashMap<>();
        String upstream;
        int proxyPort;
        int managementPort;
        PrintStream echo;
        Path log;
        Duration grace = Duration.ofSeconds(10);

        Launch(Path jar) {
            this.jar = jar;
        }

        /** JVM flags before {@code -jar}, e.g. {@link #shippedJvmOptions}. */
        public Launch jvmOptions(List<String> options) {
            jvmOptions = List.copyOf(options);
            return this;
        }

        public Launch property(String key, String value) {
            properties.put(key, value);
            return this;
        }

        public Launch properties(Map<String, String> more) {
            properties.putAll(more);
            return this;
        }

        public Launch env(String key, String value) {
            env.put(key, value);
            return this;
        }

        public Launch env(Map<String, String> more) {
            env.putAll(more);
            return this;
        }

        /** The engine's base URL ({@code SIDECAR_UPSTREAM_URL}). */
        public Launch upstream(String url) {
            upstream = url;
            return this;
        }

        /** Fixed loopback ports (0: the OS picks; the default). */
        public Launch ports(int proxy, int management) {
            proxyPort = proxy;
            managementPort = management;
            return this;
        }

        /** Prints every output line there as well (a terminal: the demo). */
        public Launch echo(PrintStream out) {
            echo = out;
            return this;
        }

        /** Writes every output line to this file as it comes. */
        public Launch log(Path file) {
            log = file;
            return this;
        }

        /** How long close() waits after SIGTERM before SIGKILL. */
        public Launch grace(Duration d) {
            grace = d;
            return this;
        }

        /** Starts it; returns once both ports are bound (fails after 60 s or when it exits). */
        public Sidecar start() throws Exception {
            return new Sidecar(this);
        }
    }

    /**
     * The flags of a Java launcher argument file ({@code java @file}): whitespace-separated, {@code #} to the end of
     * a line a comment.
     */
    public static List<String> jvmOptions(Path file) throws IOException {
        List<String> opts = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            int hash = line.indexOf('#');
            String text = (hash >= 0 ? line.substring(0, hash) : line).trim();
            if (!text.isEmpty()) {
                opts.addAll(List.of(text.split("\\s+")));
            }
        }
        return opts;
    }

    /**
     * The JVM flags the image ships with a packaged jar: {@code sidecar/src/main/jvm/jvm.options} next to
     * {@code sidecar/target/quarkus-app/quarkus-run.jar}; none when the jar is elsewhere.
     */
    public static List<String> shippedJvmOptions(Path jar) throws IOException {
        Path app = jar.toAbsolutePath().getParent();
        Path file = app == null || app.getParent() == null || app.getParent().getParent() == null ? null
                : app.getParent().getParent().resolve("src/main/jvm/jvm.options");
        return file != null && Files.isRegularFile(file) ? jvmOptions(file) : List.of();
    }

    /**
     * Nanoseconds the processes' live threads have spent on a CPU ({@code /proc/PID/task/TID/schedstat}; 0 where
     * there is no /proc); with {@code compilerOnly}, the JIT compiler's threads' only ({@code C1 CompilerThre...},
     * {@code C2 CompilerThre...}). HotSpot starts and ends compiler threads as its queue grows and drains, so the time
     * of one that ended between two readings is missed: a lower bound.
     */
    public static long onCpuNanos(List<Long> pids, boolean compilerOnly) {
        long sum = 0;
        for (long pid : pids) {
            try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
                for (Path t : (Iterable<Path>) tasks::iterator) {
                    try {
                        if (compilerOnly && !Files.readString(t.resolve("comm")).contains("CompilerThre")) {
                            continue;
                        }
                        String stat = Files.readString(t.resolve("schedstat")).trim();
                        sum += Long.parseLong(stat.substring(0, stat.indexOf(' ')));
                    } catch (IOException | RuntimeException e) {
                        // the thread ended
                    }
                }
            } catch (IOException e) {
                // process gone
            }
        }
        return sum;
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
