package dev.llmsidecar.trace;

import dev.llmsidecar.support.ChatHead;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.app.SidecarTelemetry;
import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.RequestBytes;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.support.TestConfigs;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.LlmRoutes;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.Usage;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trace recorder driven through the seam the proxy reports to (as the proxy drives it, without a socket), with the
 * real configuration mapping and real files: the record's fields, prefix sharing, secrets, sessions, rotation and the
 * count limit, a file closed only once the requests that arrived in it ended, drops when the queue is full, the refusal
 * without a secret, recovery after a crash, and nothing read at all while the recorder is off.
 */
class TraceRecorderTest {

    static final long MS = 1_000_000;
    static final LlmRoutes ROUTES = new LlmRoutes(new JsonFactory());
    static final LlmOperation CHAT = ROUTES.match("POST", "/v1/chat/completions");
    static final LlmOperation OLLAMA = ROUTES.match("POST", "/api/chat");
    /** 32 bytes in hex, as {@code openssl rand -hex 32} makes them. */
    static final String SECRET = "5f0c1d2e3a4b596877a6b5c4d3e2f1000123456789abcdef0fedcba987654321";
    static final String OTHER_SECRET = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";

    @TempDir
    Path dir;
    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    final List<SidecarTelemetry> started = new ArrayList<>();
    /** The registry of the telemetry last made. */
    io.prometheus.metrics.model.registry.PrometheusRegistry lastRegistry;

    SidecarTelemetry telemetry(Map<String, String> more) {
        Map<String, String> config = new HashMap<>(Map.of("sidecar.trace.enabled", "true",
                "sidecar.trace.dir", dir.toString(), "sidecar.trace.secret", SECRET,
                "sidecar.metrics.pinned-models", "m1")); // the name these requests send, a label of its own
        config.putAll(more);
        lastRegistry = new io.prometheus.metrics.model.registry.PrometheusRegistry();
        SidecarTelemetry t = new SidecarTelemetry(lastRegistry, TestConfigs.sidecar("http://127.0.0.1:1", config),
                System::nanoTime);
        started.add(t);
        return t;
    }

    @AfterEach
    void closeAll() {
        started.forEach(SidecarTelemetry::close);
    }


    /** A body as the data path hands it over. */
    record Body(byte[] bytes) implements RequestBytes {
        Body(String json) {
            this(json.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public int length() {
            return bytes.length;
        }

        @Override
        public void copyTo(byte[] dst, int length) {
            System.arraycopy(bytes, 0, dst, 0, length);
        }
    }

    static String chatBody(String system, String user) {
        return new JsonObject().put("model", "m1").put("stream", true).put("messages", new JsonArray()
                .add(new JsonObject().put("role", "system").put("content", system))
                .add(new JsonObject().put("role", "user").put("content", user))).encode();
    }

    /** An exchange that arrived and whose body was read; {@link #end} finishes it. */
    static ExchangeObserver arrive(TrafficObserver traffic, LlmOperation op, Map<String, String> headers, String body) {
        ExchangeObserver x = traffic.exchangeStarted(new ChatHead(headers), op, System.nanoTime());
        x.requestInspected("m1", true, null);
        if (body != null) {
            x.requestBody(new Body(body));
        }
        x.requestSent();
        return x;
    }

    /** The stream: first token at +20 ms, three more 10 ms apart, the engine's usage, the end. */
    static void end(ExchangeObserver x, long promptTokens, long outputTokens) {
        long t0 = System.nanoTime();
        TokenEventSink sink = x.responseStarted(200, true, t0);
        for (int i = 0; i < 4; i++) {
            sink.onTokenChunk(t0 + (20 + 10 * i) * MS, false, -1);
        }
        if (promptTokens >= 0) {
            sink.onUsage(new Usage(promptTokens, outputTokens, -1));
        }
        x.ended(Outcome.OK, 200, t0 + 60 * MS);
    }

    static void request(TrafficObserver traffic, Map<String, String> headers, String body, long prompt, long out) {
        end(arrive(traffic, CHAT, headers, body), prompt, out);
    }

    /** Every record of every closed file, oldest file first, in file order. */
    List<JsonObject> records() throws IOException {
        List<JsonObject> out = new ArrayList<>();
        for (Path p : TraceFiles.closed(dir)) {
            for (String line : Files.readAllLines(p, StandardCharsets.UTF_8)) {
                out.add(new JsonObject(line));
            }
        }
        return out;
    }

    static long[] ids(JsonObject record) {
        JsonArray a = record.getJsonArray("hash_ids");
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.getLong(i);
        }
        return out;
    }

