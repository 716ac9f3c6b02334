package dev.llmsidecar.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Locale;

/** docs/bench/long-streams.md: the long-stream phase ({@link Bench#longStreams}), each target beside nginx. */
final class LongStreams {

    /** The chart's memory limit for the sidecar (charts/llm-sidecar/values.yaml). */
    static final long CHART_LIMIT_MB = 288;

    private LongStreams() {
    }

    /** @param runFile the run's own results file, relative to docs/bench ({@link Bench#runFile}) */
    static void write(Path root, JsonArray phases, boolean quick, String runFile) throws IOException {
        StringBuilder md = new StringBuilder("# Long streams\n\n");
        md.append("Written by `bench/run").append(quick ? " --long-streams --quick" : "").append("` on ")
                .append(Instant.now()).append(". Every target in turn, on 127.0.0.1, the sidecar with its shipped flags "
                        + "(`sidecar/src/main/jvm/jvm.options`): streams of ").append(Bench.LONG_EVENTS)
                .append(" tokens (reasoning answers are 5 000 to 30 000), as many at once as the phase says, the "
                        + "tokens paced by the simulated engine; without usage on every chunk (the sidecar adds "
                        + "include_usage: one usage chunk at the end) and with vLLM's continuous usage. Issue 41 asks "
                        + "for no full collection and a peak RSS within the chart's limit (")
                .append(CHART_LIMIT_MB).append(" MiB).\n\n");
        md.append("| usage | target | streams | tokens apart (ms) | events/s | CPU per event (µs) | ÷ nginx | full "
                + "collections | young collections | time stopped | peak RSS (MB) |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (boolean continuous : new boolean[] {false, true}) {
            double nginxCpu = Double.NaN;
            for (Object o : phases) {
                JsonObject p = (JsonObject) o;
                if (p.getBoolean("continuousUsage", false) == continuous && "nginx".equals(p.getString("target"))) {
                    nginxCpu = Bench.cpuPerEventMicros(p);
                }
            }
            for (Object o : phases) {
                JsonObject p = (JsonObject) o;
                if (p.getBoolean("continuousUsage", false) != continuous) {
                    continue;
                }
                String target = p.getString("target");
                double cpu = Bench.cpuPerEventMicros(p);
                JsonObject gc = p.getJsonObject("gc");
                JsonObject jvm = p.getJsonObject("jvm");
                JsonObject safepoints = jvm == null ? null : jvm.getJsonObject("safepoints");
                long rssKb = p.containsKey("peak") ? p.getJsonObject("peak").getLong("rssKb", 0L)
                        : p.getLong("nginxRssKb", 0L);
                md.append(String.format(Locale.ROOT, "| %s | %s | %d | %d | %.0f | %s | %s | %s | %s | %s | %s |%n",
                        continuous ? "continuous" : "at the end", target, p.getInteger("level", 0),
                        p.getInteger("intervalMs", 0), p.getDouble("eventsPerSec", 0.0),
                        target.equals("direct") ? "—" : String.format(Locale.ROOT, "%.1f", cpu),
                        target.equals("direct") || target.equals("nginx") ? "—"
                                : String.format(Locale.ROOT, "%.2f", cpu / nginxCpu),
                        gc == null ? "—" : String.format(Locale.ROOT, "%.0f", gc.getDouble("majorCount", 0.0)),
                        gc == null ? "—" : String.format(Locale.ROOT, "%.0f", gc.getDouble("minorCount", 0.0)),
                        safepoints == null ? "—" : String.format(Locale.ROOT, "%.2f %%",
                                safepoints.getDouble("pausedPercent", 0.0)),
                        rssKb == 0 ? "—" : String.format(Locale.ROOT, "%.0f", rssKb / 1024.0)));
            }
        }
        md.append("\nCPU per event is the target's CPU time over the token events the clients received; "
                + "`direct` is the engine without a proxy (no proxy CPU). The raw figures of this run: [" + runFile
                + "](" + runFile + ")" + (runFile.contains("long-streams") ? "" : " (`longStreams`)") + ".\n");
        Files.writeString(root.resolve("docs/bench/long-streams.md"), md.toString());
    }
}
