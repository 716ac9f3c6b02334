package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/trace-merge --for aiperf} against a committed golden sample, and the golden sample against the rules of
 * the AIPerf loader it is written for, read from its source (esoba/aiperf at v0.6.0, commit
 * 0746a7cdeb259f365e1124ffa94b2a976207b668; AIPerf cannot be installed here), so that a change to the conversion shows
 * as a changed golden file and a golden file that the loader would misread fails here:
 *
 * <ul>
 *   <li>{@code dataset/loader/models.py} {@code MooncakeTrace}: {@code input_length: int}, {@code output_length: int},
 *       {@code hash_ids: list[int]}, {@code timestamp} and {@code delay: int | float} (ms), {@code session_id: str};
 *   <li>{@code dataset/generator/prompt.py}: the last block, {@code input_length - (len(hash_ids) - 1) * 512}, must be
 *       in (0, 512], else a ConfigurationError;
 *   <li>{@code dataset/loader/mooncake_trace.py}: rows grouped by {@code session_id} in file order are one
 *       conversation's turns, the worker sending each after every earlier turn and its live answer;
 *   <li>{@code timing/strategies/fixed_schedule.py}: a conversation's first turn needs a timestamp; a later turn
 *       without one is sent {@code delay} ms after the previous turn's answer returned; {@code output_length} is sent
 *       as {@code max_tokens} (0 as 0).
 * </ul>
 */
class AiperfTraceTest {

    static final Path RECORDED = Path.of("src/test/resources/aiperf/recorded.jsonl");
    static final Path GOLDEN = Path.of("src/test/resources/aiperf/golden.jsonl");
    static final int BLOCK = 512;
    static final Set<String> LOADER_FIELDS = Set.of("session_id", "timestamp", "delay", "input_length",
            "output_length", "hash_ids");

    @TempDir
    Path dir;

    @Test
    void mergeForAiperfWritesTheGoldenSample() throws IOException {
        assertThat(TraceFile.read(RECORDED).records()).as("the sample reads as recorder files do").hasSize(17);
        Path out = dir.resolve("aiperf.jsonl");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = TraceMerge.run(new String[] {"--for", "aiperf", "-o", out.toString(), RECORDED.toString()},
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isZero();
        assertThat(Files.readString(out)).isEqualTo(Files.readString(GOLDEN));
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("15 rows, 4 conversations with 8 later turns; 1 "
                + "later turns' new input clamped to 1").contains("1 outputs of 0 sent as 1")
                .contains("left out: {client_cancelled=1, upstream_error=1}");
    }

    @Test
    void forTakesOnlyAiperf() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(TraceMerge.run(new String[] {"--for", "vllm", RECORDED.toString()}, new PrintStream(
                new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8))).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--for takes aiperf");
    }

    @Test
    void theGoldenSampleFollowsThePinnedLoadersRules() throws IOException {
        List<JsonObject> rows = lines(GOLDEN);
        assertThat(rows.get(0).containsKey("timestamp")).as("a first row with a timestamp: the fixed schedule").isTrue();
        Map<String, List<JsonObject>> sessions = new LinkedHashMap<>();
        int singles = 0;
        for (JsonObject row : rows) {
            assertThat(LOADER_FIELDS).as("only the loader's fields (no type, text_input, extra)")
                    .containsAll(row.fieldNames());
            assertThat(row.getValue("input_length")).isInstanceOf(Integer.class);
            assertThat(row.getInteger("input_length")).isPositive();
            assertThat(row.getValue("output_length")).as("an int, sent as max_tokens").isInstanceOf(Integer.class);
            assertThat(row.getInteger("output_length")).as("never max_tokens 0").isPositive();
            JsonArray ids = row.getJsonArray("hash_ids");
            for (Object id : ids) {
                assertThat(id).isInstanceOfAny(Integer.class, Long.class);
                assertThat(((Number) id).longValue()).isBetween(0L, (1L << 53) - 1);
            }
            int last = row.getInteger("input_length") - (ids.size() - 1) * BLOCK;
            assertThat(last).as("prompt.py: the final block in (0, 512]").isGreaterThan(0).isLessThanOrEqualTo(BLOCK);
            assertThat(row.containsKey("timestamp") ^ row.containsKey("delay")).as("a time, one of the two").isTrue();
            for (String time : List.of("timestamp", "delay")) {
                if (row.containsKey(time)) {
                    assertThat(row.getValue(time)).isInstanceOfAny(Integer.class, Long.class);
                    assertThat(row.getLong(time)).isNotNegative();
                }
            }
            Object session = row.getValue("session_id");
            if (session == null) {
                singles++;
                assertThat(row.containsKey("timestamp")).as("a request of its own needs its time").isTrue();
                continue;
            }
            assertThat(session).isInstanceOf(String.class);
            sessions.computeIfAbsent((String) session, k -> new ArrayList<>()).add(row);
        }
        for (List<JsonObject> turns : sessions.values()) {
            assertThat(turns.get(0).containsKey("timestamp")).as("fixed_schedule.py: a first turn's timestamp")
                    .isTrue();
            turns.subList(1, turns.size()).forEach(t -> assertThat(t.containsKey("delay")).isTrue());
        }
        assertThat(singles).isEqualTo(3);
        assertThat(sessions).hasSize(4);
        replaysAsRecorded(sessions);
    }