    @Test
    void aRecordHasMooncakesFieldsThenTheSidecarsOwnAndNothingElse() throws Exception {
        SidecarTelemetry t = telemetry(Map.of("sidecar.trace.session-header", "x-session-id",
                "sidecar.tenants.source", "header", "sidecar.tenants.allowed", "team-a", "sidecar.slo.classes",
                "default,batch"));
        long before = System.currentTimeMillis();
        request(t.traffic(), Map.of("x-session-id", "conv-42", "x-tenant", "team-a", "x-slo-class", "batch"),
                chatBody("You are terse.", "Hello there"), 1300, 4);
        t.close();
        List<JsonObject> records = records();
        assertThat(records).hasSize(1);
        JsonObject r = records.get(0);
        assertThat(r.fieldNames()).containsExactly("timestamp", "input_length", "output_length", "hash_ids",
                "session_id", "arrival_unix_ms", "model", "operation", "slo_class", "tenant", "outcome", "ttft_ms",
                "tpot_ms", "e2e_ms", "input_length_source", "output_length_source", "key_id");
        assertThat(r.getValue("timestamp")).isEqualTo(0);
        assertThat(r.getInteger("input_length")).isEqualTo(1300);
        assertThat(r.getInteger("output_length")).isEqualTo(4);
        assertThat(ids(r)).hasSize(3); // ceil(1300 / 512)
        for (long id : ids(r)) {
            assertThat(id).isBetween(0L, (1L << 53) - 1);
        }
        assertThat(r.getValue("session_id")).isInstanceOf(String.class);
        assertThat(r.getString("session_id")).matches("[0-9a-f]{16}").doesNotContain("conv-42");
        assertThat(r.getLong("arrival_unix_ms")).isBetween(before, System.currentTimeMillis());
        assertThat(r.getString("model")).isEqualTo("m1");
        assertThat(r.getString("operation")).isEqualTo("chat");
        assertThat(r.getString("slo_class")).isEqualTo("batch");
        assertThat(r.getString("tenant")).isEqualTo("team-a");
        assertThat(r.getString("outcome")).isEqualTo("ok");
        assertThat(r.getDouble("ttft_ms")).isBetween(19.0, 1000.0);
        assertThat(r.getDouble("tpot_ms")).isEqualTo(10.0);
        assertThat(r.getDouble("e2e_ms")).isGreaterThanOrEqualTo(r.getDouble("ttft_ms"));
        assertThat(r.getString("input_length_source")).isEqualTo("usage");
        assertThat(r.getString("output_length_source")).isEqualTo("usage");
        assertThat(r.getString("key_id")).isEqualTo(KeyId.of(TraceRecorder.decodeSecret(SECRET)))
                .matches("[0-9a-f]{16}").isNotEqualTo(KeyId.of(TraceRecorder.decodeSecret(OTHER_SECRET)));
        assertThat(SECRET).doesNotContain(r.getString("key_id"));
    }

    @Test
    void durationsAreMillisecondsWithThreeDecimals() {
        assertThat(TraceRecorder.millisText(0)).isEqualTo("0.000");
        assertThat(TraceRecorder.millisText(5_000)).isEqualTo("0.005");
        assertThat(TraceRecorder.millisText(1_050_000)).isEqualTo("1.050");
        assertThat(TraceRecorder.millisText(12_345_678)).isEqualTo("12.346");
        assertThat(TraceRecorder.millisText(3_600_000_000_000L)).isEqualTo("3600000.000");
    }

    @Test
    void equalPromptsWhateverTheirWhitespaceShareIdsAndSharedSystemPromptsShareTheirLeadingIds() throws Exception {
        // 64-byte blocks: the 200-byte system prompt fills the first three
        SidecarTelemetry t = telemetry(Map.of("sidecar.trace.block-bytes", "64"));
        String system = "s".repeat(200);
        String compact = chatBody(system, "question one");
        String spaced = compact.replace(",", " ,\n ").replace(":", " : ");
        request(t.traffic(), Map.of(), compact, 64 * 8 * 5, 1);
        request(t.traffic(), Map.of(), spaced, 64 * 8 * 5, 1);
        request(t.traffic(), Map.of(), chatBody(system, "question two"), 64 * 8 * 5, 1);
        request(t.traffic(), Map.of(), chatBody("t" + system.substring(1), "question one"), 64 * 8 * 5, 1);
        t.close();
        List<JsonObject> r = records();
        assertThat(r).hasSize(4);
        // block-bytes 64 is 512 tokens' worth: input 2560 tokens, 5 ids; the full blocks of the canonical prompt share
        // their ids, its last partial block gets a random one, and so does every id after it
        int canonical = Canonical.of(new JsonFactory(), CHAT.path(), compact.getBytes(StandardCharsets.UTF_8),
                compact.length()).length();
        int full = canonical / 64;
        assertThat(canonical % 64).as("the prompt ends in a partial block").isPositive();
        assertThat(full).isBetween(3, 4);
        assertThat(ids(r.get(1))).hasSize(5).startsWith(Arrays.copyOf(ids(r.get(0)), full));
        for (int i = full; i < 5; i++) {
            assertThat(ids(r.get(1))[i]).as("id %d", i).isNotEqualTo(ids(r.get(0))[i]);
        }
        long[] other = ids(r.get(2));
        long[] first = ids(r.get(0));
        assertThat(other[0]).isEqualTo(first[0]);
        assertThat(other[1]).isEqualTo(first[1]);
        assertThat(other[2]).isEqualTo(first[2]);
        assertThat(other[3]).isNotEqualTo(first[3]);
        assertThat(other[4]).isNotEqualTo(first[4]);
        long[] changedFirstBlock = ids(r.get(3));
        for (int i = 0; i < 5; i++) {
            assertThat(changedFirstBlock[i]).isNotEqualTo(first[i]);
        }
    }

