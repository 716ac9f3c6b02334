package dev.llmsidecar.bench;

import dev.llmsidecar.sim.EngineMain;
import dev.llmsidecar.testkit.Processes;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Orchestrates the benchmark: the simulated engine ({@link EngineMain}), nginx and the sidecar as separate processes
 * on loopback, a fresh load-client process ({@link BenchClient}) per phase, targets interleaved in every round. Writes
 * raw results to docs/bench/results.json and the report (docs/benchmarks.md, docs/bench/latency-vs-load.svg) via
 * {@link Report}.
 *
 * <p>The sidecar runs as it ships ({@link #SHIPPED}: every default, engine scrape and OpenTelemetry included, plus the
 * two SLO objectives and tenant labels), on the shipped JVM flags with a safepoint log added.
 *
 * <p>Usage: {@code Bench <repoRoot> <classpath> [--quick] [--baseline JAR [--baseline-jvm-options FILE]]
 * [--with-minimal] [--with-trace] [--soak MINUTES] [--report-only] [--trial] [--profile cpu|alloc|wall] [--syscalls]
 * [--profile-level N]}. With {@code --baseline}, a second sidecar build (another {@code quarkus-run.jar}, the same JVM
 * flags and configuration) is a further target, {@code baseline}, interleaved with the others in every round: each
 * figure of the report is then an A/B of two builds in the same run. {@code --with-minimal} adds the cheapest
 * configuration ({@link #MINIMAL}) as target {@code sidecar-min}; {@code --with-trace} the shipped one with the trace
 * recorder on ({@link #trace}) as target {@code sidecar-trace}, so one run shows CPU per event with the recorder on
 * and off. {@code --trial} measures the sidecar (and the
 * baseline) at 1000 and 2000 streams after a short warm-up and appends one line per build to
 * target/bench/trials.jsonl and docs/bench/runs/(day)-flag-trials.jsonl: the JVM-flag experiments of
 * docs/bench/jvm-flags.md. {@code --profile} and
 * {@code --syscalls} are {@link Profiling}'s.
 */
public final class Bench {

    /**
     * The engine: no slot limit, no role-only first chunk, no jitter, a 2-token non-streaming answer; each request
     * sets its own events, gap and TTFT ({@link BenchClient}).
     */
    static final String ENGINE_SPEC = "slots=1000000,role-chunk=false,jitter=0,output-tokens=2";

    /**
     * The configuration measured: the sidecar's defaults (engine scrape on at its default interval, the OpenTelemetry
     * SDK as it ships, which stays off without an OTLP endpoint) plus these, the objectives and tenant label a
     * deployment runs with.
     */
    static final Map<String, String> SHIPPED = ordered(
            "sidecar.slo.objectives.interactive.ttft", "PT0.5S",
            "sidecar.slo.objectives.interactive.tpot", "PT0.05S",
            "sidecar.slo.objectives.interactive.target", "0.99",
            "sidecar.slo.objectives.tail.itl", "PT0.1S",
            "sidecar.slo.objectives.tail.itl-quantile", "0.99",
            "sidecar.tenants.source", "api-key-hash");

    /** {@code --with-minimal}: the cheapest configuration (no engine scrape, no OpenTelemetry, no SLOs, no tenants). */
    static final Map<String, String> MINIMAL = ordered(
            "sidecar.engine.scrape-enabled", "false",
            "quarkus.otel.sdk.disabled", "true");

    /**
     * {@code --with-trace}: {@link #SHIPPED} plus the trace recorder on, into {@code dir} (emptied at the start), at
     * most 4 closed files of 64 MiB kept (the disk a full run takes stays bounded); its secret goes in the environment
     * ({@link #TRACE_SECRET}), as the chart passes it, not into the report's properties.
     */
    static Map<String, String> trace(Path dir) {
        Map<String, String> m = new LinkedHashMap<>(SHIPPED);
        m.put("sidecar.trace.enabled", "true");
        m.put("sidecar.trace.dir", dir.toString());
        m.put("sidecar.trace.max-files", "4");
        return java.util.Collections.unmodifiableMap(m);
    }

    /** The trace recorder's key for target sidecar-trace (a benchmark's: any 16 bytes or more do). */
    static final String TRACE_SECRET = "b3e1c5a7d9f2b4e6a8c0d1f3e5b7a9c2d4f6e8b0a1c3d5f7e9b2a4c6d8f0e1a3";

    /** The concurrency levels of a run, and the rounds of a full one. */
    static final int[] LEVELS = {1, 100, 1000, 2000};
    static final int FULL_ROUNDS = 2;

    /**
     * Every model name a full run sends (one per phase: the latency phases' by level and round, the bursts', the
     * non-streaming requests', and the unrecorded warm-up's), all 11 named to each sidecar build before anything is
     * measured, so that its memory holds every model's meters and windows at every level, as in a full run's end.
     */
    static List<String> models() {
        List<String> m = new ArrayList<>(List.of("bench-warmup", "bench-burst", "bench-plain"));
        for (int level : LEVELS) {
            for (int r = 0; r < FULL_ROUNDS; r++) {
                m.add(latencyModel(level, r));
            }
        }
        return m;
    }

    static String latencyModel(int level, int round) {
        return "bench-c" + level + "-r" + round;
    }

    final Path root;
    final Path work;
    final String cp;
    private final List<Process> started = new CopyOnWriteArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    /**
     * Peak RSS, threads and fds per JVM target ("sidecar", "baseline", "sidecar-min", "sidecar-trace"), sampled every
     * 200 ms.
     */
    private final Map<String, Peaks> peaks = new ConcurrentHashMap<>();
    /** Each sidecar build's safepoint log, by target name. */
    private final Map<String, JvmProbe.SafepointLog> safepoints = new ConcurrentHashMap<>();
    /** What each sidecar build was started with (and, after the warm-up, its event loops), by target name. */
    final JsonObject launched = new JsonObject();
    /**
     * {@code --rerun 1000,2000,burst,plain}: only these parts (latency levels, the burst and the non-streaming
     * phases) are run again, with the same warm-up, and replace theirs in docs/bench/results.json (a part spoiled by
     * other load on the machine); null: a whole run.
     */
    java.util.Set<String> rerun;
    /** A second sidecar build measured beside the current one ({@code --baseline}); null: none. */
    Path baselineJar;
    /** The baseline's own JVM flags file ({@code --baseline-jvm-options}: what its build shipped); null: ours. */
    Path baselineOptions;
    /** {@code --with-minimal}: the current build in {@link #MINIMAL} as a further target, "sidecar-min". */
    boolean withMinimal;
    /** {@code --with-trace}: the current build in {@link #trace} as a further target, "sidecar-trace". */
    boolean withTrace;
    /** Flags added to every sidecar build's in this mode ({@code --profile}: exact stacks between safepoints). */
    List<String> extraFlags = List.of();

    Bench(Path root, String cp) {
        this.root = root;
        this.work = root.resolve("target/bench");
        this.cp = cp;
    }

    /**
     * The sidecar's JVM flags: the argument file the image and the chart run ({@code sidecar/src/main/jvm/jvm.options}), so
     * the figures are those of what ships. SIDECAR_JVM_OPTS replaces it for experiments (docs/bench/jvm-flags.md).
     */
    static final String JVM_OPTIONS = "sidecar/src/main/jvm/jvm.options";

    public static void main(String[] args) throws Exception {
        Bench bench = new Bench(Path.of(args[0]).toAbsolutePath(), args[1]);
        boolean quick = false;
        int soakMinutes = 0;
        boolean reportOnly = false;
        boolean trial = false;
        String profile = null;
        boolean syscalls = false;
        boolean longOnly = false;
        boolean conversationsOnly = false;
        int profileLevel = 1000;
        for (int i = 2; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--trial" -> trial = true;
                case "--rerun" -> bench.rerun = new java.util.LinkedHashSet<>(List.of(args[++i].split(",")));
                case "--baseline" -> {
                    bench.baselineJar = Path.of(args[++i]).toAbsolutePath();
                    if (!Files.isRegularFile(bench.baselineJar)) {
                        throw new IllegalArgumentException("no baseline jar at " + bench.baselineJar);
                    }
                }
                case "--baseline-jvm-options" -> bench.baselineOptions = Path.of(args[++i]).toAbsolutePath();
                case "--with-minimal" -> bench.withMinimal = true;
                case "--with-trace" -> bench.withTrace = true;
                case "--long-streams" -> longOnly = true;
                case "--conversations" -> conversationsOnly = true;
                case "--soak" -> soakMinutes = Integer.parseInt(args[++i]);
                case "--report-only" -> reportOnly = true;
                case "--profile" -> profile = Profiling.event(args[++i]);
                case "--syscalls" -> syscalls = true;
                case "--profile-level" -> profileLevel = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Path root = bench.root;
        Files.createDirectories(bench.work);
        Files.createDirectories(root.resolve("docs/bench"));
        if (reportOnly) {
            Report.write(root, new JsonObject(Files.readString(root.resolve("docs/bench/results.json"))));
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(bench::stopAll));
        if (soakMinutes > 0) {
            Soak.run(bench, soakMinutes);
            return;
        }
        if (trial) {
            bench.trial();
            return;
        }
        if (longOnly) {
            bench.longStreamsOnly(quick);
            return;
        }
        if (conversationsOnly) {
            bench.conversationsOnly(quick);
            return;
        }
        if (profile != null || syscalls) {
            Profiling.run(bench, profile, syscalls, profileLevel, quick);
            return;
        }
        JsonObject results = bench.run(quick);
        // this run's own results, before a rerun's are merged into the full run's: each run keeps its file
        keepRun(root, results.getString("runFile"), results);
        if (bench.rerun != null) {
            results = merge(new JsonObject(Files.readString(root.resolve("docs/bench/results.json"))), results,
                    bench.rerun);
        }
        Files.writeString(root.resolve("docs/bench/results.json"), results.encodePrettily());
        Report.write(root, results);
        System.out.println("wrote docs/benchmarks.md, docs/bench/latency-vs-load.svg, docs/bench/results.json, "
                + "docs/bench/" + results.getString("runFile"));
    }

    /**
     * Keeps a run's raw results in a file of its own, named by its start and kind, which no later run overwrites:
     * every figure docs quote names the file it came from (docs/bench/runs/, checked by BenchRunsCitedTest).
     *
     * @param name its path relative to docs/bench ({@link #runFile}: {@code runs/2026-11-29T0812Z-full.json})
     */
    static void keepRun(Path root, String name, JsonObject results) throws IOException {
        Files.createDirectories(root.resolve("docs/bench/runs"));
        Files.writeString(root.resolve("docs/bench/" + name), results.encodePrettily());
    }

    /** The file the flag trials of {@code day} are kept in, relative to docs/bench. */
    static String trialsFile(Instant day) {
        return "runs/" + day.toString().substring(0, 10) + "-flag-trials.jsonl";
    }

    /** The file a run started at {@code started} keeps its results in ({@link #keepRun}), relative to docs/bench. */
    static String runFile(String started, String kind) {
        return "runs/" + java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HHmm'Z'", Locale.ROOT)
                .withZone(java.time.ZoneOffset.UTC).format(Instant.parse(started)) + "-" + kind + ".json";
    }

    JsonObject run(boolean quick) throws Exception {
        int seconds = quick ? 5 : 15;
        int rounds = quick ? 1 : FULL_ROUNDS;
        // C2 compiles for minutes under this load (hundreds of methods still after 90 s at 1000 streams): a short
        // warm-up measures the compiler, not the steady state a sidecar lives in
        int warm = quick ? 5 : 30;
        int idleSeconds = quick ? 10 : 60;
        int[] levels = java.util.Arrays.stream(LEVELS)
                .filter(l -> rerun == null || rerun.contains(Integer.toString(l))).toArray();
        int events = 30;
        int intervalMs = 100;
        int ttftMs = 10;
        String started = Instant.now().toString();
        String runFile = runFile(started, rerun != null ? "rerun" : quick ? "quick"
                : baselineJar != null ? "full-baseline" : "full");
        JsonObject results = new JsonObject().put("started", started).put("runFile", runFile).put("quick", quick)
                .put("machine", machine())
                .put("settings", new JsonObject().put("secondsPerPhase", seconds).put("rounds", rounds)
                        .put("eventsPerStream", events).put("intervalMs", intervalMs).put("ttftMs", ttftMs)
                        .put("idleSeconds", idleSeconds).put("models", new JsonArray(models()))
                        .put("sidecarJvm", sidecarOptsDescription())
                        .put("sidecarJar", root.resolve(CURRENT_JAR).toString())
                        .put("baselineJar", baselineJar == null ? null : baselineJar.toString())
                        .put("baselineJvm", baselineOptions == null ? null
                                : String.join(" ", Processes.jvmOptions(baselineOptions)) + " (from " + baselineOptions
                                        + ")")
                        .put("nginxWorkers", NGINX_WORKERS));
        long t0 = System.nanoTime();

        Endpoint engine = startEngine();
        Endpoint nginx = startNginx(engine.port);
        List<Endpoint> builds = startBuilds(engine.port);
        ScheduledExecutorService sampler = startSampler();
        Thread.sleep(1000);
        JsonObject memory = new JsonObject();
        memoryAt(memory, builds, "idleAfterStart");
        List<Endpoint> targets = new ArrayList<>(List.of(new Endpoint("direct", engine.port, engine.pids, -1), nginx));
        targets.addAll(builds);

        warmUp(targets, warm, engine);
        for (Endpoint b : builds) {
            primeModels(b);
            readEventLoops(b);
            launched.getJsonObject(b.name).put("scrapeAllocatedBytes", scrapeAllocation(b));
        }
        results.getJsonObject("settings").put("sidecars", launched);
        Thread.sleep(500);
        memoryAt(memory, builds, "idleAfterWarmup");

        // no traffic: what each proxy costs on its own (the sidecar still scrapes the engine). Measured from 75 s after
        // the last request: the warm-up's pooled upstream connections retire (keep-alive 4 s), the live page's
        // shortest window (1 min) has emptied, and the compiler's queue from the warm-up has drained; the first
        // minute after traffic is the tail of the traffic, not idle
        Thread.sleep(quick ? 2000 : 75_000);
        results.put("idle", idle(targets, idleSeconds));
        System.out.printf(Locale.ROOT, "[%4.0fs] idle %d s: %s%n", (System.nanoTime() - t0) / 1e9, idleSeconds,
                results.getJsonObject("idle").stream().map(e -> String.format(Locale.ROOT, "%s %.2f millicores",
                        e.getKey(), ((JsonObject) e.getValue()).getDouble("millicores"))).toList());

        JsonArray latency = new JsonArray();
        for (int level : levels) {
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < targets.size(); k++) {
                    Endpoint t = targets.get((k + r + level) % targets.size());
                    // each build names the same models: the sidecar's windows hold only its own streams either way
                    String model = latencyModel(level, r);
                    if (t.jvm()) {
                        peaks.get(t.name).reset();
                    }
                    ScrapeProbe probe = t.jvm() && level >= 1000 ? new ScrapeProbe(t.mgmtPort) : null;
                    // short streams at low concurrency (enough TTFT samples), longer ones at high concurrency
                    // (a realistic request rate: 30 tokens per stream)
                    int ev = level <= 100 ? 10 : events;
                    int gap = level <= 1 ? 20 : intervalMs;
                    JsonObject p = phase(t, "stream", level, seconds, ev, gap, ttftMs, model, engine);
                    p.put("level", level).put("round", r).put("events", ev).put("intervalMs", gap);
                    if (probe != null) {
                        p.put("scrape", probe.stop());
                    }
                    if (t.jvm()) {
                        p.put("peak", peaks.get(t.name).get());
                        p.put("sidecarView", liveStats(t.mgmtPort, model));
                    } else if (t.name.equals("nginx")) {
                        p.put("nginxRssKb", rssKb(t.pids));
                    }
                    latency.add(p);
                    System.out.printf(Locale.ROOT, "[%4.0fs] c=%-5d %-11s ttft+ p50 %.0f p99 %.0f us, chunk p50 %.0f p99 %.0f us, ev/s %.0f, err %d%s%n",
                            (System.nanoTime() - t0) / 1e9, level, t.name,
                            q(p, "ttftOverhead", "p50"), q(p, "ttftOverhead", "p99"), q(p, "chunkDelay", "p50"),
                            q(p, "chunkDelay", "p99"), p.getDouble("eventsPerSec", 0.0), p.getLong("errors", 0L),
                            jvmLine(p));
                }
            }
        }
        memoryAt(memory, builds, "idleAfterLoad");
        results.put("latency", latency);

        if (rerun == null || rerun.contains("burst")) {
        results.put("throughput", interleaved(targets, rounds, "burst", 16, seconds, 5000, engine,
                (t, p) -> String.format(Locale.ROOT, "burst %-11s %.0f events/s, %.2f cpu-s proxy%s", t.name,
                        p.getDouble("eventsPerSec", 0.0), p.getDouble("proxyCpuSeconds", 0.0), jvmLine(p))));
        }
        if (rerun == null || rerun.contains("plain")) {
        results.put("plain", interleaved(targets, rounds, "plain", 32, seconds, 0, engine,
                (t, p) -> String.format(Locale.ROOT, "plain %-11s %.0f req/s p99 %.0f us%s", t.name,
                        p.getDouble("requestsPerSec", 0.0), q(p, "plainLatency", "p99"), jvmLine(p))));
        }
        if (rerun == null || rerun.contains("long")) {
            results.put("longStreams", longStreams(targets, engine, quick));
            LongStreams.write(root, results.getJsonArray("longStreams"), quick, runFile);
        }
        if (rerun == null || rerun.contains("conv")) {
            // the sidecar with sidecar.conversations on joins for this phase only, beside the one as it ships
            Endpoint conv = startSidecar(engine.port, root.resolve(CURRENT_JAR), "sidecar-conv");
            List<Endpoint> convTargets = new ArrayList<>(targets.stream().filter(t -> !t.name.equals("baseline")
                    && !t.name.startsWith("sidecar-")).toList());
            convTargets.add(conv);
            phase(conv, "stream", 100, warm, 30, 20, 10, "bench-warmup", engine);
            results.put("conversations", conversations(convTargets, engine, quick));
            ConversationBench.write(root, results.getJsonArray("conversations"), quick, runFile);
            stop(conv);
        }
        memoryAt(memory, builds, "end");
        results.put("memory", memory);
        results.put("elapsedSeconds", (System.nanoTime() - t0) / 1e9);
        try {
            results.getJsonObject("machine").put("loadAvgAtEnd", Files.readString(Path.of("/proc/loadavg")).trim());
        } catch (IOException e) {
            // not Linux
        }
        sampler.shutdownNow();
        stopAll();
        return results;
    }

    /**
     * The sidecar builds of this run: the current one, and the baseline, the minimal configuration and the one with the
     * trace recorder on if asked.
     */
    List<Endpoint> startBuilds(int enginePort) throws Exception {
        List<Endpoint> builds = new ArrayList<>(List.of(startSidecar(enginePort)));
        if (baselineJar != null) {
            builds.add(startSidecar(enginePort, baselineJar, "baseline"));
        }
        if (withMinimal) {
            builds.add(startSidecar(enginePort, root.resolve(CURRENT_JAR), "sidecar-min"));
        }
        if (withTrace) {
            builds.add(startSidecar(enginePort, root.resolve(CURRENT_JAR), "sidecar-trace"));
        }
        return builds;
    }

    /**
     * Warm-up: the JIT of every path (the client is a fresh JVM each phase, so it warms itself): streams for
     * {@code warm} seconds, bursts for half as long, non-streaming requests for a third.
     */
    void warmUp(List<Endpoint> targets, int warm, Endpoint engine) throws Exception {
        for (Endpoint t : targets) {
            phase(t, "stream", 100, warm, 30, 20, 10, "bench-warmup", engine);
            phase(t, "burst", 16, Math.max(2, warm / 2), 2000, 0, 0, "bench-warmup", engine);
            phase(t, "plain", 32, Math.max(2, warm / 3), 0, 0, 0, "bench-warmup", engine);
        }
    }

    /** RSS, threads and fds of every build now: the current build's at the top of {@code memory}, the others' under their name. */
    static void memoryAt(JsonObject memory, List<Endpoint> builds, String when) {
        for (Endpoint b : builds) {
            JsonObject into = b.name.equals("sidecar") ? memory : memory.getJsonObject(b.name);
            if (into == null) {
                into = new JsonObject();
                memory.put(b.name, into);
            }
            into.put(when, procState(b.pids.get(0)));
        }
    }

    /** The allocation and stopped time of a sidecar build's phase, for the progress line. */
    static String jvmLine(JsonObject p) {
        JsonObject j = p.getJsonObject("jvm");
        if (j == null) {
            return "";
        }
        JsonObject sp = j.getJsonObject("safepoints", new JsonObject());
        return String.format(Locale.ROOT, ", %.0f MB allocated, stopped %.0f ms (%.2f %%), full GCs %.0f",
                j.getDouble("allocatedBytes", 0.0) / 1e6, sp.getDouble("totalMillis", Double.NaN),
                sp.getDouble("pausedPercent", Double.NaN),
                p.getJsonObject("gc", new JsonObject()).getDouble("majorCount", 0.0));
    }

    /**
     * One non-streaming request per model name of a full run ({@link #models}) to a sidecar build, so that it holds
     * all of them from the first measured phase on. A response that does not stream records no TTFT and no ITL: the
     * windows each latency phase is compared with stay its own.
     */
    void primeModels(Endpoint b) throws Exception {
        for (String model : models()) {
            var res = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + b.port + "/v1/chat/completions"))
                    .timeout(Duration.ofSeconds(10)).header("content-type", "application/json")
                    .header("authorization", BenchClient.API_KEY).header("x-sim-output-tokens", "2")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + model
                            + "\",\"stream\":false,\"messages\":[{\"role\":\"user\",\"content\":\"benchmark\"}]}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            if (res.statusCode() != 200) {
                throw new IllegalStateException(b.name + " answered " + res.statusCode() + " for model " + model);
            }
        }
    }

    /**
     * The event loops a build runs on, read off its threads after the warm-up, beside what Quarkus's default gives
     * for the heap and cores it sees (the chart's pod has no CPU limit, so the JVM sees the node's cores).
     */
    void readEventLoops(Endpoint b) {
        JsonObject c = JvmProbe.counters(b.mgmtPort);
        int cores = Runtime.getRuntime().availableProcessors();
        int threads = JvmProbe.eventLoopThreads(b.pids.get(0));
        int rule = JvmProbe.quarkusDefaultEventLoops(c.getDouble("heapMaxBytes"), cores);
        launched.getJsonObject(b.name).put("eventLoops", new JsonObject().put("threads", threads)
                .put("quarkusDefault", rule).put("heapMaxMb", c.getDouble("heapMaxBytes") / (1024 * 1024))
                .put("cores", cores));
        System.out.printf(Locale.ROOT, "%-11s %d event-loop threads (Quarkus's default for %.0f MB of heap and %d cores: %d)%n",
                b.name, threads, c.getDouble("heapMaxBytes") / (1024 * 1024), cores, rule);
    }

    /**
     * What one scrape of a build's /q/metrics allocates in it, the median of three scrapes back to back: between two
     * readings of the counters lies one whole scrape (the rest of the first after it read them, the second up to the
     * point where it reads them), so this is the benchmark's own share of every phase's allocation.
     */
    static double scrapeAllocation(Endpoint b) {
        double[] d = new double[3];
        JsonObject prev = JvmProbe.counters(b.mgmtPort);
        for (int i = 0; i < d.length; i++) {
            JsonObject next = JvmProbe.counters(b.mgmtPort);
            d[i] = JvmProbe.delta(prev, next, null).getDouble("allocatedBytes");
            prev = next;
        }
        java.util.Arrays.sort(d);
        return d[1];
    }

    /**
     * No traffic for {@code seconds}: the CPU each proxy process uses on its own, in millicores, from
     * {@code /proc/PID/stat} (utime + stime, 10 ms ticks) and, finer, from the threads' {@code schedstat}
     * (nanoseconds on a CPU); for the sidecar builds also what their JVM did meanwhile (engine scrapes, allocation,
     * safepoints).
     */
    JsonObject idle(List<Endpoint> targets, int seconds) throws Exception {
        List<Endpoint> measured = targets.stream().filter(t -> !t.name.equals("direct")).toList();
        Map<String, JsonObject> jvmBefore = new LinkedHashMap<>();
        for (Endpoint t : measured) {
            if (t.jvm()) {
                jvmBefore.put(t.name, JvmProbe.counters(t.mgmtPort));
            }
        }
        long[] ticks = new long[measured.size()];
        long[] onCpu = new long[measured.size()];
        for (int i = 0; i < measured.size(); i++) {
            ticks[i] = cpuTicks(measured.get(i).pids);
            onCpu[i] = Processes.onCpuNanos(measured.get(i).pids, false);
        }
        long s = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        double elapsed = (System.nanoTime() - s) / 1e9;
        JsonObject out = new JsonObject();
        for (int i = 0; i < measured.size(); i++) {
            Endpoint t = measured.get(i);
            double cpu = (cpuTicks(t.pids) - ticks[i]) / 100.0;
            double sched = (Processes.onCpuNanos(t.pids, false) - onCpu[i]) / 1e9;
            JsonObject r = new JsonObject().put("seconds", elapsed).put("cpuSeconds", cpu)
                    .put("millicores", cpu / elapsed * 1000).put("onCpuMillicores", sched / elapsed * 1000);
            if (t.jvm()) {
                JsonObject d = JvmProbe.delta(jvmBefore.get(t.name), JvmProbe.counters(t.mgmtPort),
                        safepoints.get(t.name));
                r.put("gc", d.remove("gc")).put("jvm", d);
            }
            out.put(t.name, r);
        }
        return out;
    }

    /**
     * JVM-flag experiments (docs/bench/jvm-flags.md): the engine and the sidecar (and the baseline, one after the
     * other), the 11 models of a full run primed, a short warm-up (20 s of 100 streams, 8 s of bursts, 5 s of non-streaming requests), then 1000 and 2000
     * paced streams (30 events 100 ms apart) for TRIAL_SECONDS (15) each. Per build and level: peak RSS, CPU per 1k
     * events/s, chunk delay p99 and collector pauses; one JSON line per build in target/bench/trials.jsonl, named by
     * TRIAL_LABEL. Flags from SIDECAR_JVM_OPTS (or jvm.options), environment from SIDECAR_ENV.
     */
    void trial() throws Exception {
        int seconds = Integer.parseInt(System.getenv().getOrDefault("TRIAL_SECONDS", "15"));
        String label = System.getenv().getOrDefault("TRIAL_LABEL", "");
        Endpoint engine = startEngine();
        List<Endpoint> builds = startBuilds(engine.port);
        ScheduledExecutorService sampler = startSampler();
        Thread.sleep(1000);
        for (Endpoint b : builds) {
            long pid = b.pids.get(0);
            JsonObject line = new JsonObject().put("label", label).put("build", b.name)
                    .put("jvm", sidecarOptsDescription()).put("env", sidecarEnv().toString())
                    .put("at", Instant.now().toString()).put("loadAvg", machine().getString("loadAvgAtStart"))
                    .put("idleAfterStart", procState(pid));
            primeModels(b); // the 11 models of a full run, as the RSS and pause goals assume
            phase(b, "stream", 100, 20, 30, 20, 10, "bench-warmup", engine);
            phase(b, "burst", 16, 8, 2000, 0, 0, "bench-warmup", engine);
            phase(b, "plain", 32, 5, 0, 0, 0, "bench-warmup", engine);
            Thread.sleep(500);
            line.put("idleAfterWarmup", procState(pid));
            StringBuilder out = new StringBuilder(String.format(Locale.ROOT, "trial %s [%s] idle %.0f MB",
                    label, b.name, procState(pid).getLong("rssKb", 0L) / 1024.0));
            for (int level : new int[] {1000, 2000}) {
                peaks.get(b.name).reset();
                JsonObject p = phase(b, "stream", level, seconds, 30, 100, 10, "trial-c" + level, engine);
                JsonObject gc = p.getJsonObject("gc", new JsonObject());
                double eps = p.getDouble("eventsPerSec", 0.0);
                double cores = p.getDouble("proxyCpuSeconds", 0.0) / p.getDouble("seconds", 1.0);
                JsonObject r = new JsonObject().put("peak", peaks.get(b.name).get()).put("eventsPerSec", eps)
                        .put("cores", cores).put("millicoresPer1kEvents", cores * 1000 / (eps / 1000))
                        .put("chunkP99us", q(p, "chunkDelay", "p99")).put("errors", p.getLong("errors", 0L))
                        .put("gc", gc).put("stealPercent", p.getDouble("stealPercent"))
                        .put("jvm", p.getJsonObject("jvm"));
                line.put("c" + level, r);
                out.append(String.format(Locale.ROOT, " | c=%d peak %.0f MB, %.1f mc/1k ev/s, chunk p99 %.1f ms, "
                        + "young %.0f full %.0f, err %d", level, r.getJsonObject("peak").getLong("rssKb") / 1024.0,
                        r.getDouble("millicoresPer1kEvents"), r.getDouble("chunkP99us") / 1000,
                        gc.getDouble("minorCount", 0.0), gc.getDouble("majorCount", 0.0), r.getLong("errors")))
                        .append(jvmLine(p));
            }
            Thread.sleep(1000);
            line.put("idleAfterLoad", procState(pid));
            Files.writeString(work.resolve("trials.jsonl"), line.encode() + "\n", StandardCharsets.UTF_8,
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
            // and kept: one file a day of trials, which docs/bench/jvm-flags.md cites
            Path kept = root.resolve("docs/bench/" + trialsFile(Instant.now()));
            Files.createDirectories(kept.getParent());
            Files.writeString(kept, line.encode() + "\n", StandardCharsets.UTF_8,
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
            System.out.println(out.append(String.format(Locale.ROOT, " | after %.0f MB",
                    line.getJsonObject("idleAfterLoad").getLong("rssKb", 0L) / 1024.0)));
        }
        sampler.shutdownNow();
        stopAll();
    }


    /**
     * A full run's results with the parts of a rerun replaced: latency phases of the rerun levels, the burst and the
     * non-streaming phases if rerun; the rest (memory at idle, the other levels) stays the full run's. The rerun is
     * recorded under "reruns" (parts, start, load average, settings) so the report can say which rows are from it.
     */
    static JsonObject merge(JsonObject full, JsonObject again, java.util.Set<String> parts) {
        JsonArray latency = new JsonArray();
        full.getJsonArray("latency", new JsonArray()).forEach(p -> {
            if (!parts.contains(String.valueOf(((JsonObject) p).getInteger("level")))) {
                latency.add(p);
            }
        });
        again.getJsonArray("latency", new JsonArray()).forEach(latency::add);
        JsonObject out = full.copy().put("latency", latency);
        if (parts.contains("burst")) {
            out.put("throughput", again.getJsonArray("throughput"));
        }
        if (parts.contains("plain")) {
            out.put("plain", again.getJsonArray("plain"));
        }
        JsonArray reruns = full.getJsonArray("reruns", new JsonArray()).copy();
        reruns.add(new JsonObject().put("parts", String.join(",", parts)).put("started", again.getString("started"))
                .put("runFile", again.getString("runFile"))
                .put("loadAvgAtStart", again.getJsonObject("machine").getString("loadAvgAtStart"))
                .put("elapsedSeconds", again.getDouble("elapsedSeconds")).put("settings", again.getJsonObject("settings")));
        return out.put("reruns", reruns);
    }

    static double q(JsonObject p, String metric, String quantile) {
        JsonObject m = p.getJsonObject(metric);
        return m == null ? Double.NaN : m.getDouble(quantile, Double.NaN);
    }

    // ---------------------------------------------------------------------------------------------- processes

    /** A target; {@code mgmtPort} ≥ 0 for a sidecar build (the current one or the baseline), -1 otherwise. */
    record Endpoint(String name, int port, List<Long> pids, int mgmtPort) {
        /** A sidecar build: RSS, collector pauses and its own /q/llm view are recorded. */
        boolean jvm() {
            return mgmtPort >= 0;
        }
    }

    /** The jar of the current build, relative to the repository root. */
    static final String CURRENT_JAR = "sidecar/target/quarkus-app/quarkus-run.jar";

    /** Samples the peaks of every sidecar build started so far, every 200 ms. */
    ScheduledExecutorService startSampler() {
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sampler");
            t.setDaemon(true);
            return t;
        });
        sampler.scheduleAtFixedRate(() -> peaks.values().forEach(Peaks::sample), 200, 200, TimeUnit.MILLISECONDS);
        return sampler;
    }

    /** The environment the image gives the sidecar's JVM ({@code jvm.env} beside jvm.options). */
    static final String JVM_ENV = "sidecar/src/main/jvm/jvm.env";

    /**
     * Environment for the sidecar builds: the image's ({@link #JVM_ENV}: {@code NAME=${NAME:-default}} lines, the
     * default taken), then SIDECAR_ENV, {@code KEY=VALUE} separated by spaces, which adds or replaces (experiments).
     */
    java.util.Map<String, String> sidecarEnv() throws IOException {
        java.util.Map<String, String> env = new java.util.LinkedHashMap<>();
        for (String line : Files.readAllLines(root.resolve(JVM_ENV))) {
            String text = line.replaceAll("#.*", "").trim();
            int eq = text.indexOf('=');
            if (eq > 0) {
                env.put(text.substring(0, eq), text.substring(eq + 1).replaceAll("^\\$\\{[A-Za-z_0-9]+:-(.*)}$", "$1"));
            }
        }
        String v = System.getenv("SIDECAR_ENV");
        if (v != null && !v.isBlank()) {
            for (String kv : v.trim().split("\\s+")) {
                int eq = kv.indexOf('=');
                env.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        return env;
    }

    /** The sidecar's JVM flags as separate arguments. */
    List<String> sidecarOpts() throws IOException {
        String env = System.getenv("SIDECAR_JVM_OPTS");
        if (env != null && !env.isBlank()) {
            return List.of(env.trim().split("\\s+"));
        }
        return Processes.jvmOptions(root.resolve(JVM_OPTIONS));
    }

    /** What the report says about the flags: which file (or override) and the flags themselves. */
    String sidecarOptsDescription() throws IOException {
        String env = System.getenv("SIDECAR_JVM_OPTS");
        String source = env != null && !env.isBlank() ? "SIDECAR_JVM_OPTS" : JVM_OPTIONS;
        return String.join(" ", sidecarOpts()) + " (from " + source + "); environment " + sidecarEnv() + " (from "
                + JVM_ENV + (System.getenv("SIDECAR_ENV") == null ? "" : " and SIDECAR_ENV") + ")";
    }

    Process spawn(List<String> command, Path log) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        if (log != null) {
            pb.redirectOutput(log.toFile());
        }
        Process p = pb.start();
        started.add(p);
        return p;
    }

    Endpoint startEngine() throws Exception {
        Process p = new ProcessBuilder("java", "-Xmx256m", "-XX:+UseParallelGC", "-cp", cp, EngineMain.class.getName(), "0",
                "2", ENGINE_SPEC).redirectError(work.resolve("engine.err").toFile()).start();
        started.add(p);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (line == null || !line.startsWith("PORT ")) {
            throw new IllegalStateException("engine did not start: " + line);
        }
        int port = Integer.parseInt(line.substring(5).trim());
        System.out.println("engine   pid " + p.pid() + " port " + port);
        return new Endpoint("engine", port, List.of(p.pid()), -1);
    }

    /** nginx's workers: one per core of this machine, as the sidecar's event loops on it. */
    static final int NGINX_WORKERS = 2;

    Endpoint startNginx(int enginePort) throws Exception {
        Path dir = work.resolve("nginx");
        Files.createDirectories(dir.resolve("tmp"));
        int port = Processes.freePort();
        String conf = """
                daemon off;
                master_process on;
                worker_processes %4$d;
                worker_rlimit_nofile 20000;
                pid %1$s/nginx.pid;
                error_log %1$s/error.log warn;
                events { worker_connections 8192; }
                http {
                  access_log off;
                  client_body_temp_path %1$s/tmp/body;
                  proxy_temp_path %1$s/tmp/proxy;
                  fastcgi_temp_path %1$s/tmp/fastcgi;
                  uwsgi_temp_path %1$s/tmp/uwsgi;
                  scgi_temp_path %1$s/tmp/scgi;
                  upstream engine { server 127.0.0.1:%2$d; keepalive 1024; }
                  server {
                    listen 127.0.0.1:%3$d backlog=4096;
                    location / {
                      proxy_pass http://engine;
                      proxy_http_version 1.1;
                      proxy_set_header Connection "";
                      proxy_buffering off;
                      proxy_cache off;
                      proxy_request_buffering off;
                      proxy_read_timeout 300s;
                    }
                  }
                }
                """.formatted(dir, enginePort, port, NGINX_WORKERS);
        Files.writeString(dir.resolve("nginx.conf"), conf);
        Process p = spawn(List.of("nginx", "-c", dir.resolve("nginx.conf").toString(), "-p", dir.toString()),
                work.resolve("nginx.log"));
        waitForPort(port, 20);
        Thread.sleep(300);
        List<Long> pids = new ArrayList<>();
        pids.add(p.pid());
        pids.addAll(children(p.pid()));
        System.out.println("nginx    pids " + pids + " port " + port);
        return new Endpoint("nginx", port, pids, -1);
    }

    Endpoint startSidecar(int enginePort) throws Exception {
        return startSidecar(enginePort, root.resolve(CURRENT_JAR), "sidecar");
    }

    /**
     * A sidecar build ({@code name}: "sidecar", "baseline", "sidecar-min" or "sidecar-trace"), in {@link #SHIPPED}
     * whichever the jar ("sidecar-min": {@link #MINIMAL}; "sidecar-trace": {@link #trace}), on the shipped flags unless the baseline has its own
     * ({@code --baseline-jvm-options}), with a safepoint log added (logging only) and this mode's {@link #extraFlags}.
     */
    Endpoint startSidecar(int enginePort, Path jar, String name) throws Exception {
        List<String> flags = new ArrayList<>("baseline".equals(name) && baselineOptions != null
                ? Processes.jvmOptions(baselineOptions) : sidecarOpts());
        Path safepointLog = work.resolve(name + "-safepoint.log");
        Files.deleteIfExists(safepointLog);
        List<String> added = new ArrayList<>(List.of(JvmProbe.safepointFlag(safepointLog)));
        added.addAll(extraFlags);
        flags.addAll(added);
        Map<String, String> properties = configuration(name);
        Processes.Launch launch = Processes.Sidecar.launch(jar);
        if ("sidecar-trace".equals(name)) {
            Path dir = work.resolve("sidecar-trace-files");
            deleteTree(dir);
            properties = trace(dir);
            launch.env("SIDECAR_TRACE_SECRET", TRACE_SECRET);
        }
        String ports = "0 (the OS picks; read off the start lines)";
        if ("baseline".equals(name)) {
            launch.ports(Processes.freePort(), Processes.freePort()); // any build: ready when its health says so
            ports = "free ports chosen before the start";
        }
        Processes.Sidecar s = launch.jvmOptions(flags).env(sidecarEnv()).upstream("http://127.0.0.1:" + enginePort)
                .properties(properties).log(work.resolve(name + ".log")).start();
        started.add(s.running.process);
        s.awaitReady(Duration.ofSeconds(60));
        System.out.printf(Locale.ROOT, "%-11s pid %d port %d management %d (%s)%n", name, s.pid(), s.proxyPort,
                s.managementPort, jar);
        launched.put(name, new JsonObject().put("jar", jar.toString()).put("properties", new JsonObject(
                new LinkedHashMap<>(properties))).put("addedJvmFlags", String.join(" ", added))
                .put("launch", "QUARKUS_HTTP_HOST=127.0.0.1, QUARKUS_MANAGEMENT_HOST=127.0.0.1, QUARKUS_HTTP_PORT and "
                        + "QUARKUS_MANAGEMENT_PORT " + ports + ", SIDECAR_UPSTREAM_URL=http://127.0.0.1:<engine port>"
                        + inheritedSettings())
                .put("otel", otelLines(s.running.lines)));
        safepoints.put(name, new JvmProbe.SafepointLog(safepointLog));
        Peaks p = new Peaks();
        p.watch(s.pid());
        peaks.put(name, p);
        return new Endpoint(name, s.proxyPort, List.of(s.pid()), s.managementPort);
    }

    /**
     * Settings the sidecar would take from the environment bench/run was started in (it inherits it): the report must
     * say so, they change the configuration measured.
     */
    static String inheritedSettings() {
        List<String> names = System.getenv().keySet().stream()
                .filter(k -> k.startsWith("OTEL_") || k.startsWith("SIDECAR_") || k.startsWith("QUARKUS_"))
                .filter(k -> !k.equals("SIDECAR_JVM_OPTS") && !k.equals("SIDECAR_ENV")).sorted().toList();
        return names.isEmpty() ? "; nothing else from the environment" : "; also inherited from the environment: "
                + String.join(", ", names);
    }

    /** Deletes a directory and what it holds, if it exists (the trace target's files of an earlier run). */
    static void deleteTree(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (var walk = Files.walk(dir)) {
                for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    /**
     * The configuration a build runs in: {@link #MINIMAL} for "sidecar-min", {@link #SHIPPED} otherwise ("sidecar-trace"
     * adds the recorder to it where it is started, with its directory).
     */
    static Map<String, String> configuration(String name) {
        return "sidecar-min".equals(name) ? MINIMAL : "sidecar-conv".equals(name) ? CONVERSATIONS : SHIPPED;
    }

    /** Target "sidecar-conv" (the conversation phase): {@link #SHIPPED} with sidecar.conversations on. */
    static final Map<String, String> CONVERSATIONS = withConversations();

    private static Map<String, String> withConversations() {
        Map<String, String> m = new LinkedHashMap<>(SHIPPED);
        m.put("sidecar.conversations.enabled", "true");
        return java.util.Collections.unmodifiableMap(m);
    }

    /** What the sidecar said about OpenTelemetry at its start (nothing: the SDK stayed off, no OTLP endpoint). */
    static String otelLines(List<String> lines) {
        List<String> said = lines.stream().filter(l -> l.contains("OpenTelemetry")).map(l -> l.replaceAll(".*\\) ", ""))
                .toList();
        return said.isEmpty() ? "no OpenTelemetry line at start: OTLP off (no endpoint)" : String.join("; ", said);
    }

    static Map<String, String> ordered(String... keyValues) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    void stopAll() {
        for (Process p : started) {
            if (p.isAlive()) {
                p.destroy();
            }
        }
        for (Process p : started) {
            try {
                if (!p.waitFor(5, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
            }
        }
        started.clear();
    }

    static void waitForPort(int port, int seconds) throws Exception {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < deadline) {
            try (var s = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
                return;
            } catch (IOException e) {
                Thread.sleep(100);
            }
        }
        throw new IllegalStateException("nothing listening on " + port);
    }

    // ---------------------------------------------------------------------------------------------- long streams

    /** Streams of the long-stream phase: at least 2 000 tokens, as reasoning answers have 5 000 to 30 000. */
    static final int LONG_EVENTS = 2000;

    /**
     * The long-stream phase (issue 41): the top concurrency, streams of {@value #LONG_EVENTS} tokens paced as the
     * top latency level's (100 ms apart), without and with continuous usage, every target in turn; per target the
     * collections and time stopped, peak RSS and CPU per event. {@code quick}: 500 streams, tokens 20 ms apart.
     */
    JsonArray longStreams(List<Endpoint> targets, Endpoint engine, boolean quick) throws Exception {
        int conc = quick ? 500 : LEVELS[LEVELS.length - 1];
        int intervalMs = quick ? 20 : 100;
        int seconds = quick ? 5 : 15;
        JsonArray out = new JsonArray();
        for (boolean continuous : new boolean[] {false, true}) {
            for (Endpoint t : targets) {
                if (t.jvm()) {
                    peaks.get(t.name).reset();
                }
                JsonObject p = phase(t, "stream", conc, seconds, LONG_EVENTS, intervalMs, 10, "bench-long", engine,
                        continuous);
                p.put("level", conc).put("events", LONG_EVENTS).put("intervalMs", intervalMs)
                        .put("continuousUsage", continuous);
                if (t.jvm()) {
                    p.put("peak", peaks.get(t.name).get());
                } else if (t.name.equals("nginx")) {
                    p.put("nginxRssKb", rssKb(t.pids));
                }
                out.add(p);
                JsonObject gc = p.getJsonObject("gc", new JsonObject());
                System.out.printf(Locale.ROOT, "long c=%d %s%-11s %.0f events/s, %.1f us cpu/event, full GCs %.0f, "
                        + "young %.0f, peak RSS %s%n", conc, continuous ? "continuous " : "", t.name,
                        p.getDouble("eventsPerSec", 0.0), cpuPerEventMicros(p), gc.getDouble("majorCount", 0.0),
                        gc.getDouble("minorCount", 0.0), p.containsKey("peak") ? p.getJsonObject("peak")
                                .getLong("rssKb") / 1024 + " MB" : "-");
            }
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------------- conversations

    /** Streams at once in the conversation phase, and each answer's tokens and their pace. */
    static final int CONV_STREAMS = 32;
    static final int CONV_EVENTS = 20;
    static final int CONV_INTERVAL_MS = 20;

    /**
     * The conversation phase (issue 45): {@value #CONV_STREAMS} streams, each a turn of a conversation that resends its
     * history (up to {@link BenchClient#CONVERSATION_BYTES} bytes, then a new one), against every target, rounds
     * interleaved; the sidecar as it ships and "sidecar-conv" (the same with sidecar.conversations on) side by side,
     * so CPU per request and TTFT added are the feature's.
     */
    JsonArray conversations(List<Endpoint> targets, Endpoint engine, boolean quick) throws Exception {
        int seconds = quick ? 5 : 15;
        int rounds = quick ? 1 : 5;
        JsonArray out = new JsonArray();
        for (Endpoint t : targets) {
            // the client's and the path's JIT for this mode, not measured: a profile of the sidecar in its first 45 s
            // of this mode spent 42 % of its CPU in the JIT compiler (the conversation reader: 4 %); and after 60 s
            // the compiler threads still took 20 to 45 % of a sidecar's CPU in 15 s rounds. So a sidecar warms on
            // until a 15 s stretch of this mode has its compiler at most 5 % of its CPU (at most 4 stretches more).
            // Under the model the rounds name: warmed under another, the first round still compiled for 0.4 to 0.7
            // ms per request (two runs of 2026-11-29)
            phase(t, "conv", CONV_STREAMS, quick ? 3 : 60, CONV_EVENTS, CONV_INTERVAL_MS, 10, "bench-conv", engine);
            for (int more = 0; t.jvm() && !quick && more < 4; more++) {
                JsonObject w = phase(t, "conv", CONV_STREAMS, 15, CONV_EVENTS, CONV_INTERVAL_MS, 10, "bench-conv",
                        engine);
                double share = w.getDouble("compilerCpuSeconds") / Math.max(1e-9, w.getDouble("proxyCpuSeconds"));
                System.out.printf(Locale.ROOT, "conv warm-up %-12s compiler %.0f %% of its CPU%n", t.name, 100 * share);
                if (share <= 0.05) {
                    break;
                }
            }
        }
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < targets.size(); k++) {
                Endpoint t = targets.get((k + r) % targets.size());
                if (t.jvm()) {
                    peaks.get(t.name).reset();
                }
                JsonObject p = phase(t, "conv", CONV_STREAMS, seconds, CONV_EVENTS, CONV_INTERVAL_MS, 10,
                        "bench-conv", engine);
                p.put("round", r).put("level", CONV_STREAMS).put("events", CONV_EVENTS)
                        .put("intervalMs", CONV_INTERVAL_MS);
                if (t.jvm()) {
                    p.put("peak", new JsonObject().put("rssKb", peaks.get(t.name).get().getLong("rssKb")));
                }
                out.add(p);
                System.out.printf(Locale.ROOT, "conv %-12s %.0f req/s, %.0f us cpu/request (compiler %.0f), ttft+ p50 "
                        + "%.0f p99 %.0f us, err %d%n", t.name, p.getDouble("requestsPerSec", 0.0),
                        cpuPerRequestMicros(p), p.getDouble("compilerCpuSeconds") * 1e6 / Math.max(1,
                                p.getLong("streams", 0L)), q(p, "ttftOverhead", "p50"), q(p, "ttftOverhead", "p99"),
                        p.getLong("errors", 0L));
            }
        }
        return out;
    }

    /** Proxy CPU per request, µs. */
    static double cpuPerRequestMicros(JsonObject p) {
        return cpuPerMicros(p, "streams");
    }

    /** Proxy CPU per one of the phase's {@code count} (its requests, its token events), µs. */
    static double cpuPerMicros(JsonObject p, String count) {
        long n = p.getLong(count, 0L);
        return n > 0 ? p.getDouble("proxyCpuSeconds", 0.0) * 1e6 / n : Double.NaN;
    }

    /** {@code --conversations}: the conversation phase alone: engine, nginx, the sidecar, and it with the feature on. */
    void conversationsOnly(boolean quick) throws Exception {
        String started = Instant.now().toString();
        Endpoint engine = startEngine();
        Endpoint nginx = startNginx(engine.port);
        Endpoint sidecar = startSidecar(engine.port);
        Endpoint conv = startSidecar(engine.port, root.resolve(CURRENT_JAR), "sidecar-conv");
        ScheduledExecutorService sampler = startSampler();
        Thread.sleep(1000);
        List<Endpoint> targets = List.of(new Endpoint("direct", engine.port, engine.pids, -1), nginx, sidecar, conv);
        warmUp(targets, quick ? 5 : 30, engine);
        JsonArray out = conversations(targets, engine, quick);
        sampler.shutdownNow();
        stopAll();
        JsonObject results = new JsonObject().put("started", started).put("quick", quick).put("machine", machine())
                .put("sidecarJvm", sidecarOptsDescription()).put("sidecars", launched).put("conversations", out);
        String runFile = runFile(started, quick ? "conversations-quick" : "conversations");
        keepRun(root, runFile, results);
        ConversationBench.write(root, out, quick, runFile);
        System.out.println("wrote docs/bench/conversations.md, docs/bench/" + runFile);
    }

    /** Stops one target this run started. */
    void stop(Endpoint target) throws InterruptedException {
        for (Process p : new ArrayList<>(started)) {
            if (target.pids.contains(p.pid())) {
                p.destroy();
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
                started.remove(p);
            }
        }
    }

    /** Proxy CPU per forwarded event, µs. */
    static double cpuPerEventMicros(JsonObject p) {
        return cpuPerMicros(p, "tokenEvents");
    }

    /** {@code --long-streams}: the long-stream phase alone, against the engine, nginx and the sidecar. */
    void longStreamsOnly(boolean quick) throws Exception {
        String started = Instant.now().toString();
        Endpoint engine = startEngine();
        Endpoint nginx = startNginx(engine.port);
        List<Endpoint> builds = startBuilds(engine.port);
        ScheduledExecutorService sampler = startSampler();
        Thread.sleep(1000);
        List<Endpoint> targets = new ArrayList<>(List.of(new Endpoint("direct", engine.port, engine.pids, -1), nginx));
        targets.addAll(builds);
        warmUp(targets, quick ? 5 : 30, engine);
        JsonArray out = longStreams(targets, engine, quick);
        sampler.shutdownNow();
        stopAll();
        JsonObject results = new JsonObject().put("started", started).put("quick", quick).put("machine", machine())
                .put("sidecarJvm", sidecarOptsDescription()).put("longStreams", out);
        String runFile = runFile(started, quick ? "long-streams-quick" : "long-streams");
        keepRun(root, runFile, results);
        Files.writeString(root.resolve("docs/bench/long-streams.json"), results.encodePrettily());
        LongStreams.write(root, out, quick, runFile);
        System.out.println("wrote docs/bench/long-streams.md, docs/bench/long-streams.json, docs/bench/" + runFile);
    }

    // ---------------------------------------------------------------------------------------------- phases

    /**
     * One unpaced phase per target and round, the targets' order rotated each round (so none always runs first
     * on a cooler or hotter box); prints each result with {@code line}.
     */
    JsonArray interleaved(List<Endpoint> targets, int rounds, String mode, int conc, int seconds, int events,
            Endpoint engine, java.util.function.BiFunction<Endpoint, JsonObject, String> line) throws Exception {
        JsonArray out = new JsonArray();
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < targets.size(); k++) {
                Endpoint t = targets.get((k + r) % targets.size());
                if (t.jvm()) {
                    peaks.get(t.name).reset();
                }
                JsonObject p = phase(t, mode, conc, seconds, events, 0, 0, "bench-" + mode, engine);
                p.put("round", r);
                if (t.jvm()) {
                    p.put("peak", new JsonObject().put("rssKb", peaks.get(t.name).get().getLong("rssKb")));
                }
                out.add(p);
                System.out.println(line.apply(t, p));
            }
        }
        return out;
    }

    /**
     * One load-client run against one target; adds CPU seconds used by the target and the engine and, for a sidecar
     * build, what its JVM did between a scrape of its counters before and one after ({@code gc}: collections;
     * {@code jvm}: bytes allocated, safepoints, seconds; {@link JvmProbe#delta}). The scrapes fall outside the CPU
     * measured.
     */
    JsonObject phase(Endpoint target, String mode, int conc, int seconds, int events, int intervalMs,
            int ttftMs, String model, Endpoint engine) throws Exception {
        return phase(target, mode, conc, seconds, events, intervalMs, ttftMs, model, engine, false);
    }

    /** As above; {@code continuousUsage}: the client asks for usage on every chunk (vLLM's continuous_usage_stats). */
    JsonObject phase(Endpoint target, String mode, int conc, int seconds, int events, int intervalMs,
            int ttftMs, String model, Endpoint engine, boolean continuousUsage) throws Exception {
        JsonObject jvmBefore = target.jvm() ? JvmProbe.counters(target.mgmtPort) : null;
        long compiler = target.jvm() ? Processes.onCpuNanos(target.pids, true) : 0;
        long cpuTarget = target.name.equals("direct") ? 0 : cpuTicks(target.pids);
        long cpuEngine = cpuTicks(engine.pids);
        long[] box = boxTicks();
        Process p = new ProcessBuilder("java", "-Xmx768m", "-XX:+UseParallelGC",
                "-Dbench.continuousUsage=" + continuousUsage, "-cp", cp, BenchClient.class.getName(), "127.0.0.1",
                Integer.toString(target.port), mode, Integer.toString(conc), Integer.toString(seconds),
                Integer.toString(events), Integer.toString(intervalMs), Integer.toString(ttftMs), model, "2")
                .redirectError(ProcessBuilder.Redirect.appendTo(work.resolve("client.err").toFile())).start();
        started.add(p);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(seconds + 120L, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        started.remove(p);
        long cpuT = target.name.equals("direct") ? 0 : cpuTicks(target.pids) - cpuTarget;
        long cpuE = cpuTicks(engine.pids) - cpuEngine;
        double compilerSeconds = target.jvm() ? (Processes.onCpuNanos(target.pids, true) - compiler) / 1e9 : 0.0;
        long[] boxAfter = boxTicks();
        double total = boxAfter[0] - box[0];
        JsonObject r;
        try {
            r = new JsonObject(out.substring(out.lastIndexOf("\n{") + 1));
        } catch (RuntimeException e) {
            r = new JsonObject().put("failed", out);
        }
        r.put("target", target.name).put("proxyCpuSeconds", cpuT / 100.0).put("engineCpuSeconds", cpuE / 100.0)
                .put("compilerCpuSeconds", compilerSeconds)
                .put("stealPercent", total > 0 ? 100.0 * (boxAfter[1] - box[1]) / total : 0.0);
        if (jvmBefore != null) {
            JsonObject d = JvmProbe.delta(jvmBefore, JvmProbe.counters(target.mgmtPort), safepoints.get(target.name));
            r.put("gc", d.remove("gc")).put("jvm", d);
        }
        return r;
    }

    /** The sidecar's own view (/q/llm, longest window) of one phase's model: TTFT and ITL percentiles in µs. */
    JsonObject liveStats(int mgmtPort, String model) {
        try {
            var res = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mgmtPort + "/q/llm"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            JsonObject models = new JsonObject(res.body()).getJsonObject("models");
            JsonObject m = models.getJsonObject(model);
            JsonObject view = new JsonObject().put("modelsHeld", models.size());
            if (m == null) {
                return view;
            }
            for (String metric : List.of("ttft", "itl")) {
                JsonObject w = m.getJsonObject(metric);
                String longest = null;
                for (String k : w.fieldNames()) {
                    longest = k; // windows are ordered shortest first
                }
                JsonObject s = w.getJsonObject(longest);
                view.put(metric, new JsonObject().put("count", s.getLong("count"))
                        .put("p50", s.getDouble("p50", Double.NaN) * 1e6).put("p99", s.getDouble("p99", Double.NaN) * 1e6)
                        .put("window", longest));
            }
            return view;
        } catch (Exception e) {
            return new JsonObject().put("error", e.toString());
        }
    }

    /**
     * Scrapes /q/metrics while a phase runs, as the chart's ServiceMonitor does (every {@value #SCRAPE_EVERY_SECONDS}
     * s, the first 2 s in): the scrape must stay fast under load, and its cost is part of what the sidecar costs.
     */
    final class ScrapeProbe {
        static final int SCRAPE_EVERY_SECONDS = 15;
        final Thread thread;
        volatile boolean stop;
        final List<Long> millis = new CopyOnWriteArrayList<>();
        volatile int failures;
        volatile int bytes;

        ScrapeProbe(int mgmtPort) {
            thread = new Thread(() -> {
                long deadline = System.nanoTime() + 600_000_000_000L;
                try {
                    Thread.sleep(2000);
                } catch (InterruptedException e) {
                    return;
                }
                while (!stop && System.nanoTime() < deadline) {
                    long s = System.nanoTime();
                    try {
                        var res = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mgmtPort + "/q/metrics"))
                                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                        if (res.statusCode() == 200) {
                            millis.add((System.nanoTime() - s) / 1_000_000);
                            bytes = res.body().length();
                        } else {
                            failures++;
                        }
                    } catch (Exception e) {
                        failures++;
                    }
                    try {
                        Thread.sleep(SCRAPE_EVERY_SECONDS * 1000L);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "scrape-probe");
            thread.setDaemon(true);
            thread.start();
        }

        JsonObject stop() throws InterruptedException {
            stop = true;
            thread.interrupt();
            thread.join(15_000);
            long max = millis.stream().mapToLong(Long::longValue).max().orElse(-1);
            return new JsonObject().put("scrapes", millis.size()).put("failures", failures).put("maxMillis", max)
                    .put("bytes", bytes);
        }
    }

    // ---------------------------------------------------------------------------------------------- /proc

    /** The highest RSS, threads and fds of one process since the last reset, sampled by the caller's schedule. */
    static final class Peaks {
        private long pid = -1;
        private long rssKb;
        private int threads;
        private int fds;

        synchronized void watch(long processId) {
            pid = processId;
            reset();
        }

        synchronized void reset() {
            rssKb = 0;
            threads = 0;
            fds = 0;
        }

        synchronized void sample() {
            if (pid < 0) {
                return;
            }
            JsonObject s = procState(pid);
            rssKb = Math.max(rssKb, s.getLong("rssKb", 0L));
            threads = Math.max(threads, s.getInteger("threads", 0));
            fds = Math.max(fds, s.getInteger("fds", 0));
        }

        synchronized JsonObject get() {
            return new JsonObject().put("rssKb", rssKb).put("threads", threads).put("fds", fds);
        }
    }

    static JsonObject procState(long pid) {
        JsonObject s = new JsonObject();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    s.put("rssKb", Long.parseLong(line.replaceAll("[^0-9]", "")));
                } else if (line.startsWith("Threads:")) {
                    s.put("threads", Integer.parseInt(line.replaceAll("[^0-9]", "")));
                }
            }
            try (var fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
                s.put("fds", (int) fds.count());
            }
        } catch (IOException e) {
            s.put("error", e.toString());
        }
        return s;
    }

    static long rssKb(List<Long> pids) {
        long sum = 0;
        for (long pid : pids) {
            sum += procState(pid).getLong("rssKb", 0L);
        }
        return sum;
    }

    static long cpuTicks(List<Long> pids) {
        long sum = 0;
        for (long pid : pids) {
            try {
                String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                sum += Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
            } catch (IOException | RuntimeException e) {
                // process gone
            }
        }
        return sum;
    }

    /**
     * All CPU ticks of the machine and those stolen by the hypervisor ({@code /proc/stat}): on a shared VM, time a
     * vCPU was runnable but not running, which delays every process on it; a phase with steal is noisy.
     */
    static long[] boxTicks() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long total = 0;
            for (int i = 1; i <= Math.min(8, f.length - 1); i++) {
                total += Long.parseLong(f[i]); // user nice system idle iowait irq softirq steal
            }
            return new long[] {total, f.length > 8 ? Long.parseLong(f[8]) : 0};
        } catch (IOException | RuntimeException e) {
            return new long[] {0, 0};
        }
    }

    static List<Long> children(long parent) throws IOException {
        List<Long> kids = new ArrayList<>();
        try (var dirs = Files.list(Path.of("/proc"))) {
            for (Path d : (Iterable<Path>) dirs::iterator) {
                String name = d.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                try {
                    String stat = Files.readString(d.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    if (Long.parseLong(f[1]) == parent) {
                        kids.add(Long.parseLong(name));
                    }
                } catch (IOException | RuntimeException e) {
                    // raced with exit
                }
            }
        }
        return kids;
    }

    static JsonObject machine() {
        JsonObject m = new JsonObject().put("cores", Runtime.getRuntime().availableProcessors())
                .put("java", System.getProperty("java.version"));
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    m.put("cpu", line.substring(line.indexOf(':') + 1).trim());
                    break;
                }
            }
            m.put("loadAvgAtStart", Files.readString(Path.of("/proc/loadavg")).trim());
        } catch (IOException e) {
            // not Linux
        }
        return m;
    }
}
