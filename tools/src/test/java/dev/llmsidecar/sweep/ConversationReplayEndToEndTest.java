package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.ServedRequest;
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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Conversations recorded through the real proxy (sidecar.conversations and the trace recorder on, the simulated
 * engine), merged by {@code bin/trace-merge}, and replayed by {@code bin/sweep --trace} through another proxy to a
 * slower engine, checked from that engine's side: each turn's prompt has the recorded input_length within 2 % (the
 * engine's own count), and each later turn arrives after the previous turn's answer ended plus the gap its client
 * left in the recording, not at its recorded time (the slower engine would put those apart).
 */
class ConversationReplayEndToEndTest {

    static final String SECRET = "3c1e5a7b9d2f4e6a8c0b1d3f5e7a9c2b4d6f8e0a1c3e5b7d9f1a3c5e7b9d1f3a";
    /** The client's pause before turns 2 to 5, ms: a chat's user, then an agent's quick tool calls. */
    static final long[][] PAUSES = {{400, 150, 700, 250}, {60, 30, 500, 90}};

    @Test
    void aRecordedConversationReplaysTurnByTurnWithItsInputLengthsAndGaps(@TempDir Path dir) throws Exception {
        Path recorded = dir.resolve("recorded");
        EngineBehaviour fast = EngineBehaviour.defaults().withSlots(16)
                .withTiming(Duration.ofMillis(20), Duration.ofMillis(2)).withJitter(0);
        try (ProxyFixture f = new ProxyFixture(fast, Map.of("sidecar.trace.enabled", "true",
                "sidecar.trace.dir", recorded.toString(), "sidecar.trace.secret", SECRET,
                "sidecar.conversations.enabled", "true"))) {
            for (int c = 0; c < 2; c++) {
                conversation(f, c);
            }
            assertThat(f.telemetry.trace().sync()).isTrue();
        }
        Path day = dir.resolve("day.jsonl");
        List<String> args = new ArrayList<>(List.of("-o", day.toString()));
        TraceFiles.closed(recorded).forEach(p -> args.add(p.toString()));
        assertThat(TraceMerge.run(args.toArray(String[]::new), new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))).isZero();
        List<TraceRecord> records = TraceFile.read(day).records();
        assertThat(records).hasSize(10);
        assertThat(records.stream().map(TraceRecord::sessionId).distinct()).as("two conversations").hasSize(2);
        Map<Integer, TraceRecord> byMaxTokens = new HashMap<>();
        records.forEach(r -> byMaxTokens.put(r.outputLength(), r));
        assertThat(byMaxTokens).hasSize(10);

        // the replay's engine is slower: a turn sent at its recorded time would come before the previous one's end
        EngineBehaviour slow = EngineBehaviour.defaults().withSlots(16)
                .withTiming(Duration.ofMillis(150), Duration.ofMillis(6)).withJitter(0);
        try (SweepEndToEndTest.Harness h = new SweepEndToEndTest.Harness(slow, 5, 0.5)) {
            SweepOptions o = SweepOptions.parse("--url", "http://127.0.0.1:" + h.fixture.proxyPort, "--metrics-url",
                    h.metricsUrl, "--model", "sim-llama-8b", "--trace", day.toString(), "--warmup-seconds", "0",
                    "--step-seconds", "30", "--slo", "ttft=5,target=0.5", "--slo-objective", "sweep", "--out",
                    dir.resolve("out").toString());
            h.fixture.engine.clearServed();
            SweepResult r = Sweep.run(o, h.clientVertx, System.err);
            List<ServedRequest> served = new ArrayList<>(h.fixture.engine.served());
            served.sort((a, b) -> Long.compare(a.arrivalNanos(), b.arrivalNanos()));
            List<ServedRequest> replayed = served.subList(3, served.size()); // the preflight and two probes first
            assertThat(replayed).hasSize(10);
            Map<TraceRecord, ServedRequest> seen = new HashMap<>();
            double worstLength = 0;
            for (ServedRequest s : replayed) {
                TraceRecord rec = byMaxTokens.get(new JsonObject(s.body()).getInteger("max_tokens"));
                assertThat(rec).as("a record per request").isNotNull();
                assertThat(seen.put(rec, s)).as("each record once").isNull();
                double tokens = Math.max(1, s.body().length() / 4); // the engine's count: body bytes / 4
                worstLength = Math.max(worstLength, Math.abs(tokens / rec.inputLength() - 1));
                assertThat(tokens).as("turn with input_length %d", rec.inputLength())
                        .isBetween(rec.inputLength() * 0.98, rec.inputLength() * 1.02);
            }
            // each later turn: the previous turn's answer, then the recorded gap
            List<String> gaps = new ArrayList<>();
            double worstGap = 0;
            for (int i = 1; i < records.size(); i++) {
                TraceRecord turn = records.get(i);
                TraceRecord before = null;
                for (int j = i - 1; j >= 0 && before == null; j--) {
                    if (records.get(j).sessionId().equals(turn.sessionId())) {
                        before = records.get(j);
                    }
                }
                if (before == null) {
                    continue;
                }
                double recordedGap = turn.timestampMs() - before.timestampMs() - before.e2eMs();
                double replayedGap = (seen.get(turn).arrivalNanos() - seen.get(before).lastTokenSentNanos()) / 1e6;
                gaps.add(String.format(Locale.ROOT, "%.0f/%.1f", recordedGap, replayedGap));
                worstGap = Math.max(worstGap, Math.abs(replayedGap - recordedGap));
                assertThat(seen.get(turn).arrivalNanos()).as("sent after the previous turn's answer")
                        .isGreaterThan(seen.get(before).lastTokenSentNanos());
            }
            System.out.printf(Locale.ROOT, "ConversationReplayEndToEndTest: input length off by at most %.2f %%; "
                    + "gaps recorded/replayed ms %s (worst difference %.1f ms); notes %s%n", worstLength * 100, gaps,
                    worstGap, r.notes());
            assertThat(gaps).hasSize(8);
            // the timer's millisecond, the client's and the proxy's hops; with a core busy, a late event loop
            assertThat(worstGap).as("largest |replayed gap - recorded gap|, ms").isLessThan(50);
            assertThat(r.notes()).anyMatch(n -> n.contains("8 later turns of 2 conversations sent after the previous "
                    + "turn's answer and the recorded gap"));
        }
    }

    /**
     * Five turns: a system prompt, then each turn a user message (or tool results) of 2 KB after the answer before,
     * with the client's pause between an answer's end and the next turn. max_tokens tells every request apart.
     */
    private static void conversation(ProxyFixture f, int c) {
        JsonArray messages = new JsonArray().add(new JsonObject().put("role", "system")
                .put("content", ("You are helpful, conversation " + c + ". ").repeat(100)));
        for (int turn = 1; turn <= 5; turn++) {
            if (turn > 1) {
                LockSupport.parkNanos(PAUSES[c][turn - 2] * 1_000_000L);
            }
            String words = ("turn " + turn + " of conversation " + c + " says something new. ").repeat(45);
            messages.add(c == 1 && turn > 1
                    ? new JsonObject().put("role", "tool").put("tool_call_id", "call-" + turn).put("content", words)
                    : new JsonObject().put("role", "user").put("content", words));
            JsonObject body = new JsonObject().put("model", "sim-llama-8b").put("stream", true)
                    .put("max_tokens", 20 + 10 * turn + c).put("messages", messages);
            var r = f.post(f.proxyPort, "/v1/chat/completions", body.encode(), Map.of());
            assertThat(r.status()).isEqualTo(200);
            JsonObject assistant = new JsonObject().put("role", "assistant").put("content", answer(r.text()));
            if (c == 1) {
                assistant.put("tool_calls", new JsonArray().add(new JsonObject().put("id", "call-" + (turn + 1))
                        .put("type", "function").put("function", new JsonObject().put("name", "search")
                                .put("arguments", "{}"))));
            }
            messages.add(assistant);
        }
    }

    /** The answer's text from an SSE stream of chat chunks. */
    private static String answer(String sse) {
        StringBuilder sb = new StringBuilder();
        for (String line : sse.split("\n")) {
            if (line.startsWith("data: {")) {
                JsonArray choices = new JsonObject(line.substring(6)).getJsonArray("choices");
                if (choices != null && !choices.isEmpty()) {
                    JsonObject delta = choices.getJsonObject(0).getJsonObject("delta");
                    if (delta != null && delta.getString("content") != null) {
                        sb.append(delta.getString("content"));
                    }
                }
            }
        }
        return sb.toString();
    }
}