    @Test
    void anotherSecretGivesOtherIdsAndOtherSessions() throws Exception {
        // two full blocks of 2048 bytes and a partial one: input 700 tokens has 2 ids, of the full blocks
        String body = chatBody("same system ".repeat(400), "same question");
        SidecarTelemetry one = telemetry(Map.of("sidecar.trace.session-header", "x-session-id"));
        request(one.traffic(), Map.of("x-session-id", "s1"), body, 700, 1);
        request(one.traffic(), Map.of("x-session-id", "s1"), body, 700, 1);
        one.close();
        List<JsonObject> first = records();
        for (Path p : TraceFiles.closed(dir)) {
            Files.delete(p);
        }
        SidecarTelemetry two = telemetry(Map.of("sidecar.trace.session-header", "x-session-id",
                "sidecar.trace.secret", OTHER_SECRET));
        request(two.traffic(), Map.of("x-session-id", "s1"), body, 700, 1);
        two.close();
        List<JsonObject> second = records();
        assertThat(ids(first.get(1))).isEqualTo(ids(first.get(0)));
        assertThat(first.get(1).getString("session_id")).isEqualTo(first.get(0).getString("session_id"));
        long[] a = ids(first.get(0));
        long[] b = ids(second.get(0));
        assertThat(b).hasSameSizeAs(a);
        for (int i = 0; i < a.length; i++) {
            assertThat(b[i]).isNotEqualTo(a[i]);
        }
        assertThat(second.get(0).getString("session_id")).isNotEqualTo(first.get(0).getString("session_id"));
    }

    static final LlmRoutes CONVERSATION_ROUTES = new LlmRoutes(new JsonFactory(), true);

    /** A chat turn of {@code messages} (sidecar.conversations on), its usage {@code prompt}/{@code out}/{@code reasoning}. */
    static void turn(TrafficObserver traffic, JsonArray messages, long prompt, long out, long reasoning) {
        LlmOperation op = CONVERSATION_ROUTES.match("POST", "/v1/chat/completions");
        String body = new JsonObject().put("model", "m1").put("stream", true).put("messages", messages).encode();
        ExchangeObserver x = traffic.exchangeStarted(new ChatHead(Map.of()), op, System.nanoTime());
        dev.llmsidecar.wire.InspectedRequest inspected = op.format().inspect(io.vertx.core.buffer.Buffer.buffer(body));
        x.requestInspected(inspected.model(), inspected.stream(), inspected.priority());
        x.conversationRead(inspected.conversation());
        x.requestBody(new Body(body));
        x.requestSent();
        long t0 = System.nanoTime();
        TokenEventSink sink = x.responseStarted(200, true, t0);
        sink.onTokenChunk(t0 + 20 * MS, false, -1);
        sink.onUsage(new Usage(prompt, out, -1, reasoning));
        x.ended(Outcome.OK, 200, t0 + 30 * MS);
    }

    static JsonObject message(String role, String content) {
        return new JsonObject().put("role", role).put("content", content);
    }

    /**
     * With sidecar.conversations on, every turn of one conversation carries one {@code conversation_id} and its turn;
     * another conversation another id; another process (or a restart) other ids for the same traffic; the engine's
     * reasoning tokens as {@code reasoning_length}. With it off, none of these.
     */
    @Test
    void turnsOfAConversationShareAConversationIdAndCarryTheirTurn() throws Exception {
        JsonArray a1 = new JsonArray().add(message("user", "plan a trip"));
        JsonArray a2 = a1.copy().add(message("assistant", "where to?")).add(message("user", "the coast"));
        JsonArray a3 = a2.copy().add(message("assistant", "which one?")).add(message("user", "the north one"));
        JsonArray b1 = new JsonArray().add(message("user", "fix my build"));
        JsonArray b2 = b1.copy().add(message("assistant", "show me the log")).add(message("user", "here it is"));
        SidecarTelemetry one = telemetry(Map.of("sidecar.conversations.enabled", "true"));
        turn(one.traffic(), a1, 10, 5, 2);
        turn(one.traffic(), b1, 10, 6, -1);
        turn(one.traffic(), a2, 20, 5, 0);
        turn(one.traffic(), b2, 22, 6, -1);
        turn(one.traffic(), a3, 30, 5, 1);
        one.close();
        List<JsonObject> r = records();
        for (Path p : TraceFiles.closed(dir)) {
            Files.delete(p);
        }
        assertThat(r).hasSize(5);
        String a = r.get(0).getString("conversation_id");
        String b = r.get(1).getString("conversation_id");
        assertThat(a).matches("[0-9a-f]{16}");
        assertThat(b).matches("[0-9a-f]{16}").isNotEqualTo(a);
        assertThat(r.stream().map(o -> o.getString("conversation_id")).toList()).containsExactly(a, b, a, b, a);
        assertThat(r.stream().map(o -> o.getInteger("turn")).toList()).containsExactly(1, 1, 2, 2, 3);
        assertThat(r.get(0).getInteger("reasoning_length")).isEqualTo(2);
        assertThat(r.get(2).getInteger("reasoning_length")).isZero();
        assertThat(r.get(1).containsKey("reasoning_length")).as("not reported: left out").isFalse();
        assertThat(r.get(0).containsKey("session_id")).as("no session header configured").isFalse();

        SidecarTelemetry two = telemetry(Map.of("sidecar.conversations.enabled", "true"));
        turn(two.traffic(), a1, 10, 5, 2);
        turn(two.traffic(), b1, 10, 6, -1);
        two.close();
        List<JsonObject> again = records();
        for (Path p : TraceFiles.closed(dir)) {
            Files.delete(p);
        }
        assertThat(again.get(0).getString("conversation_id")).as("another process").isNotIn(a, b);
        assertThat(again.get(1).getString("conversation_id")).isNotIn(a, b);

        SidecarTelemetry off = telemetry(Map.of());
        turn(off.traffic(), a1, 10, 5, 2);
        off.close();
        JsonObject plain = records().get(0);
        assertThat(plain.containsKey("conversation_id")).isFalse();
        assertThat(plain.containsKey("turn")).isFalse();
    }

