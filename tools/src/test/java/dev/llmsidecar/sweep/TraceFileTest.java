package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The two trace formats, told apart by their fields; every bad line named by its number; the merge; the sampling. */
class TraceFileTest {

    /** A line as the sidecar's recorder writes it (docs/sweep.md, "Trace format"). */
    static final String RECORDED = """
            {"timestamp":250,"input_length":1100,"output_length":64,"hash_ids":[7,8,9],"session_id":"9f3a01",\
            "arrival_unix_ms":1767225600250,"model":"llama","operation":"chat","slo_class":"interactive",\
            "tenant":"t1","outcome":"ok","ttft_ms":182.5,"tpot_ms":21.0,"e2e_ms":1505.2,\
            "input_length_source":"usage","output_length_source":"usage"}
            # a comment, then a line written earlier for a request that arrived first (files are in end order)
            {"timestamp":0,"input_length":512,"output_length":0,"hash_ids":[7],"outcome":"upstream_error",\
            "model":"llama","ttft_ms":null}

            {"timestamp":250,"input_length":1,"output_length":3,"hash_ids":[9007199254740991],"model":"qwen"}
            """;

    @Test
    void aRecordedTraceIsReadSortedByTimestampWithItsFields() {
        TraceFile t = TraceFile.parse(RECORDED, "day.jsonl");
        assertThat(t.recorded()).isTrue();
        assertThat(t.shapes()).isEmpty();
        List<TraceRecord> r = t.records();
        assertThat(r).extracting(TraceRecord::timestampMs).containsExactly(0L, 250L, 250L);
        assertThat(r).extracting(TraceRecord::line).containsExactly(3, 1, 5); // stable among equal timestamps
        TraceRecord first = r.get(1);
        assertThat(first.inputLength()).isEqualTo(1100);
        assertThat(first.outputLength()).isEqualTo(64);
        assertThat(first.hashIds()).containsExactly(7, 8, 9);
        assertThat(first.sessionId()).isEqualTo("9f3a01");
        assertThat(first.model()).isEqualTo("llama");
        assertThat(first.outcome()).isEqualTo("ok");
        assertThat(r.get(0).outputLength()).isZero();
        assertThat(r.get(0).sessionId()).isNull();
        assertThat(r.get(2).hashIds()).containsExactly(TraceFile.MAX_HASH_ID);
        assertThat(t.recordsOf("qwen")).hasSize(1);
        assertThat(TraceFile.spanMs(r)).isEqualTo(250);
        assertThatThrownBy(() -> t.recordsOf("mistral")).hasMessageContaining("--trace-model mistral")
                .hasMessageContaining("[llama, qwen]");
    }

    @Test
    void theLengthOnlyFormatStillWorks() {
        TraceFile t = TraceFile.parse("{\"input_tokens\": 10, \"output_tokens\": 5}\n{\"input_tokens\": 3, "
                + "\"output_tokens\": 1, \"note\": 1}\n", "old.jsonl");
        assertThat(t.recorded()).isFalse();
        assertThat(t.shapes()).containsExactly(new RequestShapes.Shape(10, 5), new RequestShapes.Shape(3, 1));
        assertThatThrownBy(() -> RequestShapes.parseTrace(RECORDED, "day")).hasMessageContaining("recorded trace");
    }

    @Test
    void everyBadLineIsRefusedWithItsNumber() {
        String ok = "{\"timestamp\":0,\"input_length\":10,\"output_length\":1,\"hash_ids\":[1]}\n";
        String[][] bad = {
            {ok + "{\"timestamp\":5,\"input_length\":10}", "t:2", "output_length"},
            {ok + "{\"timestamp\":5.5,\"input_length\":10,\"output_length\":1}", "t:2", "\"timestamp\" must be a whole"},
            {ok + "{\"timestamp\":-1,\"input_length\":10,\"output_length\":1}", "t:2", "timestamp"},
            {ok + "{\"timestamp\":\"5\",\"input_length\":10,\"output_length\":1}", "t:2", "timestamp"},
            {ok + "{\"timestamp\":5,\"input_length\":0,\"output_length\":1}", "t:2", "input_length"},
            {ok + "{\"timestamp\":5,\"input_length\":1025,\"output_length\":1,\"hash_ids\":[1,2]}", "t:2",
                "needs ceil(1025 / 512) = 3"},
            {ok + "{\"timestamp\":5,\"input_length\":10,\"output_length\":1,\"hash_ids\":[1.5]}", "t:2",
                "\"hash_ids\"[0] must be an integer"},
            {ok + "{\"timestamp\":5,\"input_length\":10,\"output_length\":1,\"hash_ids\":[9007199254740992]}", "t:2",
                "2^53"},
            {ok + "{\"timestamp\":5,\"input_length\":10,\"output_length\":1,\"hash_ids\":\"1\"}", "t:2",
                "list of integers"},
            {ok + "{\"timestamp\":5,\"input_length\":10,\"output_length\":1,\"session_id\":42}", "t:2",
                "\"session_id\" must be a string"},
            {ok + "{\"timestamp\":5,\"input_length\":10,\"output_length\":1,\"model\":7}", "t:2", "\"model\""},
            {ok + "\n\n{\"input_tokens\":1,\"output_tokens\":1}", "t:4", "no \"timestamp\""},
            {"{\"input_tokens\":1,\"output_tokens\":1}\n" + ok, "t:2", "in a length-only trace"},
            {ok + "{\"hash_ids\":[1],\"input_length\":10,\"output_length\":1}", "t:2", "\"timestamp\" is missing"},
            {ok + "not json", "t:2", "not a JSON object"},
            {"# nothing\n", "t", "no requests"}};
        for (String[] b : bad) {
            assertThatThrownBy(() -> TraceFile.parse(b[0], "t")).as(b[0]).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(b[1] + ":").hasMessageContaining(b[2]);
        }
    }

