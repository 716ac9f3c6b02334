package dev.llmsidecar.sweep;

import io.vertx.core.json.JsonObject;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * {@code bin/trace-merge}: several recorded trace files (one per sidecar replica, or per rotated file) into one, by
 * absolute arrival time: every record of every file sorted by {@code arrival_unix_ms} (ties: file order, then line
 * order), {@code timestamp} rewritten as milliseconds from the merged file's first arrival, every other field kept as
 * it is. Blank and {@code #} lines are dropped. A line without a whole-number {@code arrival_unix_ms} fails the merge
 * with its file and line number. Records made under different keys ({@code key_id}; none before 2026-11-29) have ids
 * that never match, so the merge refuses them unless {@code --allow-mixed-keys}. The files are held in memory as text
 * (about their size on disk).
 *
 * <p>{@code --for aiperf} writes, instead of the records, rows that AIPerf's {@code mooncake_trace} loader replays as
 * the conversations they were ({@link AiperfTrace}): per turn only its new input, {@code session_id} and {@code delay}
 * as that loader means them, requests that failed left out.
 */
public final class TraceMerge {

    private TraceMerge() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** One line to place: its arrival, where it came from, its text. */
    private record Line(long arrival, int file, int lineNo, String text) {
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        Path output = null;
        boolean allowMixedKeys = false;
        boolean forAiperf = false;
        List<Path> inputs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "-h", "--help" -> {
                    out.print("""
                            bin/trace-merge: merge recorded trace files (JSONL, the sidecar's trace recorder) by
                            arrival_unix_ms into one; timestamp becomes milliseconds from the merged start, every
                            other field is kept. docs/capacity-guide.md.

                            Usage: bin/trace-merge [-o OUT.jsonl] [--for aiperf] [--allow-mixed-keys] FILE.jsonl ...
                              -o, --out FILE       where to write (default: standard output)
                              --for aiperf         rows for AIPerf's mooncake_trace loader (0.6.0, and the
                                                   deltas_without_responses mode of later versions): each
                                                   conversation's turns with only their new input, session_id and
                                                   delay as that loader means them; failed requests left out.
                                                   docs/sweep.md, "For AIPerf"
                              --allow-mixed-keys   merge records of different keys (key_id): their hash ids and
                                                   sessions never match across keys, so prefix sharing between them
                                                   is lost; refused without it
                            """);
                    return 0;
                }
                case "-o", "--out" -> {
                    if (i + 1 >= args.length) {
                        err.println("trace-merge: " + args[i] + " needs a file");
                        return 2;
                    }
                    output = Path.of(args[++i]);
                }
                case "--allow-mixed-keys" -> allowMixedKeys = true;
                case "--for" -> {
                    if (i + 1 >= args.length || !args[i + 1].equals("aiperf")) {
                        err.println("trace-merge: --for takes aiperf (the only tool whose reading of conversations "
                                + "differs from the records')");
                        return 2;
                    }
                    i++;
                    forAiperf = true;
                }
                default -> {
                    if (args[i].startsWith("-") && args[i].length() > 1) {
                        err.println("trace-merge: unknown option " + args[i] + " (bin/trace-merge --help)");
                        return 2;
                    }
                    inputs.add(Path.of(args[i]));
                }
            }
        }
        if (inputs.isEmpty()) {
            err.println("trace-merge: give the trace files to merge (bin/trace-merge --help)");
            return 2;
        }
        try {
            List<Line> lines = read(inputs);
            java.util.Map<String, String> keys = keys(lines, inputs);
            if (keys.size() > 1) {
                String which = String.join(", ", keys.entrySet().stream().map(e -> e.getKey() + " (first in "
                        + e.getValue() + ")").toList());
                if (!allowMixedKeys) {
                    err.println("trace-merge: the files were recorded under " + keys.size() + " different keys: "
                            + which + "; their ids never match across keys. Merge each key's files apart, or give "
                            + "--allow-mixed-keys to merge anyway");
                    return 1;
                }
                err.println("trace-merge: merging records of " + keys.size() + " keys (--allow-mixed-keys): " + which);
            }
            long base = lines.isEmpty() ? 0 : lines.get(0).arrival();
            List<JsonObject> merged = new ArrayList<>(lines.size());
            for (Line l : lines) {
                merged.add(new JsonObject(l.text()).put("timestamp", l.arrival() - base));
            }
            AiperfTrace aiperf = forAiperf ? AiperfTrace.of(merged) : null;
            try (Writer w = output == null
                    ? new BufferedWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8))
                    : Files.newBufferedWriter(output, StandardCharsets.UTF_8)) {
                for (JsonObject o : aiperf == null ? merged : aiperf.rows()) {
                    w.write(o.encode());
                    w.write('\n');
                }
            }
            long span = lines.isEmpty() ? 0 : lines.get(lines.size() - 1).arrival() - base;
            err.printf(Locale.ROOT, "trace-merge: %d records from %d files, %s s from first to last arrival%s%n",
                    lines.size(), inputs.size(), Report.f3(span / 1000.0), output == null ? "" : ", written to "
                            + output);
            if (aiperf != null) {
                AiperfTrace.Summary s = aiperf.summary();
                err.printf(Locale.ROOT, "trace-merge: for AIPerf (loader of %s): %d rows, %d conversations with %d "
                        + "later turns; %d later turns' new input clamped to 1 (shorter than the turn before: a "
                        + "truncated or summarised history, a regeneration); %d outputs of 0 sent as 1; left out: %s%n",
                        AiperfTrace.AIPERF_COMMIT, s.rows(), s.conversations(), s.laterTurns(), s.inputClamps(),
                        s.outputClamps(), s.leftOut().isEmpty() ? "none" : s.leftOut().toString());
            }
            return 0;
        } catch (IllegalArgumentException | IOException e) {
            err.println("trace-merge: " + e.getMessage());
            return 1;
        }
    }

    /** The key ids of the records ("none" for records without one), each with the first file it appears in. */
    static java.util.Map<String, String> keys(List<Line> lines, List<Path> inputs) {
        java.util.Map<String, String> keys = new java.util.TreeMap<>();
        for (Line l : lines) {
            Object id = new JsonObject(l.text()).getValue("key_id");
            keys.putIfAbsent(id instanceof String s ? s : "none", inputs.get(l.file()).toString());
        }
        return keys;
    }

    /** Every record line of every file, sorted by arrival. */
    static List<Line> read(List<Path> inputs) throws IOException {
        List<Line> lines = new ArrayList<>();
        for (int f = 0; f < inputs.size(); f++) {
            Path p = inputs.get(f);
            String name = p.toString();
            int lineNo = 0;
            for (String line : Files.readAllLines(p, StandardCharsets.UTF_8)) {
                lineNo++;
                String l = line.strip();
                if (l.isEmpty() || l.startsWith("#")) {
                    continue;
                }
                JsonObject o = TraceFile.object(l, name, lineNo);
                lines.add(new Line(TraceFile.wholeLong(o, "arrival_unix_ms", 0, Long.MAX_VALUE, name, lineNo), f,
                        lineNo, l));
            }
        }
        lines.sort(Comparator.comparingLong(Line::arrival).thenComparingInt(Line::file)
                .thenComparingInt(Line::lineNo));
        return lines;
    }
}