    @Test
    void withoutUsageTheInputIsEstimatedFromBytesAndNativeCountsAreTheFormats() throws Exception {
        SidecarTelemetry t = telemetry(Map.of());
        String body = chatBody("x".repeat(3000), "y");
        end(arrive(t.traffic(), CHAT, Map.of(), body), -1, 0);
        end(arrive(t.traffic(), OLLAMA, Map.of(), body), 900, 5);
        end(arrive(t.traffic(), CHAT, Map.of(), null), -1, 0); // a body too large to inspect: never handed over
        t.close();
        List<JsonObject> r = records();
        assertThat(r).hasSize(3);
        // the canonical prompt's bytes at 4 a token (block-bytes 2048 ÷ 512)
        int canonical = Canonical.of(new JsonFactory(), CHAT.path(), body.getBytes(StandardCharsets.UTF_8),
                body.length()).length();
        assertThat(canonical).isBetween(3001, 3100);
        assertThat(r.get(0).getInteger("input_length")).isEqualTo((canonical + 3) / 4);
        assertThat(r.get(0).getString("input_length_source")).isEqualTo("estimate");
        assertThat(r.get(0).getString("output_length_source")).isEqualTo("estimate"); // 4 chunks, no usage
        assertThat(r.get(0).getInteger("output_length")).isEqualTo(4);
        assertThat(ids(r.get(0))).hasSize(2);
        assertThat(r.get(1).getString("input_length_source")).isEqualTo("format");
        assertThat(r.get(1).getString("output_length_source")).isEqualTo("format");
        assertThat(r.get(2).getInteger("input_length")).isEqualTo(1);
        assertThat(ids(r.get(2))).hasSize(1);
    }

    @Test
    void filesRotateAtTheSizeLimitAndOnlyTheNewestAreKept() throws Exception {
        SidecarTelemetry t = telemetry(Map.of("sidecar.trace.max-file-bytes", "600", "sidecar.trace.max-files", "3"));
        for (int i = 0; i < 12; i++) {
            request(t.traffic(), Map.of(), chatBody("system", "question " + i), 100, 1);
            assertThat(t.trace().sync()).isTrue();
        }
        t.close();
        List<Path> files = TraceFiles.closed(dir);
        assertThat(files).hasSize(3);
        long total = 0;
        for (Path p : files) {
            List<String> lines = Files.readAllLines(p);
            total += lines.size();
            // each file counts from its own first arrival
            assertThat(new JsonObject(lines.get(0)).getLong("timestamp")).isZero();
            assertThat(Files.size(p)).isLessThan(600 + 400);
        }
        assertThat(dir.toFile().list()).allMatch(n -> TraceFiles.CLOSED_NAME.matcher(n).matches());
        // names in time order, the sequence continuing
        assertThat(files.stream().map(p -> p.getFileName().toString()).toList()).isSorted();
        assertThat(total).isLessThan(12).isGreaterThanOrEqualTo(3);
    }