    /**
     * Each session replayed as the loader does, every earlier turn and its answer ({@code output_length} tokens)
     * before its new input, each turn its recorded time after the last: the engine sees each recorded prompt again
     * (plus the earlier turns' reasoning, which the replay's answers hold and the clients did not resend), and each
     * turn arrives when it did (to the millisecond the delays are rounded to).
     */
    private void replaysAsRecorded(Map<String, List<JsonObject>> sessions) throws IOException {
        Map<String, List<JsonObject>> recorded = new LinkedHashMap<>();
        int ok = 0;
        for (JsonObject r : lines(RECORDED)) {
            if (!"ok".equals(r.getString("outcome"))) {
                continue;
            }
            ok++;
            String id = r.getString("conversation_id", r.getString("session_id"));
            if (id != null) {
                recorded.computeIfAbsent(id, k -> new ArrayList<>()).add(r);
            }
        }
        recorded.values().forEach(l -> l.sort((a, b) -> Long.compare(a.getLong("arrival_unix_ms"),
                b.getLong("arrival_unix_ms"))));
        assertThat(sessions.values().stream().mapToInt(List::size).sum() + 3).as("failed requests left out")
                .isEqualTo(ok);
        assertThat(sessions.keySet()).isEqualTo(recorded.keySet());
        for (Map.Entry<String, List<JsonObject>> e : sessions.entrySet()) {
            List<JsonObject> turns = e.getValue();
            List<JsonObject> truth = recorded.get(e.getKey());
            assertThat(turns).hasSameSizeAs(truth);
            long prompt = 0;
            long reasoningBefore = 0;
            long arrival = truth.get(0).getLong("arrival_unix_ms");
            for (int n = 0; n < turns.size(); n++) {
                JsonObject row = turns.get(n);
                JsonObject was = truth.get(n);
                if (n > 0) {
                    JsonObject before = truth.get(n - 1);
                    prompt += turns.get(n - 1).getInteger("output_length");
                    reasoningBefore += before.getLong("reasoning_length", 0L);
                    arrival += Math.round(before.getDouble("e2e_ms")) + row.getLong("delay");
                    assertThat((double) arrival).as(e.getKey() + " turn " + (n + 1) + " arrives as recorded")
                            .isCloseTo(was.getLong("arrival_unix_ms"), org.assertj.core.data.Offset.offset(1.0));
                }
                prompt += row.getInteger("input_length");
                assertThat(row.getInteger("output_length")).isEqualTo(was.getInteger("output_length"));
                long expected = was.getLong("input_length") + reasoningBefore;
                if (e.getKey().equals("0d1c2b3a49586776") && n == 1) {
                    // a regeneration: the same prompt again, which a replayed conversation cannot say; clamped
                    assertThat(row.getInteger("input_length")).isEqualTo(1);
                    prompt = expected;
                    continue;
                }
                assertThat(prompt).as(e.getKey() + " turn " + (n + 1) + "'s prompt as the engine sees it")
                        .isEqualTo(expected);
            }
        }
    }

    static List<JsonObject> lines(Path p) throws IOException {
        List<JsonObject> out = new ArrayList<>();
        for (String l : Files.readAllLines(p, StandardCharsets.UTF_8)) {
            if (!l.isBlank()) {
                out.add(new JsonObject(l));
            }
        }
        return out;
    }
}
