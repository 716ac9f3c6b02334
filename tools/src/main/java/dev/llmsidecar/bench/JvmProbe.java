package dev.llmsidecar.bench;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the benchmark reads off a sidecar's JVM from outside: its own Micrometer JVM series on {@code /q/metrics}
 * (collector pauses, bytes allocated, uptime, heap size, engine scrapes), the safepoint log its
 * {@code -Xlog:safepoint*} flag writes, and its threads in {@code /proc}.
 */
final class JvmProbe {

    /**
     * Logging only, added to the shipped flags: every safepoint with its stopped time, decorated with the JVM's uptime
     * (the clock of {@code process_uptime_seconds}, so a phase's safepoints are those between its two scrapes); one
     * file, not rotated.
     */
    static String safepointFlag(Path log) {
        return "-Xlog:safepoint*:file=" + log + ":uptime,tags:filecount=0";
    }

    /** Thread names are cut to 15 characters in /proc/PID/task/TID/comm: Vert.x's "vert.x-eventloop-thread-N". */
    static final String EVENT_LOOP_COMM = "vert.x-eventloo";

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    private JvmProbe() {
    }

    /**
     * The sidecar's JVM counters now, from one scrape of its /q/metrics: young ("minor") and full ("major")
     * collections and their pause seconds ({@code jvm_gc_pause_seconds}), {@code jvm_gc_memory_allocated_bytes_total}
     * (counted at each young collection: the eden filled since the one before), the eden's use now (the allocation
     * since the last collection), the uptime in seconds, the heap's maximum, and the engine scrapes that succeeded.
     * A series the build does not have stays 0 (NaN for the uptime).
     */
    static JsonObject counters(int mgmtPort) {
        JsonObject g = new JsonObject().put("minorCount", 0.0).put("minorSeconds", 0.0).put("majorCount", 0.0)
                .put("majorSeconds", 0.0).put("allocatedBytes", 0.0).put("edenUsedBytes", 0.0)
                .put("heapMaxBytes", 0.0).put("engineScrapesOk", 0.0).put("uptimeSeconds", Double.NaN);
        try {
            var res = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mgmtPort + "/q/metrics"))
                    .header("Accept", "text/plain; version=0.0.4").timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofLines());
            res.body().forEach(l -> read(g, l));
        } catch (Exception e) {
            g.put("error", e.toString());
        }
        return g;
    }

    /** Adds one exposition line to the counters it belongs to. */
    static void read(JsonObject g, String line) {
        String key = null;
        if (line.startsWith("jvm_gc_pause_seconds_count{") || line.startsWith("jvm_gc_pause_seconds_sum{")) {
            key = (line.contains("action=\"end of major GC\"") ? "major" : "minor")
                    + (line.startsWith("jvm_gc_pause_seconds_count") ? "Count" : "Seconds");
        } else if (line.startsWith("jvm_gc_memory_allocated_bytes_total ")) {
            key = "allocatedBytes";
        } else if (line.startsWith("jvm_memory_used_bytes{") && line.contains("area=\"heap\"")
                && line.contains("Eden")) {
            key = "edenUsedBytes";
        } else if (line.startsWith("jvm_memory_max_bytes{") && line.contains("area=\"heap\"")) {
            key = "heapMaxBytes";
        } else if (line.startsWith("llm_sidecar_engine_scrapes_total{") && line.contains("result=\"ok\"")) {
            key = "engineScrapesOk";
        } else if (line.startsWith("process_uptime_seconds ")) {
            g.put("uptimeSeconds", value(line));
            return;
        }
        if (key != null) {
            double v = value(line);
            g.put(key, g.getDouble(key) + (Double.isNaN(v) || v < 0 ? 0 : v));
        }
    }

    private static double value(String line) {
        try {
            return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        } catch (RuntimeException e) {
            return Double.NaN;
        }
    }

    /**
     * What happened in the sidecar's JVM between two readings: the collections ({@code gc}: counts and pause seconds,
     * as before), the bytes allocated (the allocated counter's growth plus the eden's: exact but for a collection
     * whose notification Micrometer has not yet counted at a reading), the safepoints the log has between the two
     * uptimes, and the seconds between them.
     */
    static JsonObject delta(JsonObject before, JsonObject after, SafepointLog log) {
        JsonObject gc = new JsonObject();
        for (String k : List.of("minorCount", "minorSeconds", "majorCount", "majorSeconds")) {
            gc.put(k, after.getDouble(k) - before.getDouble(k));
        }
        double from = before.getDouble("uptimeSeconds");
        double to = after.getDouble("uptimeSeconds");
        JsonObject d = new JsonObject().put("gc", gc)
                .put("allocatedBytes", after.getDouble("allocatedBytes") - before.getDouble("allocatedBytes")
                        + after.getDouble("edenUsedBytes") - before.getDouble("edenUsedBytes"))
                .put("engineScrapesOk", after.getDouble("engineScrapesOk") - before.getDouble("engineScrapesOk"))
                .put("uptimeFrom", from).put("uptimeTo", to).put("seconds", to - from);
        if (log != null && !Double.isNaN(from) && !Double.isNaN(to)) {
            JsonObject sp = log.between(from, to);
            sp.put("pausedPercent", 100 * sp.getDouble("totalMillis") / 1000 / Math.max(1e-9, to - from));
            d.put("safepoints", sp);
        }
        return d;
    }

    /**
     * Quarkus's own default for the Vert.x event loops, which the sidecar's proxy runs on
     * ({@code quarkus.vertx.event-loops-pool-size} unset; VertxCoreRecorder.calculateDefaultIOThreads in 3.x): the
     * cores the JVM sees, at most one per 10 MB of maximum heap, at least 2.
     */
    static int quarkusDefaultEventLoops(double heapMaxBytes, int cores) {
        long perTenMb = (long) (heapMaxBytes / (1024 * 1024)) / 10;
        return (int) Math.max(2, Math.min(perTenMb, cores));
    }

    /**
     * The sidecar's event-loop threads, counted in /proc (Netty starts a loop's thread at its first task: read after
     * the warm-up, whose hundred connections are handed to the loops in turn).
     */
    static int eventLoopThreads(long pid) {
        int n = 0;
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    if (Files.readString(t.resolve("comm")).startsWith(EVENT_LOOP_COMM)) {
                        n++;
                    }
                } catch (IOException raced) {
                    // the thread ended
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return n;
    }

    /**
     * The safepoints a JVM logs with {@link #safepointFlag} (JDK 17: {@code [12.345s][safepoint] Safepoint "Name",
     * ..., Total: 789 ns}), read as the file grows: each call reads the lines appended since the last and sums those
     * logged within its uptime range (lines before it fell between phases).
     */
    static final class SafepointLog {
        static final Pattern LINE = Pattern.compile(
                "^\\[(\\d+\\.\\d+)s]\\[safepoint\\s*] Safepoint \"([^\"]+)\".*Total: (\\d+) ns");
        final Path file;
        private long offset;

        SafepointLog(Path file) {
            this.file = file;
        }

        synchronized JsonObject between(double fromUptime, double toUptime) {
            long count = 0;
            double totalMs = 0;
            double maxMs = 0;
            Map<String, double[]> byOp = new TreeMap<>();
            for (String line : newLines()) {
                Matcher m = LINE.matcher(line);
                if (!m.find()) {
                    continue;
                }
                double at = Double.parseDouble(m.group(1));
                if (at < fromUptime || at > toUptime) {
                    continue;
                }
                double ms = Long.parseLong(m.group(3)) / 1e6;
                count++;
                totalMs += ms;
                maxMs = Math.max(maxMs, ms);
                double[] op = byOp.computeIfAbsent(m.group(2), k -> new double[2]);
                op[0]++;
                op[1] += ms;
            }
            JsonObject ops = new JsonObject();
            byOp.forEach((k, v) -> ops.put(k, new JsonObject().put("count", (long) v[0]).put("millis", v[1])));
            return new JsonObject().put("count", count).put("totalMillis", totalMs).put("maxMillis", maxMs)
                    .put("byOperation", ops);
        }

        /** Complete lines appended since the last call (a line still being written waits for the next). */
        private List<String> newLines() {
            try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
                long end = f.length();
                if (end <= offset) {
                    return List.of();
                }
                byte[] b = new byte[(int) Math.min(Integer.MAX_VALUE - 8, end - offset)];
                f.seek(offset);
                f.readFully(b);
                int last = b.length - 1;
                while (last >= 0 && b[last] != '\n') {
                    last--;
                }
                offset += last + 1;
                return List.of(new String(b, 0, last + 1, StandardCharsets.UTF_8).split("\n"));
            } catch (IOException e) {
                return List.of(); // no log (yet): no safepoint recorded
            }
        }
    }
}
