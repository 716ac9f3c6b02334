package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.trace.TraceFiles;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the sidecar's trace recorder writes, read by the readers the ground truth is: every closed file of a recording
 * through the real proxy (the simulated engine, chat streams and not, sessions, shared system prompts, rotation into
 * several files) is a recorded trace for {@link TraceFile} (bin/sweep --trace: integer timestamps from 0, lengths,
 * hash_ids of ceil(input_length / 512) ids below 2^53, string session ids), carries none of the fields AIPerf gives a
 * meaning the recorder must not (text_input, delay, type, messages, tools, extra), and bin/trace-merge makes one trace
 * of the files, in arrival order, timestamps from the first arrival.
 */
class RecordedTraceTest {

    static final Set<String> FORBIDDEN = Set.of("text_input", "delay", "type", "messages", "tools", "extra");
    static final Set<String> KNOWN = Set.of("timestamp", "input_length", "output_length", "hash_ids", "session_id",
            "arrival_unix_ms", "model", "operation", "slo_class", "tenant", "outcome", "ttft_ms", "tpot_ms", "e2e_ms",
            "reasoning_length", "conversation_id", "turn",
            "input_length_source", "output_length_source", "key_id");

    @Test
    void everyClosedFileIsARecordedTraceAndTheMergeIsOneInArrivalOrder(@TempDir Path dir) throws Exception {
        int requests = 40;
        EngineBehaviour engine = EngineBehaviour.defaults().withTiming(Duration.ofMillis(2), Duration.ofMillis(1))
                .withOutputTokens(5);
        try (ProxyFixture f = new ProxyFixture(engine, Map.of("sidecar.trace.enabled", "true",
                "sidecar.trace.dir", dir.toString(),
                "sidecar.trace.secret", "3c1e5a7b9d2f4e6a8c0b1d3f5e7a9c2b4d6f8e0a1c3e5b7d9f1a3c5e7b9d1f3a",
                "sidecar.trace.session-header", "x-session", "sidecar.trace.max-file-bytes", "3000",
                "sidecar.trace.block-bytes", "512"))) {
            for (int i = 0; i < requests; i++) {
                String system = ("system prompt number " + i % 3 + " ").repeat(60);
                String user = ("question " + i + " ").repeat(5 + i * 7);
                JsonObject body = new JsonObject().put("model", "sim-llama-8b").put("stream", i % 2 == 0)
                        .put("messages", new JsonArray()
                                .add(new JsonObject().put("role", "system").put("content", system))
                                .add(new JsonObject().put("role", "user").put("content", user)));
                var r = f.post(f.proxyPort, "/v1/chat/completions", body.encode(),
                        Map.of("x-session", "conversation-" + i % 5));
                assertThat(r.status()).isEqualTo(200);
                // written before the next arrival: the files rotate where the size says, whatever the machine's pace
                assertThat(f.telemetry.trace().sync()).isTrue();
            }
        }
        List<Path> files = TraceFiles.closed(dir);
        assertThat(files).as("rotated at 3000 bytes").hasSizeGreaterThan(3);
        int records = 0;
        int usage = 0;
        Map<String, List<long[]>> bySession = new HashMap<>();
        for (Path file : files) {
            TraceFile trace = TraceFile.read(file);
            assertThat(trace.recorded()).isTrue();
            assertThat(trace.records().get(0).timestampMs()).as(file + ": from its first arrival").isZero();
            for (TraceRecord r : trace.records()) {
                assertThat(r.hashIds()).hasSize(TraceRecord.blocks(r.inputLength()));
                assertThat(r.model()).isEqualTo("sim-llama-8b");
                assertThat(r.outcome()).isEqualTo("ok");
                bySession.computeIfAbsent(r.sessionId(), k -> new ArrayList<>()).add(r.hashIds());
            }
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                JsonObject o = new JsonObject(line);
                assertThat(o.fieldNames()).doesNotContainAnyElementsOf(FORBIDDEN);
                assertThat(KNOWN).containsAll(o.fieldNames());
                assertThat(o.getValue("timestamp")).isInstanceOfAny(Integer.class, Long.class);
                assertThat(o.getValue("session_id")).isInstanceOf(String.class);
                assertThat(o.getString("input_length_source")).isIn("usage", "estimate");
                usage += "usage".equals(o.getString("input_length_source")) ? 1 : 0;
            }
            records += trace.records().size();
        }
        assertThat(records).isEqualTo(requests);
        // the engine's usage, but for the first stream (no include_usage while the sidecar learns the model's layout)
        assertThat(usage).isGreaterThanOrEqualTo(requests - 1);
        assertThat(bySession).hasSize(5).doesNotContainKey(null);

        // the shared system prompts (3 of them, 1500+ bytes: the first two 512-byte blocks) share their first ids
        Set<Long> firstIds = new HashSet<>();
        bySession.values().forEach(l -> l.forEach(ids -> firstIds.add(ids[0])));
        assertThat(firstIds).hasSize(3);

        Path merged = dir.resolve("merged.jsonl");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] args = new String[files.size() + 2];
        args[0] = "-o";
        args[1] = merged.toString();
        for (int i = 0; i < files.size(); i++) {
            args[i + 2] = files.get(i).toString();
        }
        assertThat(TraceMerge.run(args, new PrintStream(new ByteArrayOutputStream()), new PrintStream(err)))
                .as(err.toString()).isZero();
        TraceFile day = TraceFile.read(merged);
        assertThat(day.records()).hasSize(requests);
        assertThat(day.records().get(0).timestampMs()).isZero();
        List<String> lines = Files.readAllLines(merged);
        long previous = Long.MIN_VALUE;
        long first = new JsonObject(lines.get(0)).getLong("arrival_unix_ms");
        for (String line : lines) {
            JsonObject o = new JsonObject(line);
            long arrival = o.getLong("arrival_unix_ms");
            assertThat(arrival).isGreaterThanOrEqualTo(previous);
            assertThat(o.getLong("timestamp")).isEqualTo(arrival - first);
            previous = arrival;
        }
    }
}
