package dev.llmsidecar.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * docs/bench/conversations.md: the conversation phase ({@link Bench#conversations}): each target's CPU per request
 * and TTFT added, and the sidecar with sidecar.conversations on against the same build as it ships, which issue 45
 * bounds: CPU per request within 1.10x, TTFT p99 added within 1 ms.
 */
final class ConversationBench {

    static final double CPU_RATIO_BOUND = 1.10;
    static final double ADDED_TTFT_P99_BOUND_MS = 1.0;

    private ConversationBench() {
    }

    /** Per target, over its rounds: requests, CPU seconds, and each round's TTFT overhead p50 / p99 and CPU (µs). */
    static final class Totals {
        long requests;
        double cpuSeconds;
        double compilerSeconds;
        double seconds;
        long errors;
        final List<Double> p50 = new ArrayList<>();
        final List<Double> p99 = new ArrayList<>();
        final List<Double> cpu = new ArrayList<>();

        void add(JsonObject p) {
            requests += p.getLong("streams", 0L);
            cpuSeconds += p.getDouble("proxyCpuSeconds", 0.0);
            compilerSeconds += p.getDouble("compilerCpuSeconds", 0.0);
            seconds += p.getDouble("seconds", 0.0);
            errors += p.getLong("errors", 0L);
            p50.add(Bench.q(p, "ttftOverhead", "p50"));
            p99.add(Bench.q(p, "ttftOverhead", "p99"));
            cpu.add(Bench.cpuPerRequestMicros(p));
        }

        double cpuPerRequestMicros() {
            return requests > 0 ? cpuSeconds * 1e6 / requests : Double.NaN;
        }

        /** Without the JIT compiler's threads: what the path itself costs once compiled. */
        double cpuPerRequestWithoutCompilerMicros() {
            return requests > 0 ? (cpuSeconds - compilerSeconds) * 1e6 / requests : Double.NaN;
        }

        static double median(List<Double> v) {
            List<Double> s = new ArrayList<>(v);
            s.sort(Double::compare);
            return s.isEmpty() ? Double.NaN : s.get(s.size() / 2);
        }
    }

    static Map<String, Totals> totals(JsonArray phases) {
        Map<String, Totals> out = new LinkedHashMap<>();
        for (Object o : phases) {
            JsonObject p = (JsonObject) o;
            out.computeIfAbsent(p.getString("target"), k -> new Totals()).add(p);
        }
        return out;
    }

    /** @param runFile the run's own results file, relative to docs/bench ({@link Bench#runFile}) */
    static void write(Path root, JsonArray phases, boolean quick, String runFile) throws IOException {
        Map<String, Totals> totals = totals(phases);
        StringBuilder md = new StringBuilder("# Conversations\n\n");
        md.append("Written by `bench/run").append(quick ? " --conversations --quick" : " --conversations")
                .append("` on ").append(Instant.now()).append(". On 127.0.0.1, every target in turn, rounds "
                        + "interleaved, the sidecar on its shipped flags: ").append(Bench.CONV_STREAMS)
                .append(" streams at once, each a turn of a conversation that resends its whole history (a system "
                        + "prompt, then user messages and tool results of 8 KB alternating, each after an answer of "
                        + "1.2 KB, the answer after a user message calling a tool), growing to ")
                .append(BenchClient.CONVERSATION_BYTES / 1000).append(" KB before a new conversation starts; ")
                .append(Bench.CONV_EVENTS).append(" tokens per answer, ").append(Bench.CONV_INTERVAL_MS)
                .append(" ms apart, the first after 10 ms. `sidecar` is the build as it ships, `sidecar-conv` the same "
                        + "with `sidecar.conversations.enabled=true`: each request's messages digested and linked "
                        + "to the turn before.\n\n");
        md.append("| target | requests | requests/s | CPU per request (µs) | without the JIT compiler (µs) | rounds' "
                + "CPU per request (µs) | TTFT added p50 (µs) | TTFT added p99 (µs), median of rounds | rounds' p99 "
                + "(µs) | errors |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for (Map.Entry<String, Totals> e : totals.entrySet()) {
            Totals t = e.getValue();
            boolean direct = e.getKey().equals("direct");
            md.append(String.format(Locale.ROOT, "| %s | %d | %.0f | %s | %s | %s | %.0f | %.0f | %s | %d |%n",
                    e.getKey(), t.requests, t.seconds > 0 ? t.requests / t.seconds : 0.0,
                    direct ? "—" : String.format(Locale.ROOT, "%.0f", t.cpuPerRequestMicros()),
                    direct || e.getKey().equals("nginx") ? "—"
                            : String.format(Locale.ROOT, "%.0f", t.cpuPerRequestWithoutCompilerMicros()),
                    e.getKey().equals("direct") ? "—" : String.join(" / ", t.cpu.stream()
                            .map(v -> String.format(Locale.ROOT, "%.0f", v)).toList()),
                    Totals.median(t.p50), Totals.median(t.p99),
                    String.join(" / ", t.p99.stream().map(v -> String.format(Locale.ROOT, "%.0f", v)).toList()),
                    t.errors));
        }
        Totals off = totals.get("sidecar");
        Totals on = totals.get("sidecar-conv");
        if (off != null && on != null) {
            double ratio = on.cpuPerRequestMicros() / off.cpuPerRequestMicros();
            double compiled = on.cpuPerRequestWithoutCompilerMicros() / off.cpuPerRequestWithoutCompilerMicros();
            double addedMs = (Totals.median(on.p99) - Totals.median(off.p99)) / 1000;
            md.append(String.format(Locale.ROOT, "%nWith the feature on, against the same build as it ships:%n%n"
                    + "- **CPU per request: %.2fx** (%.0f µs against %.0f µs); the bound is %.2fx: %s.%n"
                    + "- **CPU per request without the JIT compiler's threads: %.2fx** (%.0f µs against %.0f µs): "
                    + "%s.%n"
                    + "- **TTFT p99 added: %+.3f ms** (median of the rounds' p99, %.0f µs against %.0f µs); the bound "
                    + "is %.0f ms: %s.%n", ratio, on.cpuPerRequestMicros(), off.cpuPerRequestMicros(),
                    CPU_RATIO_BOUND, ratio <= CPU_RATIO_BOUND ? "met" : "**missed**", compiled,
                    on.cpuPerRequestWithoutCompilerMicros(), off.cpuPerRequestWithoutCompilerMicros(),
                    compiled <= CPU_RATIO_BOUND ? "met" : "**missed**", addedMs,
                    Totals.median(on.p99), Totals.median(off.p99), ADDED_TTFT_P99_BOUND_MS,
                    addedMs <= ADDED_TTFT_P99_BOUND_MS ? "met" : "**missed**"));
        }
        md.append("\nCPU per request is the target's CPU time over the requests answered; without the JIT compiler, less "
                + "the time of the JVM's compiler threads (each sidecar warms in this mode until they take at most 5 % "
                + "of its CPU for 15 s, for at most a minute more; what they still do in the rounds is the JVM's, not "
                + "the path's, and a thread the JVM ends between two readings is not counted); TTFT added is the time from "
                + "the client's send to the engine's arrival stamp plus from the engine's first-token stamp to the "
                + "client's read (what the path adds to TTFT); `direct` is the engine without a proxy. The raw "
                + "figures of this run: [" + runFile + "](" + runFile + ")"
                + (runFile.contains("conversations") ? "" : " (`conversations`)") + ".\n");
        Files.writeString(root.resolve("docs/bench/conversations.md"), md.toString());
    }
}