    @Test
    void aFileClosesOnlyOnceTheRequestsThatArrivedInItHaveEnded() throws Exception {
        // every record fills a file: each request's file is replaced as soon as its first record is written
        SidecarTelemetry t = telemetry(Map.of("sidecar.trace.max-file-bytes", "100"));
        TrafficObserver traffic = t.traffic();
        ExchangeObserver slow = arrive(traffic, CHAT, Map.of(), chatBody("a", "slow one"));
        Thread.sleep(5);
        request(traffic, Map.of(), chatBody("a", "quick one"), 10, 1); // fills the first file: a second one starts
        assertThat(t.trace().sync()).isTrue();
        Thread.sleep(5);
        request(traffic, Map.of(), chatBody("a", "later one"), 10, 1); // arrives in the second file, fills it
        assertThat(t.trace().sync()).isTrue();
        List<Path> closed = TraceFiles.closed(dir);
        assertThat(closed).as("the second file closes: its one request ended").hasSize(1);
        try (var files = Files.list(dir)) {
            List<String> open = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".jsonl.open"))
                    .toList();
            assertThat(open).as("the first file waits for the slow request").hasSize(1);
            assertThat(open.get(0)).isLessThan(closed.get(0).getFileName().toString());
        }
        end(slow, 10, 1);
        assertThat(t.trace().sync()).isTrue();
        closed = TraceFiles.closed(dir);
        assertThat(closed).hasSize(2);
        List<String> lines = Files.readAllLines(closed.get(0));
        assertThat(lines).hasSize(2);
        JsonObject quick = new JsonObject(lines.get(0));
        JsonObject slowRecord = new JsonObject(lines.get(1));
        // written when each ended, timestamps from the file's first arrival: the slow one's
        assertThat(slowRecord.getLong("timestamp")).isZero();
        assertThat(quick.getLong("timestamp")).isGreaterThanOrEqualTo(4);
        assertThat(quick.getLong("arrival_unix_ms") - slowRecord.getLong("arrival_unix_ms"))
                .isEqualTo(quick.getLong("timestamp"));
        JsonObject later = new JsonObject(Files.readAllLines(closed.get(1)).get(0));
        assertThat(later.getLong("timestamp")).isZero();
        assertThat(later.getLong("arrival_unix_ms")).isGreaterThan(quick.getLong("arrival_unix_ms"));
    }

    @Test
    void aFullQueueDropsTheRecordAndCountsItWithoutWaiting() throws Exception {
        SidecarTelemetry t = telemetry(Map.of("sidecar.trace.queue-capacity", "2"));
        CountDownLatch release = t.trace().hold();
        long start = System.nanoTime();
        request(t.traffic(), Map.of(), chatBody("s", "one"), 10, 1); // body and record: the queue's 2 places
        request(t.traffic(), Map.of(), chatBody("s", "two"), 10, 1);
        request(t.traffic(), Map.of(), chatBody("s", "three"), 10, 1);
        assertThat(System.nanoTime() - start).as("the event loop never waits").isLessThan(2_000 * MS);
        release.countDown();
        assertThat(t.trace().sync()).isTrue();
        assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_records")).isEqualTo(1);
        assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_records_dropped", "reason", "queue_full"))
                .isEqualTo(2);
        t.close();
        assertThat(records()).hasSize(1);
    }

    @Test
    void bodiesBeyondTheQueuesByteBudgetAreDroppedLikewise() throws Exception {
        String body = chatBody("s", "x".repeat(100));
        SidecarTelemetry t = telemetry(Map.of("sidecar.trace.queue-bytes", Integer.toString(body.length() + 10),
                "sidecar.trace.max-body-bytes", Integer.toString(body.length() + 10)));
        CountDownLatch release = t.trace().hold();
        ExchangeObserver a = arrive(t.traffic(), CHAT, Map.of(), body);
        ExchangeObserver b = arrive(t.traffic(), CHAT, Map.of(), body);
        release.countDown();
        end(a, 10, 1);
        end(b, 10, 1);
        assertThat(t.trace().sync()).isTrue();
        assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_records")).isEqualTo(1);
        assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_records_dropped", "reason", "queue_full"))
                .isEqualTo(1);
    }

    /**
     * Settings the recorder refuses do not stop the proxy: it stays off, an error names the property (never the
     * value), and its series say so, which the shipped alert LLMSidecarTraceNotWriting watches.
     */
    @Test
    void withoutAGoodSecretTheRecorderStaysOffTheProxyServesAndTheMessageNamesThePropertyNeverAValue()
            throws Exception {
        Map<String, String> config = new HashMap<>(Map.of("sidecar.trace.enabled", "true",
                "sidecar.trace.dir", dir.toString()));
        String passphrase = "correct horse battery staple!!"; // 30 characters: neither hex nor 32 bytes of base64
        String shortHex = "0123456789abcdef0123456789abcdef"; // 16 bytes
        for (String secret : new String[] {null, passphrase, shortHex}) {
            if (secret != null) {
                config.put("sidecar.trace.secret", secret);
            }
            io.prometheus.metrics.model.registry.PrometheusRegistry registry =
                    new io.prometheus.metrics.model.registry.PrometheusRegistry();
            try (dev.llmsidecar.support.CapturedLogs logs = new dev.llmsidecar.support.CapturedLogs(
                    java.util.logging.Level.INFO)) {
                SidecarTelemetry t = new SidecarTelemetry(registry, TestConfigs.sidecar("http://127.0.0.1:1", config),
                        System::nanoTime);
                started.add(t);
                assertThat(t.trace()).isNull();
                request(t.traffic(), Map.of(), chatBody("s", "q"), 10, 1); // the proxy's side goes on
                assertThat(logs.atLeast(java.util.logging.Level.SEVERE)).as("secret %s", secret == null ? "unset"
                        : "set").anySatisfy(e -> assertThat(e.text()).contains("sidecar.trace.secret"))
                        .allSatisfy(e -> assertThat(e.text()).doesNotContain(passphrase).doesNotContain(shortHex));
            }
            assertThat(Scrape.has(registry, "llm_sidecar_trace_writing")).isTrue();
            assertThat(Scrape.value(registry, "llm_sidecar_trace_writing")).isZero();
            assertThat(Scrape.value(registry, "llm_sidecar_trace_write_failures", "reason", "configuration"))
                    .isEqualTo(1);
        }
        assertThat(dir.toFile().list()).isEmpty();
        // base64 of 32 bytes is as good as hex
        config.put("sidecar.trace.secret", java.util.Base64.getEncoder().encodeToString(
                java.util.HexFormat.of().parseHex(SECRET)));
        SidecarTelemetry t = new SidecarTelemetry(new io.prometheus.metrics.model.registry.PrometheusRegistry(),
                TestConfigs.sidecar("http://127.0.0.1:1", config), System::nanoTime);
        started.add(t);
        assertThat(t.trace()).isNotNull();
        request(t.traffic(), Map.of(), chatBody("s", "q"), 10, 1);
        t.close();
        assertThat(records()).singleElement().satisfies(r -> assertThat(r.getString("key_id"))
                .isEqualTo(KeyId.of(TraceRecorder.decodeSecret(SECRET))));
    }

    /**
     * A trace directory that cannot be created (its parent is a file) does not stop the proxy: every request is
     * dropped and counted with its reason while it lasts, and once the directory can be made the recorder writes
     * again on its own (its next attempt comes 1 s, 2 s, 4 s ... after the failures).
     */
    @Test
    void aDirectoryThatCannotBeMadeDropsAndCountsEveryRecordUntilItCanThenRecordingResumes() throws Exception {
        Path blocker = Files.writeString(dir.resolve("not-a-dir"), "a file where the trace directory's parent goes");
        Path traces = blocker.resolve("traces");
        SidecarTelemetry t = telemetry(Map.of("sidecar.trace.dir", traces.toString()));
        assertThat(t.trace()).isNotNull();
        for (int i = 0; i < 5; i++) {
            request(t.traffic(), Map.of(), chatBody("s", "q" + i), 10, 1);
        }
        assertThat(t.trace().sync()).isTrue();
        assertThat(Scrape.has(lastRegistry, "llm_sidecar_trace_writing")).isTrue();
        assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_writing")).isZero();
        assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_write_failures", "reason", "not_a_directory"))
                .isGreaterThanOrEqualTo(1);
        assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_records_dropped", "reason", "write_failed"))
                .isEqualTo(5);
        assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_records")).isZero();
        Files.delete(blocker);
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
        int sent = 5;
        while (Scrape.value(lastRegistry, "llm_sidecar_trace_records") == 0 && System.nanoTime() < deadline) {
            request(t.traffic(), Map.of(), chatBody("s", "q" + sent++), 10, 1);
            assertThat(t.trace().sync()).isTrue();
            Thread.sleep(200);
        }
        assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_writing")).isEqualTo(1);
        double written = Scrape.value(lastRegistry, "llm_sidecar_trace_records");
        double dropped = Scrape.value(lastRegistry, "llm_sidecar_trace_records_dropped", "reason", "write_failed");
        assertThat(written + dropped).isEqualTo(sent);
        t.close();
        assertThat(TraceFiles.closed(traces).stream().mapToLong(p -> lines(p)).sum()).isEqualTo((long) written);
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(traces)))
                .isEqualTo("rwx------");
        for (Path p : TraceFiles.closed(traces)) {
            assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(p)))
                    .isEqualTo("rw-------");
        }
    }

    static long lines(Path p) {
        try {
            String text = Files.readString(p);
            assertThat(text).as("a published file holds whole lines").endsWith("\n");
            return text.lines().count();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * A full disk, for real: a 256 KiB tmpfs (mounted here as root; the test says so and is skipped elsewhere) fills
     * while 3 000 requests end, and 100 more end after the recorder's next two tries. Every request is a line or a
     * counted drop, no file is published empty or cut inside a line, and the recorder keeps trying without taking the
     * proxy down.
     */
    @Test
    void onAFullDiskLinesPlusDropsAreTheRequestsAndNoEmptyFileIsPublished() throws Exception {
        Path mount = Files.createDirectories(dir.resolve("tmpfs"));
        Process m = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mount.toString())
                .redirectErrorStream(true).start();
        boolean mounted = m.waitFor(10, java.util.concurrent.TimeUnit.SECONDS) && m.exitValue() == 0;
        org.junit.jupiter.api.Assumptions.assumeTrue(mounted, "mounting a tmpfs needs root: "
                + new String(m.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        try {
            Path traces = mount.resolve("pod-a");
            SidecarTelemetry t = telemetry(Map.of("sidecar.trace.dir", traces.toString(),
                    "sidecar.trace.max-file-bytes", "65536"));
            int requests = 0;
            for (int i = 0; i < 3000; i++) {
                request(t.traffic(), Map.of(), chatBody("system prompt ".repeat(20), "question " + i), 5000, 10);
                requests++;
                if (i % 200 == 0) {
                    assertThat(t.trace().sync()).isTrue();
                }
            }
            // the recorder tries again after 1 s, then 2 s: each try opens a new file that cannot take a line
            for (long waitMs : new long[] {1_200, 2_200}) {
                Thread.sleep(waitMs);
                for (int i = 0; i < 50; i++) {
                    request(t.traffic(), Map.of(), chatBody("system prompt", "after " + i), 5000, 10);
                    requests++;
                }
                assertThat(t.trace().sync()).isTrue();
            }
            assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_write_failures", "reason", "no_space"))
                    .as("the first failure and two tries after it").isGreaterThanOrEqualTo(3);
            t.close();
            double written = Scrape.value(lastRegistry, "llm_sidecar_trace_records");
            double dropped = 0;
            for (TraceStats.Drop d : TraceStats.Drop.values()) {
                dropped += Scrape.value(lastRegistry, "llm_sidecar_trace_records_dropped", "reason",
                        d.name().toLowerCase(Locale.ROOT));
            }
            assertThat(written + dropped).as("lines %s + drops %s", written, dropped).isEqualTo(requests);
            assertThat(dropped).as("the disk filled").isPositive();
            assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_records_dropped", "reason", "late")).isZero();
            assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_write_failures", "reason", "no_space"))
                    .isPositive();
            long lines = 0;
            try (java.util.stream.Stream<Path> files = Files.list(traces)) {
                for (Path p : files.toList()) {
                    assertThat(p.getFileName().toString()).matches(TraceFiles.CLOSED_NAME.pattern());
                    assertThat(Files.size(p)).as("published empty: %s", p).isPositive();
                    lines += lines(p);
                }
            }
            assertThat(lines).isEqualTo((long) written);
        } finally {
            new ProcessBuilder("umount", mount.toString()).start().waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * Symbolic links placed in the trace directory, to a file outside it: a link named as a closed file is never
     * listed or opened, and one named as a file a crash left open is neither truncated nor moved.
     */
    @Test
    void aSymbolicLinkInTheDirectoryIsNeverListedOpenedRecoveredOrTruncated() throws Exception {
        Path outside = Files.writeString(Files.createTempFile("outside", ".jsonl"), "{\"outside\":1}\n{\"cut");
        try {
            Path traces = Files.createDirectories(dir.resolve("traces"));
            Files.writeString(traces.resolve("trace-20260101T000000000Z-000001.jsonl"), "{}\n");
            Files.createSymbolicLink(traces.resolve("trace-20260101T000000000Z-000002.jsonl"), outside);
            Files.createSymbolicLink(traces.resolve("trace-20260101T000000000Z-000003.jsonl.open"), outside);
            SidecarTelemetry t = telemetry(Map.of("sidecar.trace.dir", traces.toString()));
            request(t.traffic(), Map.of(), chatBody("s", "q"), 10, 1);
            t.close();
            assertThat(Files.readString(outside)).isEqualTo("{\"outside\":1}\n{\"cut");
            assertThat(Files.isSymbolicLink(traces.resolve("trace-20260101T000000000Z-000003.jsonl.open"))).isTrue();
            assertThat(TraceFiles.closed(traces)).extracting(p -> p.getFileName().toString())
                    .doesNotContain("trace-20260101T000000000Z-000002.jsonl")
                    .contains("trace-20260101T000000000Z-000001.jsonl").hasSize(2);
            assertThat(TraceFiles.openClosed(traces, "trace-20260101T000000000Z-000002.jsonl")).isEmpty();
            assertThat(TraceFiles.closed(traces, "trace-20260101T000000000Z-000002.jsonl")).isEmpty();
            try (var c = TraceFiles.openClosed(traces, "trace-20260101T000000000Z-000001.jsonl").orElseThrow()) {
                assertThat(c.size()).isEqualTo(3);
            }
        } finally {
            Files.deleteIfExists(outside);
        }
    }

    /**
     * Retention across the volume (sidecar.trace.shared-dir, as the chart lays it out: one directory per pod): a gone
     * pod's directory (no open file, nothing newer than reclaim-after) is reclaimed and counted; a pod's that writes
     * (an open file) or wrote lately is kept; and the oldest closed files across every directory go first once their
     * bytes pass max-total-bytes.
     */
    @Test
    void retentionCoversEveryPodsDirectoryAndReclaimsOnlyGonePods() throws Exception {
        Path shared = Files.createDirectories(dir.resolve("volume"));
        java.nio.file.attribute.FileTime longAgo = java.nio.file.attribute.FileTime.fromMillis(
                System.currentTimeMillis() - java.util.concurrent.TimeUnit.HOURS.toMillis(5));
        Path gone = Files.createDirectories(shared.resolve("pod-gone"));
        Path goneFile = Files.writeString(gone.resolve("trace-20260101T000000000Z-000001.jsonl"), "{}\n");
        Files.setLastModifiedTime(goneFile, longAgo);
        Files.setLastModifiedTime(gone, longAgo);
        Path fresh = Files.createDirectories(shared.resolve("pod-starting")); // made now, nothing written yet
        Path live = Files.createDirectories(shared.resolve("pod-live"));
        Path liveOld = Files.writeString(live.resolve("trace-20260101T010000000Z-000001.jsonl"), "x".repeat(999) + "\n");
        Files.setLastModifiedTime(liveOld, longAgo);
        Files.writeString(live.resolve("trace-20260101T020000000Z-000002.jsonl.open"), "");
        Path recent = Files.createDirectories(shared.resolve("pod-recent"));
        Path recentOld = Files.writeString(recent.resolve("trace-20260101T030000000Z-000001.jsonl"),
                "y".repeat(999) + "\n");
        Path recentNew = Files.writeString(recent.resolve("trace-20260102T000000000Z-000002.jsonl"),
                "z".repeat(999) + "\n");
        Path notOurs = Files.createDirectories(shared.resolve("lost+found"));
        Files.writeString(notOurs.resolve("something"), "kept");
        Files.setLastModifiedTime(notOurs.resolve("something"), longAgo);
        Files.setLastModifiedTime(notOurs, longAgo);
        Path own = shared.resolve("pod-a");
        SidecarTelemetry t = telemetry(Map.of("sidecar.trace.dir", own.toString(), "sidecar.trace.shared-dir",
                shared.toString(), "sidecar.trace.max-files", "3", "sidecar.trace.reclaim-after", "PT4H",
                "sidecar.trace.max-total-bytes", "2500"));
        request(t.traffic(), Map.of(), chatBody("s", "q"), 10, 1);
        t.close();
        assertThat(gone).doesNotExist();
        assertThat(fresh).as("a pod that just made its directory").exists();
        assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_directories_reclaimed")).isEqualTo(1);
        assertThat(live.resolve("trace-20260101T020000000Z-000002.jsonl.open")).exists();
        assertThat(notOurs.resolve("something")).as("a directory with other files is never emptied of them").exists();
        // 3 x 1000 bytes and this pod's file: over 2500, so the oldest by name goes, whichever pod wrote it
        assertThat(liveOld).doesNotExist();
        assertThat(recentOld).exists();
        assertThat(recentNew).exists();
        assertThat(TraceFiles.closed(own)).hasSize(1);
        assertThat(Scrape.value(lastRegistry, "llm_sidecar_trace_files_deleted")).isEqualTo(2); // gone's and liveOld
        // a reclaim-after no longer than max-files x max-file-age would take a quiet live pod's directory: refused
        assertThat(telemetry(Map.of("sidecar.trace.dir", own.toString(), "sidecar.trace.shared-dir",
                shared.toString(), "sidecar.trace.max-files", "3", "sidecar.trace.reclaim-after", "PT3H")).trace())
                .isNull();
    }

    /** Through the recorder: a prompt shorter than one block gets other ids in each record (docs/capacity-guide.md). */
    @Test
    void aPromptShorterThanOneBlockGetsDifferentIdsInTwoRecords() throws Exception {
        SidecarTelemetry t = telemetry(Map.of());
        String pin = chatBody("You check PINs.", "My PIN is 4711");
        request(t.traffic(), Map.of(), pin, 30, 1);
        request(t.traffic(), Map.of(), pin, 30, 1);
        t.close();
        List<JsonObject> r = records();
        assertThat(r).hasSize(2);
        assertThat(ids(r.get(0))).hasSize(1);
        assertThat(ids(r.get(1))[0]).isNotEqualTo(ids(r.get(0))[0]);
    }

    @Test
    void aFileACrashLeftOpenIsClosedAfterItsLastWholeLineWhenRecordingStarts() throws Exception {
        Files.writeString(dir.resolve("trace-20260101T000000000Z-000007.jsonl.open"),
                "{\"timestamp\":0,\"input_length\":1}\n{\"timestamp\":5,\"inp");
        Files.writeString(dir.resolve("trace-20260101T010000000Z-000008.jsonl.open"), "{\"timest");
        SidecarTelemetry t = telemetry(Map.of());
        request(t.traffic(), Map.of(), chatBody("s", "q"), 10, 1);
        t.close();
        List<Path> closed = TraceFiles.closed(dir);
        assertThat(closed).hasSize(2);
        assertThat(Files.readString(closed.get(0))).isEqualTo("{\"timestamp\":0,\"input_length\":1}\n");
        // the torn file with no whole line is gone; the sequence goes on from the last file kept
        assertThat(closed.get(1).getFileName().toString()).endsWith("-000008.jsonl");
        assertThat(dir.toFile().list()).hasSize(2);
    }

    @Test
    void onlyAClosedFilesExactNameIsEverResolved() throws Exception {
        Files.writeString(dir.resolve("trace-20260101T000000000Z-000001.jsonl"), "{}\n");
        Files.writeString(dir.resolve("trace-20260101T000000000Z-000002.jsonl.open"), "{}\n");
        Files.writeString(dir.resolve("notes.txt"), "x");
        Path inner = Files.createDirectories(dir.resolve("sub"));
        Files.writeString(inner.resolve("trace-20260101T000000000Z-000003.jsonl"), "{}\n");
        assertThat(TraceFiles.closed(dir)).extracting(p -> p.getFileName().toString())
                .containsExactly("trace-20260101T000000000Z-000001.jsonl");
        assertThat(TraceFiles.closed(dir, "trace-20260101T000000000Z-000001.jsonl")).isPresent();
        for (String bad : List.of("trace-20260101T000000000Z-000002.jsonl.open", "notes.txt", "../notes.txt",
                "sub/trace-20260101T000000000Z-000003.jsonl", "../" + dir.getFileName() + "/notes.txt",
                "..%2Ftrace-20260101T000000000Z-000001.jsonl", "/etc/passwd", "", ".",
                "trace-20260101T000000000Z-000001.jsonl/..", "trace-20260101T000000000Z-000009.jsonl")) {
            assertThat(TraceFiles.closed(dir, bad)).as(bad).isEmpty();
        }
        assertThat(TraceFiles.closed(dir, null)).isEmpty();
    }

    @Test
    void whileTheRecorderIsOffNothingIsReadCopiedOrAllocatedForIt() {
        SidecarTelemetry t = new SidecarTelemetry(registry.getPrometheusRegistry(),
                TestConfigs.sidecar("http://127.0.0.1:1", Map.of()), System::nanoTime);
        assertThat(t.trace()).isNull();
        RequestBytes untouchable = new RequestBytes() {
            @Override
            public int length() {
                throw new AssertionError("read while the recorder is off");
            }

            @Override
            public void copyTo(byte[] dst, int length) {
                throw new AssertionError("copied while the recorder is off");
            }
        };
        ExchangeObserver x = t.traffic().exchangeStarted(new ChatHead(Map.of()), CHAT, System.nanoTime());
        x.requestInspected("m1", true, null);
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        for (int i = 0; i < 1000; i++) {
            x.requestBody(untouchable); // warm
        }
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < 100_000; i++) {
            x.requestBody(untouchable);
        }
        assertThat(threads.getThreadAllocatedBytes(id) - before).as("bytes allocated by 100 000 calls").isLessThan(1024);
        x.requestSent();
        end(x, 10, 1);
        t.close();
        assertThat(dir.toFile().list()).isEmpty();
    }
}
