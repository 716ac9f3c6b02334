package dev.llmsidecar.sweep;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A {@code --trace} file, JSONL, in one of two formats told apart by the fields of its first request line:
 *
 * <ul>
 *   <li><b>length-only</b> (the sweep's first format): {@code {"input_tokens":N,"output_tokens":M}} per line, replayed
 *       in order and cycled at the sweep's own arrivals;
 *   <li><b>recorded</b> (the sidecar's trace recorder; Mooncake's fields as AIPerf's {@code mooncake_trace} reads
 *       them): a line with {@code timestamp} or {@code hash_ids}, see {@link TraceRecord} and docs/sweep.md "Trace
 *       format". Its records are sorted by {@code timestamp} (stable: a recorder writes a line when its request
 *       ends, so a file is not necessarily in arrival order).
 * </ul>
 *
 * Blank lines and lines starting with {@code #} are skipped. A bad line fails with the file name and its line number.
 */
public final class TraceFile {

    /** The largest hash id: ids are integers below 2^53, exact in a double (JavaScript, Python's json, jq). */
    static final long MAX_HASH_ID = (1L << 53) - 1;

    private final String name;
    private final List<RequestShapes.Shape> shapes;
    private final List<TraceRecord> records;

    private TraceFile(String name, List<RequestShapes.Shape> shapes, List<TraceRecord> records) {
        this.name = name;
        this.shapes = shapes;
        this.records = records;
    }

    public static TraceFile read(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8), file.getFileName().toString());
    }

    /** Parses JSONL text; {@code name} prefixes every error message ({@code name:line: ...}). */
    public static TraceFile parse(String text, String name) {
        List<RequestShapes.Shape> shapes = new ArrayList<>();
        List<TraceRecord> records = new ArrayList<>();
        Boolean recorded = null;
        int lineNo = 0;
        for (String line : text.split("\r?\n")) {
            lineNo++;
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            JsonObject o = object(l, name, lineNo);
            boolean isRecorded = o.containsKey("timestamp") || o.containsKey("hash_ids");
            if (recorded == null) {
                recorded = isRecorded;
            } else if (recorded != isRecorded) {
                throw new IllegalArgumentException(name + ":" + lineNo + ": " + (recorded
                        ? "no \"timestamp\": the first line made this a recorded trace (timestamp, input_length, "
                                + "output_length, hash_ids ...)"
                        : "a recorded-trace line (timestamp / hash_ids) in a length-only trace (input_tokens, "
                                + "output_tokens)"));
            }
            if (isRecorded) {
                records.add(record(o, name, lineNo));
            } else {
                shapes.add(new RequestShapes.Shape(whole(o, "input_tokens", 1, name, lineNo),
                        whole(o, "output_tokens", 1, name, lineNo)));
            }
        }
        if (recorded == null) {
            throw new IllegalArgumentException(name + ": no requests in the trace");
        }
        records.sort(Comparator.comparingLong(TraceRecord::timestampMs));
        return new TraceFile(name, List.copyOf(shapes), List.copyOf(records));
    }

    /** One line as a JSON object, or a message naming the line. */
    static JsonObject object(String line, String name, int lineNo) {
        try {
            return new JsonObject(line);
        } catch (DecodeException | ClassCastException e) {
            throw new IllegalArgumentException(name + ":" + lineNo + ": not a JSON object: " + abbreviate(line));
        }
    }

    private static TraceRecord record(JsonObject o, String name, int lineNo) {
        if (!o.containsKey("timestamp")) {
            throw new IllegalArgumentException(name + ":" + lineNo + ": \"timestamp\" is missing (integer milliseconds "
                    + "from the first arrival)");
        }
        long timestamp = wholeLong(o, "timestamp", 0, Long.MAX_VALUE, name, lineNo);
        int input = whole(o, "input_length", 1, name, lineNo);
        int output = whole(o, "output_length", 0, name, lineNo);
        long[] hashIds = null;
        Object h = o.getValue("hash_ids");
        if (h != null) {
            if (!(h instanceof JsonArray a)) {
                throw new IllegalArgumentException(name + ":" + lineNo + ": \"hash_ids\" must be a list of integers, "
                        + "got " + abbreviate(String.valueOf(h)));
            }
            hashIds = new long[a.size()];
            for (int i = 0; i < a.size(); i++) {
                Object v = a.getValue(i);
                if (!(v instanceof Integer || v instanceof Long) || ((Number) v).longValue() < 0
                        || ((Number) v).longValue() > MAX_HASH_ID) {
                    throw new IllegalArgumentException(name + ":" + lineNo + ": \"hash_ids\"[" + i + "] must be an "
                            + "integer from 0 to 2^53 - 1, got " + v);
                }
                hashIds[i] = ((Number) v).longValue();
            }
            if (hashIds.length != TraceRecord.blocks(input)) {
                throw new IllegalArgumentException(name + ":" + lineNo + ": \"hash_ids\" has " + hashIds.length
                        + " ids but input_length " + input + " needs ceil(" + input + " / 512) = "
                        + TraceRecord.blocks(input) + " (one per 512-token block; AIPerf refuses the line too)");
            }
        }
        Object session = o.getValue("session_id");
        if (session != null && !(session instanceof String)) {
            throw new IllegalArgumentException(name + ":" + lineNo + ": \"session_id\" must be a string (AIPerf's "
                    + "MooncakeTrace has session_id: str | None and refuses a number), got " + session);
        }
        String conversation = string(o, "conversation_id", name, lineNo);
        Object e2e = o.getValue("e2e_ms");
        if (e2e != null && !(e2e instanceof Number n && n.doubleValue() >= 0 && Double.isFinite(n.doubleValue()))) {
            throw new IllegalArgumentException(name + ":" + lineNo + ": \"e2e_ms\" must be a number >= 0, got " + e2e);
        }
        return new TraceRecord(timestamp, input, output, hashIds, conversation != null ? conversation : (String) session,
                string(o, "model", name, lineNo), string(o, "outcome", name, lineNo),
                e2e == null ? Double.NaN : ((Number) e2e).doubleValue(), lineNo);
    }

    private static String string(JsonObject o, String key, String name, int lineNo) {
        Object v = o.getValue(key);
        if (v != null && !(v instanceof String)) {
            throw new IllegalArgumentException(name + ":" + lineNo + ": \"" + key + "\" must be a string, got " + v);
        }
        return (String) v;
    }

    private static int whole(JsonObject o, String key, int min, String name, int lineNo) {
        return (int) wholeLong(o, key, min, Integer.MAX_VALUE, name, lineNo);
    }

    /** A whole number in [min, max]: an integer, or a number with no fraction (1000.0). */
    static long wholeLong(JsonObject o, String key, long min, long max, String name, int lineNo) {
        Object v = o.getValue(key);
        if (!(v instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue()) || n.doubleValue() < min
                || n.doubleValue() > max) {
            throw new IllegalArgumentException(name + ":" + lineNo + ": \"" + key + "\" must be a whole number >= "
                    + min + ", got " + (v == null ? "nothing" : v));
        }
        return n.longValue();
    }

    private static String abbreviate(String s) {
        return s.length() <= 120 ? s : s.substring(0, 117) + "...";
    }

    public String name() {
        return name;
    }

    /** True for a recorded trace (timestamps, hash ids), false for a length-only one. */
    public boolean recorded() {
        return !records.isEmpty();
    }

    /** The length-only trace's shapes, in file order (empty for a recorded trace). */
    public List<RequestShapes.Shape> shapes() {
        return shapes;
    }

    /** The recorded trace's records by timestamp (empty for a length-only trace). */
    public List<TraceRecord> records() {
        return records;
    }

    /** Only the records recorded for {@code model} ({@code --trace-model}); fails when none is. */
    public List<TraceRecord> recordsOf(String model) {
        if (model == null) {
            return records;
        }
        List<TraceRecord> out = records.stream().filter(r -> model.equals(r.model())).toList();
        if (out.isEmpty()) {
            throw new IllegalArgumentException("--trace-model " + model + ": no record of " + name + " has that model ("
                    + "it has " + records.stream().map(TraceRecord::model).distinct().sorted(
                            Comparator.nullsFirst(Comparator.naturalOrder())).toList() + ")");
        }
        return out;
    }

    /** The time from the first to the last arrival, milliseconds. */
    public static long spanMs(List<TraceRecord> sorted) {
        return sorted.isEmpty() ? 0 : sorted.get(sorted.size() - 1).timestampMs() - sorted.get(0).timestampMs();
    }
}
