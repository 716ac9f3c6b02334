package dev.llmsidecar.bench;

import dev.llmsidecar.report.Fmt;
import dev.llmsidecar.report.MarkdownTable;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The sidecar developer's probes of one phase, after the benchmark's warm-up, on the configuration the benchmark
 * measures:
 *
 * <ul>
 *   <li>{@code bench/run --profile cpu|alloc|wall [--profile-level N]}: async-profiler (the
 *       {@code tools.profiler:async-profiler} jar on the tools' classpath carries the native library) attached to
 *       the sidecar for a phase of N paced streams, the sidecar on its shipped flags plus
 *       {@code -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints} (exact inlined frames); collapsed stacks and a
 *       flame graph under target/bench/profile/.
 *   <li>{@code bench/run --syscalls [--profile-level N]}: {@code strace -c -f} on the sidecar and on nginx's workers
 *       for a phase of N streams each: system calls, and reads and writes, per event relayed.
 * </ul>
 */
final class Profiling {

    static final List<String> EVENTS = List.of("cpu", "alloc", "wall");
    /** The system calls that read from a socket, and those that write to one. */
    static final List<String> READS = List.of("read", "readv", "recvfrom", "recvmsg", "recvmmsg");
    static final List<String> WRITES = List.of("write", "writev", "sendto", "sendmsg", "sendmmsg");

    private Profiling() {
    }

    static String event(String name) {
        if (!EVENTS.contains(name)) {
            throw new IllegalArgumentException("--profile takes one of " + EVENTS + ", not " + name);
        }
        return name;
    }

    /**
     * Engine and sidecar (and nginx for {@code --syscalls}) as in {@link Bench#run}, the same warm-up (5 s phases
     * with {@code --quick}), then the probed phase(s) of {@code level} streams (15 s, 5 s with {@code --quick}).
     */
    static void run(Bench bench, String event, boolean syscalls, int level, boolean quick) throws Exception {
        int warm = quick ? 5 : 30;
        int seconds = quick ? 5 : 15;
        if (event != null) {
            bench.extraFlags = List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints");
        }
        Bench.Endpoint engine = bench.startEngine();
        List<Bench.Endpoint> targets = new ArrayList<>();
        if (syscalls) {
            targets.add(bench.startNginx(engine.port()));
        }
        Bench.Endpoint sidecar = bench.startSidecar(engine.port());
        targets.add(sidecar);
        bench.warmUp(targets, warm, engine);
        int events = level <= 100 ? 10 : 30;
        int gap = level <= 1 ? 20 : 100;
        if (event != null) {
            profile(bench, sidecar, event, level, seconds, events, gap, engine);
        }
        if (syscalls) {
            syscalls(bench, targets, level, seconds, events, gap, engine);
        }
        bench.stopAll();
    }

    // ------------------------------------------------------------------------------------------------ profiler

    static void profile(Bench bench, Bench.Endpoint sidecar, String event, int level, int seconds, int events,
            int gap, Bench.Endpoint engine) throws Exception {
        Path dir = bench.work.resolve("profile");
        Files.createDirectories(dir);
        Path lib = agentLibrary(dir);
        String name = event + "-c" + level;
        Path collapsed = dir.resolve(name + ".collapsed");
        Path html = dir.resolve(name + ".html");
        Files.deleteIfExists(collapsed);
        Files.deleteIfExists(html);
        String options = switch (event) {
            case "cpu" -> "event=cpu,interval=1ms";
            case "alloc" -> "event=alloc,alloc=8k";
            default -> "event=wall,interval=5ms";
        };
        long pid = sidecar.pids().get(0);
        agent(pid, lib, "start," + options + ",threads");
        JsonObject p;
        try {
            p = bench.phase(sidecar, "stream", level, seconds, events, gap, 10, "bench-profile", engine);
        } finally {
            // alloc: bytes allocated, not samples
            String total = event.equals("alloc") ? ",total" : "";
            agent(pid, lib, "dump,flamegraph" + total + ",title=sidecar " + name + ",file=" + html);
            agent(pid, lib, "stop,collapsed" + total + ",file=" + collapsed);
        }
        System.out.printf(Locale.ROOT, "profile %s at %d streams: %.0f events/s, sidecar CPU %.2f s; wrote %s and %s%n",
                event, level, p.getDouble("eventsPerSec", 0.0), p.getDouble("proxyCpuSeconds", 0.0), collapsed, html);
        List<String> stacks = Files.readAllLines(collapsed);
        String unit = event.equals("alloc") ? "bytes" : "samples";
        System.out.print(byThread(stacks, unit) + "\n" + topFrames(stacks, 15, unit));
    }

    /** The agent library for this machine, copied out of the async-profiler jar on the classpath. */
    static Path agentLibrary(Path dir) throws IOException {
        String arch = System.getProperty("os.arch");
        String platform = arch.equals("aarch64") ? "linux-arm64" : "linux-x64";
        Path lib = dir.resolve("libasyncProfiler.so");
        try (InputStream in = Profiling.class.getClassLoader().getResourceAsStream(platform + "/libasyncProfiler.so")) {
            if (in == null) {
                throw new IllegalStateException("no " + platform + "/libasyncProfiler.so on the classpath: the tools "
                        + "module depends on tools.profiler:async-profiler (bin/build)");
            }
            Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
        }
        return lib;
    }

    /** One command to async-profiler in the sidecar's JVM, through the attach API (loaded once, then told). */
    static void agent(long pid, Path lib, String command) throws Exception {
        var vm = com.sun.tools.attach.VirtualMachine.attach(Long.toString(pid));
        try {
            vm.loadAgentPath(lib.toString(), command);
        } finally {
            vm.detach();
        }
    }

    /**
     * Samples per thread group: the stacks' first frame ({@code [name tid=N]}, async-profiler's {@code threads}), the
     * numbers in the name left out (the event loops, the compiler threads, ... each one row).
     */
    static String byThread(List<String> collapsed, String unit) {
        return shareTable("threads", unit, sum(collapsed, stack -> {
            String first = stack.contains(";") ? stack.substring(0, stack.indexOf(';')) : stack;
            return first.startsWith("[") ? first.replaceAll(" tid=\\d+]$", "]").replaceAll("\\d+", "N") : "(no thread)";
        }), Integer.MAX_VALUE);
    }

    /** The frames with the most samples at the top of their stacks (self time; for alloc, the bytes by type). */
    static String topFrames(List<String> collapsed, int n, String unit) {
        Map<String, Long> self = sum(collapsed, stack -> stack.substring(stack.lastIndexOf(';') + 1));
        return self.values().stream().mapToLong(Long::longValue).sum() + " " + unit + "\n\n"
                + shareTable("frame (self)", unit, self, n);
    }

    /** The samples of collapsed stacks ({@code frame;frame;... count}) summed by a key of the stack. */
    static Map<String, Long> sum(List<String> collapsed, java.util.function.Function<String, String> key) {
        Map<String, Long> sums = new HashMap<>();
        for (String line : collapsed) {
            int sp = line.lastIndexOf(' ');
            String count = sp < 0 ? "" : line.substring(sp + 1).trim();
            if (count.matches("\\d+")) {
                sums.merge(key.apply(line.substring(0, sp)), Long.parseLong(count), Long::sum);
            }
        }
        return sums;
    }

    /** The {@code n} largest counts with their share of all. */
    static String shareTable(String what, String unit, Map<String, Long> counts, int n) {
        long all = counts.values().stream().mapToLong(Long::longValue).sum();
        MarkdownTable t = new MarkdownTable(what, unit, "share %").align("lrr");
        counts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(n)
                .forEach(e -> t.row(e.getKey(), e.getValue(), Fmt.fixed(100.0 * e.getValue() / Math.max(1, all), 1)));
        return t.toString();
    }

    // ------------------------------------------------------------------------------------------------ strace

    /**
     * {@code strace -c -f} on each proxy (the sidecar's JVM, all its threads; nginx's workers) for one phase of
     * {@code level} streams: its system calls per event the client received. strace stops the traced thread at every
     * call, so the phase runs slower than without it and a read may carry more events than it would: the counts are
     * an upper bound of what the proxy needs per event, not its cost.
     */
    static void syscalls(Bench bench, List<Bench.Endpoint> targets, int level, int seconds, int events, int gap,
            Bench.Endpoint engine) throws Exception {
        Map<String, Map<String, Long>> calls = new LinkedHashMap<>();
        Map<String, JsonObject> phases = new LinkedHashMap<>();
        for (Bench.Endpoint t : targets) {
            List<Long> pids = t.name().equals("nginx") ? t.pids().subList(1, t.pids().size()) : t.pids();
            Path out = bench.work.resolve("strace-" + t.name() + ".txt");
            Path log = bench.work.resolve("strace-" + t.name() + ".log");
            Files.deleteIfExists(out);
            List<String> command = new ArrayList<>(List.of("strace", "-c", "-f", "-o", out.toString()));
            pids.forEach(pid -> command.addAll(List.of("-p", Long.toString(pid))));
            Process strace = bench.spawn(command, log);
            awaitAttached(log, strace, pids.size());
            JsonObject p;
            try {
                p = bench.phase(t, "stream", level, seconds, events, gap, 10, "bench-syscalls", engine);
            } finally {
                strace.destroy(); // SIGTERM: strace detaches and writes its summary
                if (!strace.waitFor(30, TimeUnit.SECONDS)) {
                    strace.destroyForcibly();
                }
            }
            calls.put(t.name(), parseSummary(Files.readAllLines(out)));
            phases.put(t.name(), p);
        }
        String table = syscallTable(calls, phases, level);
        Files.writeString(bench.work.resolve("syscalls-c" + level + ".md"), table);
        System.out.print(table);
        System.out.println("wrote " + bench.work.resolve("syscalls-c" + level + ".md"));
    }

    /** Waits (at most 10 s) until strace says it attached to every process asked for. */
    static void awaitAttached(Path log, Process strace, int processes) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            String text = Files.exists(log) ? Files.readString(log) : "";
            if (text.split("attached", -1).length - 1 >= processes) {
                return;
            }
            if (!strace.isAlive()) {
                throw new IllegalStateException("strace ended: " + text);
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("strace did not attach within 10 s: " + Files.readString(log));
    }

    /**
     * Calls per system call from strace's {@code -c} summary: rows of {@code % time, seconds, usecs/call, calls,
     * [errors], syscall}; the total row is left out (the table adds its own).
     */
    static Map<String, Long> parseSummary(List<String> lines) {
        Map<String, Long> calls = new LinkedHashMap<>();
        for (String line : lines) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 5 || !f[0].matches("\\d+\\.\\d+") || f[f.length - 1].equals("total")) {
                continue;
            }
            calls.put(f[f.length - 1], Long.parseLong(f[3]));
        }
        return calls;
    }

    /** System calls per event relayed, the sidecar's beside nginx's: the most frequent, reads, writes, all. */
    static String syscallTable(Map<String, Map<String, Long>> calls, Map<String, JsonObject> phases, int level) {
        List<String> names = new ArrayList<>(calls.keySet());
        List<String> header = new ArrayList<>(List.of("system call"));
        for (String n : names) {
            header.addAll(List.of(n + " calls", "per event"));
        }
        MarkdownTable t = new MarkdownTable(header.toArray(String[]::new)).align("l" + "rr".repeat(names.size()));
        Map<String, Long> overall = new HashMap<>();
        calls.values().forEach(c -> c.forEach((k, v) -> overall.merge(k, v, Long::sum)));
        List<String> top = overall.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder())).limit(15)
                .map(Map.Entry::getKey).toList();
        for (String call : top) {
            row(t, call, names, n -> calls.get(n).getOrDefault(call, 0L), phases);
        }
        row(t, "**reads** (" + String.join(", ", READS) + ")", names, n -> sum(calls.get(n), READS), phases);
        row(t, "**writes** (" + String.join(", ", WRITES) + ")", names, n -> sum(calls.get(n), WRITES), phases);
        row(t, "**all**", names, n -> calls.get(n).values().stream().mapToLong(Long::longValue).sum(), phases);
        StringBuilder sb = new StringBuilder("System calls at " + level + " paced streams, one phase per proxy under "
                + "`strace -c -f` (the sidecar's JVM: all its threads; nginx: its workers); per event = calls ÷ token "
                + "events the client received (");
        List<String> seen = new ArrayList<>();
        phases.forEach((n, p) -> seen.add(String.format(Locale.ROOT, "%s: %d events, %d streams, %.1f s", n,
                p.getLong("tokenEvents", 0L), p.getLong("streams", 0L), p.getDouble("seconds", 0.0))));
        return sb.append(String.join("; ", seen)).append("). strace stops the traced thread at every call: the phase "
                + "runs slower, and a read may carry more events than without it.\n\n").append(t).toString();
    }

    private static void row(MarkdownTable t, String what, List<String> names,
            java.util.function.ToLongFunction<String> count, Map<String, JsonObject> phases) {
        List<Object> cells = new ArrayList<>(List.of(what));
        for (String n : names) {
            long c = count.applyAsLong(n);
            long ev = phases.get(n).getLong("tokenEvents", 0L);
            cells.add(c);
            cells.add(ev > 0 ? Fmt.fixed((double) c / ev, 2) : Fmt.NONE);
        }
        t.row(cells.toArray());
    }

    private static long sum(Map<String, Long> calls, List<String> which) {
        return which.stream().mapToLong(c -> calls.getOrDefault(c, 0L)).sum();
    }
}