    @Test
    void mergeSortsReplicasByArrivalRebasesTimestampsAndKeepsEveryOtherField(@TempDir Path dir) throws Exception {
        Path a = dir.resolve("a.jsonl");
        Path b = dir.resolve("b.jsonl");
        // replica a's file is in end order (its second line arrived first); b's first request arrived before a's
        Files.writeString(a, """
                {"timestamp":900,"arrival_unix_ms":1000900,"input_length":5,"output_length":1,"hash_ids":[1],"tenant":"x"}
                {"timestamp":0,"arrival_unix_ms":1000000,"input_length":600,"output_length":2,"hash_ids":[1,2],"session_id":"s"}
                """);
        Files.writeString(b, """
                # replica b
                {"timestamp":0,"arrival_unix_ms":999500,"input_length":7,"output_length":3,"hash_ids":[3],"ttft_ms":12.5}
                {"timestamp":500,"arrival_unix_ms":1000000,"input_length":8,"output_length":4,"hash_ids":[4],"outcome":"ok"}
                """);
        Path out = dir.resolve("merged.jsonl");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = TraceMerge.run(new String[] {"-o", out.toString(), a.toString(), b.toString()},
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(status).as(err.toString(StandardCharsets.UTF_8)).isZero();
        List<JsonObject> merged = new ArrayList<>();
        for (String l : Files.readAllLines(out)) {
            merged.add(new JsonObject(l));
        }
        assertThat(merged).extracting(o -> o.getLong("arrival_unix_ms")).containsExactly(999500L, 1000000L, 1000000L,
                1000900L);
        assertThat(merged).extracting(o -> o.getLong("timestamp")).containsExactly(0L, 500L, 500L, 1400L);
        // a tie in arrival: file order (a before b)
        assertThat(merged.get(1).getString("session_id")).isEqualTo("s");
        assertThat(merged.get(2).getString("outcome")).isEqualTo("ok");
        assertThat(merged.get(0).getDouble("ttft_ms")).isEqualTo(12.5);
        assertThat(merged.get(3).getString("tenant")).isEqualTo("x");
        assertThat(merged.get(1).getJsonArray("hash_ids").getList()).containsExactly(1, 2);
        assertThat(merged.get(0).fieldNames()).containsExactly("timestamp", "arrival_unix_ms", "input_length",
                "output_length", "hash_ids", "ttft_ms");
        // the merged file is itself a recorded trace
        assertThat(TraceFile.read(out).records()).hasSize(4);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("4 records from 2 files");

        Files.writeString(b, "{\"timestamp\":0,\"input_length\":7,\"output_length\":3}\n");
        err.reset();
        assertThat(TraceMerge.run(new String[] {a.toString(), b.toString()}, new PrintStream(
                new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8))).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("b.jsonl:1:", "arrival_unix_ms");
        assertThat(TraceMerge.run(new String[] {}, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(err))).isEqualTo(2);
    }

    /** Records of two keys have ids that never match: the merge refuses them unless told to merge anyway. */
    @Test
    void filesOfDifferentKeysAreMergedOnlyWhenAskedTo(@TempDir Path dir) throws Exception {
        Path a = Files.writeString(dir.resolve("a.jsonl"), "{\"timestamp\":0,\"arrival_unix_ms\":1000,"
                + "\"input_length\":7,\"output_length\":3,\"hash_ids\":[1],\"key_id\":\"00aa00aa00aa00aa\"}\n");
        Path b = Files.writeString(dir.resolve("b.jsonl"), "{\"timestamp\":0,\"arrival_unix_ms\":1500,"
                + "\"input_length\":7,\"output_length\":3,\"hash_ids\":[1],\"key_id\":\"11bb11bb11bb11bb\"}\n");
        Path same = Files.writeString(dir.resolve("c.jsonl"), "{\"timestamp\":0,\"arrival_unix_ms\":2000,"
                + "\"input_length\":7,\"output_length\":3,\"hash_ids\":[1],\"key_id\":\"00aa00aa00aa00aa\"}\n");
        Path out = dir.resolve("merged.jsonl");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream errs = new PrintStream(err, true, StandardCharsets.UTF_8);
        assertThat(TraceMerge.run(new String[] {"-o", out.toString(), a.toString(), b.toString()},
                new PrintStream(new ByteArrayOutputStream()), errs)).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("2 different keys", "00aa00aa00aa00aa",
                "11bb11bb11bb11bb", "--allow-mixed-keys");
        assertThat(out).doesNotExist();
        assertThat(TraceMerge.run(new String[] {"-o", out.toString(), a.toString(), same.toString()},
                new PrintStream(new ByteArrayOutputStream()), errs)).isZero();
        assertThat(Files.readAllLines(out)).hasSize(2);
        err.reset();
        assertThat(TraceMerge.run(new String[] {"-o", out.toString(), "--allow-mixed-keys", a.toString(),
                b.toString()}, new PrintStream(new ByteArrayOutputStream()), errs)).isZero();
        assertThat(Files.readAllLines(out)).hasSize(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("merging records of 2 keys");
        // records from before key ids count as a key of their own ("none")
        Path old = Files.writeString(dir.resolve("old.jsonl"), "{\"timestamp\":0,\"arrival_unix_ms\":500,"
                + "\"input_length\":7,\"output_length\":3,\"hash_ids\":[1]}\n");
        err.reset();
        assertThat(TraceMerge.run(new String[] {"-o", out.toString(), old.toString(), a.toString()},
                new PrintStream(new ByteArrayOutputStream()), errs)).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("none (first in " + old + ")");
    }

    /** Records every {@code gapMs} ms, timestamps 0, gap, 2 gap ... */
    static List<TraceRecord> evenly(int n, long gapMs) {
        List<TraceRecord> r = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            r.add(new TraceRecord(i * gapMs, 10, 1, new long[] {i}, null, null, null, Double.NaN, i + 1));
        }
        return r;
    }

    @Test
    void aLongTraceIsCutToTheStepAsAWindowOrAUniformSample() {
        List<TraceRecord> day = evenly(1000, 100); // 99.9 s of trace, 10 req/s
        // 10 s of wall time at speed-up 2 covers 20 s of trace: the first 200 records, sent at timestamp / 2
        TraceReplay w = TraceReplay.plan(day, 2, 10, SweepOptions.TraceSample.WINDOW, null, 1);
        assertThat(w.records()).hasSize(200);
        assertThat(w.offsetsNanos()[199]).isEqualTo(199 * 100 * 1_000_000L / 2);
        assertThat(w.description()).contains("contiguous window [0 s, 20 s)", "200 of 1000", "speed-up 2");
        TraceReplay later = TraceReplay.plan(day, 2, 10, SweepOptions.TraceSample.WINDOW, "30", 1);
        assertThat(later.records().get(0).hashIds()).containsExactly(300);
        assertThat(later.records().get(0).timestampMs()).isZero();
        // a uniform sample keeps about a fifth of the records, over the whole day compressed 5 times: same mean rate
        TraceReplay u = TraceReplay.plan(day, 2, 10, SweepOptions.TraceSample.UNIFORM, null, 1);
        assertThat(u.records().size()).isBetween(150, 250);
        assertThat(u.records().get(u.records().size() - 1).hashIds()[0]).isGreaterThan(900);
        assertThat(u.records().get(u.records().size() - 1).timestampMs()).isLessThanOrEqualTo(20_000);
        assertThat(u.description()).contains("uniform sample");
        // a step longer than the trace takes all of it
        assertThat(TraceReplay.plan(day, 1, 200, SweepOptions.TraceSample.WINDOW, null, 1).records()).hasSize(1000);
        // the busiest window: a burst of 50 records within 1 s at 60 s
        List<TraceRecord> bursty = new ArrayList<>(day);
        for (int i = 0; i < 50; i++) {
            bursty.add(new TraceRecord(60_000 + i * 20, 10, 1, null, null, null, null, Double.NaN, 2000 + i));
        }
        bursty.sort(java.util.Comparator.comparingLong(TraceRecord::timestampMs));
        TraceReplay busiest = TraceReplay.plan(bursty, 1, 2, SweepOptions.TraceSample.WINDOW, "busiest", 1);
        assertThat(busiest.records()).hasSizeGreaterThanOrEqualTo(60);
        assertThat(busiest.description()).contains("the busiest");
        assertThatThrownBy(() -> TraceReplay.plan(day, 1, 2, SweepOptions.TraceSample.WINDOW, "500", 1))
                .hasMessageContaining("spans only");
    }
}
