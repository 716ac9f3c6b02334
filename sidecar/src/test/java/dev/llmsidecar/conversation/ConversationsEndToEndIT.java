package dev.llmsidecar.conversation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.SimulatedEngine;
import dev.llmsidecar.testkit.OtlpReceiver;
import dev.llmsidecar.testkit.Processes;
import dev.llmsidecar.testkit.RawHttp;
import io.opentelemetry.proto.trace.v1.Span;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Conversations through the packaged jar (sidecar.conversations.enabled), as clients hold them: three conversations of
 * five turns at once, against the simulated engine. A plain chat; an agent loop whose turns answer tool results,
 * one of them two parallel calls; a Responses API conversation linked by {@code previous_response_id}. Each client
 * waits a pause of its own after reading an answer, and sends its next turn with a {@code traceparent} of its own, so
 * the sidecar's span of each request (received by a real OTLP receiver) says what the sidecar made of it: its turn,
 * what it answers, cold or warm, and the gap since the turn before, which must be the client's own pause within 5 ms
 * (the client's pause runs from the read that brought its answer's last byte to the write of its next request, on a
 * socket of its own; the sidecar's gap from its end of that answer to its read of the next request's head: they differ
 * by the two trips through the loopback and the event loops, after a warm-up).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConversationsEndToEndIT {

    static final Pattern RESPONSE_ID = Pattern.compile("\"type\":\"response\\.created\".*?\"id\":\"(resp_[^\"]+)\"");

    Vertx vertx;
    OtlpReceiver otlp;
    Processes.Sidecar sidecar;

    /** What the client did for one request: its trace id, and the pause it took before it (-1: its first). */
    record Sent(String conversation, int turn, String after, String traceId, long pauseNanos) {
    }

    @BeforeAll
    void start() throws Exception {
        vertx = Vertx.vertx();
        otlp = new OtlpReceiver(vertx);
        int enginePort = new SimulatedEngine(vertx, EngineBehaviour.defaults()
                .withTiming(Duration.ofMillis(15), Duration.ofMillis(2)).withOutputTokens(6)
                .withCachedTokenRatio(0.5)).start("127.0.0.1", 0).toCompletionStage().toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        java.nio.file.Path jar = Processes.required("sidecar.jar");
        sidecar = Processes.Sidecar.launch(jar).jvmOptions(Processes.shippedJvmOptions(jar))
                .upstream("http://127.0.0.1:" + enginePort)
                .env(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL",
                        "http/protobuf", "OTEL_BSP_SCHEDULE_DELAY", "4000"))
                .property("sidecar.conversations.enabled", "true").start();
        sidecar.awaitReady(Duration.ofSeconds(30));
        // warm, as a sidecar in production is: on a cold JVM a request waits milliseconds for the JIT on both sides
        // of the socket, which neither the client's pause nor the sidecar's gap is about. The same three kinds of
        // conversation, 30 of each, quickly.
        ExecutorService warm = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> runs = List.of(
                    warm.submit(() -> repeat(i -> chat("warm-chat-" + i, 5))),
                    warm.submit(() -> repeat(i -> agent("warm-agent-" + i, 5))),
                    warm.submit(() -> repeat(i -> responses("warm-responses-" + i, 5))));
            for (Future<?> run : runs) {
                run.get(120, TimeUnit.SECONDS);
            }
        } finally {
            warm.shutdownNow();
        }
    }

    /**
     * A full collection in this JVM (the clients, the engine) and in the sidecar's, so that no collection of a heap
     * the warm-up filled falls inside the second the conversations take: a pause there is neither side's gap.
     */
    void collectGarbage() throws Exception {
        System.gc();
        java.nio.file.Path jcmd = java.nio.file.Path.of(Processes.javaBinary()).resolveSibling("jcmd");
        if (java.nio.file.Files.isExecutable(jcmd)) {
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(sidecar.pid()), "GC.run")
                    .redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            p.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /**
     * Until neither this JVM (the clients, the engine) nor the sidecar's has compiled for half a second, at most 30 s:
     * a compile in flight shares the two cores with the trips the gaps are measured across. Nine runs with one core
     * busy and no wait: 5 of 13 attempts missed (a difference up to 19.8 ms), 5 of 9 first attempts (right after the
     * warm-up) and none of 4 second ones; six runs with it: 2 of 8 missed, by 6.0 and 5.0 ms at most.
     */
    void awaitQuietCompilers() throws Exception {
        java.lang.management.CompilationMXBean own = java.lang.management.ManagementFactory.getCompilationMXBean();
        List<Long> sidecarPid = List.of(sidecar.pid());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long ownBefore = own.getTotalCompilationTime();
        long sidecarBefore = Processes.onCpuNanos(sidecarPid, true);
        while (System.nanoTime() < deadline) {
            Thread.sleep(500);
            long ownNow = own.getTotalCompilationTime();
            long sidecarNow = Processes.onCpuNanos(sidecarPid, true);
            if (ownNow == ownBefore && sidecarNow - sidecarBefore < TimeUnit.MILLISECONDS.toNanos(5)) {
                return;
            }
            ownBefore = ownNow;
            sidecarBefore = sidecarNow;
        }
    }

    interface Conversation {
        List<Sent> run(int i) throws Exception;
    }

    static Void repeat(Conversation conversation) throws Exception {
        for (int i = 0; i < 30; i++) {
            conversation.run(i);
        }
        return null;
    }

    @AfterAll
    void stop() throws Exception {
        try {
            if (sidecar != null) {
                sidecar.close();
            }
        } finally {
            otlp.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void threeConversationsOfFiveTurnsHaveTheirTurnsGapsAndColdThenWarm() throws Exception {
        // The sidecar's gap and the client's pause differ by the two trips between them (the answer's last byte to
        // the client, the next request to the sidecar): well under a millisecond each on an idle loopback, but three
        // clients, the engine, the OTLP receiver and the sidecar share two cores here, and a collection or a
        // scheduling delay on either side (a vCPU the host took away, the bench measured steal here) now and then adds
        // milliseconds to one trip. Measured after a warm-up and a collection on both sides: p50 about 1 ms, and about
        // one gap in 30 past 5 ms. So the whole scenario runs again, on new conversations, when a gap misses: up to
        // five times, each attempt's gaps printed. A gap measured from the wrong moment misses in every attempt.
        List<String> misses = new ArrayList<>();
        for (int attempt = 1; attempt <= 5; attempt++) {
            List<String> missed = attempt("attempt" + attempt + "-");
            if (missed.isEmpty()) {
                return;
            }
            misses.add("attempt " + attempt + ": " + missed);
        }
        throw new AssertionError("a gap was not the client's pause within 5 ms in five attempts: " + misses);
    }

    /** One run of the three conversations: every check but the gaps' 5 ms asserted; returns the gaps that missed it. */
    List<String> attempt(String prefix) throws Exception {
        collectGarbage();
        awaitQuietCompilers();
        String before = sidecar.metrics(); // what the 15 requests add is the difference
        List<Sent> sent = new ArrayList<>();
        ExecutorService clients = Executors.newFixedThreadPool(3);
        try {
            List<Future<List<Sent>>> runs = List.of(clients.submit(() -> chat(prefix + "chat", 120)),
                    clients.submit(() -> agent(prefix + "agent", 160)),
                    clients.submit(() -> responses(prefix + "responses", 140)));
            for (Future<List<Sent>> run : runs) {
                sent.addAll(run.get(60, TimeUnit.SECONDS));
            }
        } finally {
            clients.shutdownNow();
        }
        assertThat(sent).hasSize(15);

        Map<String, Map<String, Object>> spans = awaitSpans(sent);
        List<String> missed = new ArrayList<>();
        StringBuilder differences = new StringBuilder();
        int gaps = 0;
        for (Sent s : sent) {
            Map<String, Object> a = spans.get(s.traceId);
            String what = s.conversation + " turn " + s.turn + ": " + a;
            assertThat(a.get("llm_sidecar.conversation.turn")).as(what).isEqualTo((long) s.turn);
            assertThat(a.get("llm_sidecar.conversation.after")).as(what).isEqualTo(s.after);
            assertThat(a.get("llm_sidecar.conversation.prefix")).as(what).isEqualTo(s.turn == 1 ? "cold" : "warm");
            assertThat(a.get("llm_sidecar.conversation.link")).as(what).isEqualTo(s.turn == 1 ? "first" : "next");
            if (s.turn == 1) {
                assertThat(a).as(what).doesNotContainKey("llm_sidecar.conversation.turn_gap");
            } else {
                double gapMs = (Double) a.get("llm_sidecar.conversation.turn_gap") * 1e3;
                double pauseMs = s.pauseNanos / 1e6;
                differences.append(String.format(java.util.Locale.ROOT, " %+.2f", gapMs - pauseMs));
                if (Math.abs(gapMs - pauseMs) > 5.0) {
                    missed.add(String.format(java.util.Locale.ROOT, "%s turn %d: gap %.2f ms, pause %.2f ms",
                            s.conversation, s.turn, gapMs, pauseMs));
                }
                gaps++;
            }
        }
        System.out.println(prefix + " gap minus the client's pause (ms):" + differences);
        assertThat(gaps).isEqualTo(12);
        String metrics = sidecar.metrics();
        assertThat(added(before, metrics, "llm_sidecar_conversation_turn_gap_seconds_count")).isEqualTo(12);
        assertThat(added(before, metrics, "llm_sidecar_conversation_requests_total{link=\"first\"")).isEqualTo(3);
        assertThat(added(before, metrics, "llm_sidecar_conversation_requests_total{link=\"next\"")).isEqualTo(12);
        // the turn series: turn 3-4 after a tool (the agent's third, the Responses third), turn 5-8 after the user
        // (the chat's and the Responses fifth), after a tool (the agent's fifth)
        String ttft = "llm_sidecar_conversation_time_to_first_token_seconds_count{after=";
        assertThat(added(before, metrics, ttft + "\"user\",model=\"sim-llama-8b\",prefix=\"cold\",turn=\"1\"}"))
                .isEqualTo(3);
        assertThat(added(before, metrics, ttft + "\"tool\",model=\"sim-llama-8b\",prefix=\"warm\",turn=\"3-4\"}"))
                .isEqualTo(2);
        assertThat(added(before, metrics, ttft + "\"user\",model=\"sim-llama-8b\",prefix=\"warm\",turn=\"5-8\"}"))
                .isEqualTo(2);
        assertThat(added(before, metrics, ttft + "\"tool\",model=\"sim-llama-8b\",prefix=\"warm\",turn=\"5-8\"}"))
                .isEqualTo(1);
        return missed;
    }

    /** Plain chat: the user, the assistant's answer, the user again. */
    List<Sent> chat(String name, int pauseMs) throws Exception {
        JsonArray messages = new JsonArray().add(message("system", "You are terse. Today is " + System.nanoTime()));
        List<Sent> sent = new ArrayList<>();
        long answered = -1;
        for (int turn = 1; turn <= 5; turn++) {
            if (turn > 1) {
                messages.add(message("assistant", "answer " + (turn - 1)));
                messages.getJsonObject(0).put("content", "You are terse. Today is " + System.nanoTime()); // rewritten
            }
            messages.add(message("user", name + " question " + turn));
            answered = send(sent, name, turn, "user", "/v1/chat/completions", chatBody(messages), pauseMs + 13 * turn,
                    answered).answered;
        }
        return sent;
    }

    /** An agent loop: the task, a tool call, two parallel calls, the user, a last tool call. */
    List<Sent> agent(String name, int pauseMs) throws Exception {
        JsonArray messages = new JsonArray().add(message("user", name + ": find the file and fix it"));
        List<Sent> sent = new ArrayList<>();
        long answered = send(sent, name, 1, "user", "/v1/chat/completions", chatBody(messages), 0, -1).answered;
        messages.add(toolCalls("call_1")).add(toolResult("call_1", "found src/a.c"));
        answered = send(sent, name, 2, "tool", "/v1/chat/completions", chatBody(messages), pauseMs, answered).answered;
        messages.add(toolCalls("call_2", "call_3")).add(toolResult("call_2", "line 3")).add(toolResult("call_3", "ok"));
        answered = send(sent, name, 3, "tool", "/v1/chat/completions", chatBody(messages), pauseMs + 17, answered)
                .answered;
        messages.add(message("assistant", "fixed it")).add(message("user", "now run the tests"));
        answered = send(sent, name, 4, "user", "/v1/chat/completions", chatBody(messages), pauseMs + 41, answered)
                .answered;
        messages.add(toolCalls("call_4")).add(toolResult("call_4", "12 passed"));
        send(sent, name, 5, "tool", "/v1/chat/completions", chatBody(messages), pauseMs + 7, answered);
        return sent;
    }

    /** The Responses API: each turn names the response before it; turn 3 answers a function call. */
    List<Sent> responses(String name, int pauseMs) throws Exception {
        List<Sent> sent = new ArrayList<>();
        Answer a = send(sent, name, 1, "user", "/v1/responses", new JsonObject().put("model", "sim-llama-8b")
                .put("stream", true).put("input", name + " question 1"), 0, -1);
        for (int turn = 2; turn <= 5; turn++) {
            JsonArray input = turn == 3
                    ? new JsonArray().add(new JsonObject().put("type", "function_call_output").put("call_id", "fc_1")
                            .put("output", "42"))
                    : new JsonArray().add(message("user", name + " question " + turn));
            JsonObject body = new JsonObject().put("model", "sim-llama-8b").put("stream", true)
                    .put("previous_response_id", a.responseId).put("input", input);
            a = send(sent, name, turn, turn == 3 ? "tool" : "user", "/v1/responses", body, pauseMs + 11 * turn,
                    a.answered);
        }
        return sent;
    }

    record Answer(long answered, String responseId) {
    }

    /**
     * Waits until {@code pauseMs} after {@code answered} (the previous answer's last byte), sends, and reads the whole
     * answer on a socket of its own ({@link RawHttp}: every read stamped as it returns); the pause recorded is the
     * client's own, from the read that brought that last byte to the write of this request.
     */
    Answer send(List<Sent> sent, String conversation, int turn, String after, String path, JsonObject body,
            int pauseMs, long answered) throws Exception {
        if (answered >= 0) {
            long until = answered + TimeUnit.MILLISECONDS.toNanos(pauseMs);
            long left;
            while ((left = until - System.nanoTime()) > 0) {
                Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
            }
        }
        String traceId = HexFormat.of().formatHex(java.security.SecureRandom.getSeed(16));
        RawHttp.Response response = RawHttp.post(sidecar.proxyPort, path, body.encode(),
                Map.of("traceparent", "00-" + traceId + "-0102030405060708-01"));
        assertThat(response.status()).as(conversation + " turn " + turn + ": " + response.entity()).isEqualTo(200);
        sent.add(new Sent(conversation, turn, after, traceId, answered < 0 ? -1 : response.sentNanos() - answered));
        Matcher m = RESPONSE_ID.matcher(response.entity());
        return new Answer(response.lastByteNanos(), m.find() ? m.group(1) : null);
    }

    static JsonObject chatBody(JsonArray messages) {
        return new JsonObject().put("model", "sim-llama-8b").put("stream", true).put("messages", messages.copy());
    }

    static JsonObject message(String role, String content) {
        return new JsonObject().put("role", role).put("content", content);
    }

    static JsonObject toolCalls(String... ids) {
        JsonArray calls = new JsonArray();
        for (String id : ids) {
            calls.add(new JsonObject().put("id", id).put("type", "function").put("function",
                    new JsonObject().put("name", "run").put("arguments", "{\"id\":\"" + id + "\"}")));
        }
        return new JsonObject().put("role", "assistant").put("content", (String) null).put("tool_calls", calls);
    }

    static JsonObject toolResult(String id, String content) {
        return new JsonObject().put("role", "tool").put("tool_call_id", id).put("content", content);
    }

    /** The sidecar's span of each request, by the trace id its client sent. */
    Map<String, Map<String, Object>> awaitSpans(List<Sent> sent) throws Exception {
        Map<String, Map<String, Object>> byTrace = new ConcurrentHashMap<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            for (Span span : otlp.spans()) {
                byTrace.put(HexFormat.of().formatHex(span.getTraceId().toByteArray()),
                        OtlpReceiver.attributes(span.getAttributesList()));
            }
            if (sent.stream().allMatch(s -> byTrace.containsKey(s.traceId))) {
                return byTrace;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("spans of " + sent.stream().filter(s -> !byTrace.containsKey(s.traceId)).toList()
                + " never arrived");
    }

    /** What the lines that start with {@code prefix} gained from {@code before} to {@code after}. */
    static double added(String before, String after, String prefix) {
        return sum(after, prefix) - sum(before, prefix);
    }

    /** The sum of every exposition line that starts with {@code prefix} (a name, or a name and its first labels). */
    static double sum(String metrics, String prefix) {
        double total = 0;
        for (String line : metrics.split("\n")) {
            if (line.startsWith(prefix)) {
                String[] parts = line.split(" ");
                total += Double.parseDouble(parts[parts.length - 1]);
            }
        }
        return total;
    }
}
