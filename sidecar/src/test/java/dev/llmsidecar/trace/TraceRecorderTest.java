package dev.llmsidecar.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.app.SidecarTelemetry;
import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.RequestBytes;
import dev.llmsidecar.observe.RequestHead;
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
    static final String SECRET = "test-secret-0123456789abcdef";

    @TempDir
    Path dir;
    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    final List<SidecarTelemetry> started = new ArrayList<>();
    /** The registry of the telemetry last made. */
    io.prometheus.metrics.model.registry.PrometheusRegistry lastRegistry;

    SidecarTelemetry telemetry(Map<String, String> more) {
        Map<String, String> config = new HashMap<>(Map.of("sidecar.trace.enabled", "true",
                "sidecar.trace.dir", dir.toString(), "sidecar.trace.secret", SECRET));
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

    record Head(Map<String, String> headers) implements RequestHead {
        @Override
        public String method() {
            return "POST";
        }

        @Override
        public String path() {
            return "/v1/chat/completions";
        }

        @Override
        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        @Override
        public Iterable<String> headerNames() {
            return headers.keySet();
        }
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
        ExchangeObserver x = traffic.exchangeStarted(new Head(headers), op, System.nanoTime());
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
                "tpot_ms", "e2e_ms", "input_length_source", "output_length_source");
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
        // block-bytes 64 is 512 tokens' worth: input 2560 tokens, 5 ids; the canonical prompt is 4 blocks long
        assertThat(ids(r.get(1))).isEqualTo(ids(r.get(0))).hasSize(5);
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
        String body = chatBody("same system", "same question");
        SidecarTelemetry one = telemetry(Map.of("sidecar.trace.session-header", "x-session-id"));
        request(one.traffic(), Map.of("x-session-id", "s1"), body, 700, 1);
        request(one.traffic(), Map.of("x-session-id", "s1"), body, 700, 1);
        one.close();
        List<JsonObject> first = records();
        for (Path p : TraceFiles.closed(dir)) {
            Files.delete(p);
        }
        SidecarTelemetry two = telemetry(Map.of("sidecar.trace.session-header", "x-session-id",
                "sidecar.trace.secret", "a-different-secret-of-enough-bytes"));
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

    @Test
    void withoutASecretTheSidecarDoesNotStartAndTheMessageNamesThePropertyNeverAValue() {
        Map<String, String> noSecret = new HashMap<>(Map.of("sidecar.trace.enabled", "true",
                "sidecar.trace.dir", dir.toString()));
        assertThatThrownBy(() -> new SidecarTelemetry(new io.prometheus.metrics.model.registry.PrometheusRegistry(),
                TestConfigs.sidecar("http://127.0.0.1:1", noSecret), System::nanoTime))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sidecar.trace.secret");
        noSecret.put("sidecar.trace.secret", "tooShort99");
        assertThatThrownBy(() -> new SidecarTelemetry(new io.prometheus.metrics.model.registry.PrometheusRegistry(),
                TestConfigs.sidecar("http://127.0.0.1:1", noSecret), System::nanoTime))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sidecar.trace.secret")
                .hasMessageNotContaining("tooShort99");
        assertThat(dir.toFile().list()).isEmpty();
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
        ExchangeObserver x = t.traffic().exchangeStarted(new Head(Map.of()), CHAT, System.nanoTime());
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
