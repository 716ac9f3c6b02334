package dev.llmsidecar.trace;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a trace file cannot reveal: high-entropy prompts and responses (random letter words, so that no 8-byte run of
 * them occurs anywhere by chance) sent through the sidecar's real proxy with recording on, in three wire formats,
 * streamed and not, with a session header of random letters too; then no 8-byte run of any prompt, response or session
 * value is in any byte of any recorded file. The same requests recorded under another secret get other hash ids and
 * session ids throughout.
 */
class TraceLeakTest {

    static final int REQUESTS = 24;

    @TempDir
    Path first;
    @TempDir
    Path second;

    /** Everything the client and the engine said: what must not be in a file. */
    final ConcurrentLinkedQueue<String> texts = new ConcurrentLinkedQueue<>();

    static String words(Random random, int n) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                out.append(' ');
            }
            int length = 3 + random.nextInt(8);
            for (int c = 0; c < length; c++) {
                out.append((char) ('a' + random.nextInt(26)));
            }
        }
        return out.toString();
    }

    /** An engine that answers with random words in the format of the path: OpenAI stream or JSON, Ollama. */
    HttpServer upstream(Vertx vertx, long seed) throws Exception {
        Random random = new Random(seed);
        return ProxyFixture.await(vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(body -> {
            JsonObject request = body.toJsonObject();
            String answer;
            synchronized (random) {
                answer = words(random, 20 + random.nextInt(40));
            }
            texts.add(answer);
            respond(req, request, answer);
        })).listen(0, "127.0.0.1"));
    }

    static void respond(HttpServerRequest req, JsonObject request, String answer) {
        JsonObject usage = new JsonObject().put("prompt_tokens", 1800).put("completion_tokens", 20)
                .put("total_tokens", 1820);
        switch (req.path()) {
            case "/v1/chat/completions" -> {
                if (request.getBoolean("stream", false)) {
                    req.response().setChunked(true).putHeader("content-type", "text/event-stream");
                    String[] pieces = answer.split(" ");
                    for (String piece : pieces) {
                        JsonObject chunk = new JsonObject().put("id", "c").put("object", "chat.completion.chunk")
                                .put("model", "leak-model").put("choices", new JsonArray().add(new JsonObject()
                                        .put("index", 0).put("delta", new JsonObject().put("content", piece + " "))));
                        req.response().write("data: " + chunk.encode() + "\n\n");
                    }
                    req.response().write("data: " + new JsonObject().put("id", "c").put("choices", new JsonArray())
                            .put("usage", usage).encode() + "\n\n");
                    req.response().end("data: [DONE]\n\n");
                } else {
                    req.response().putHeader("content-type", "application/json").end(new JsonObject()
                            .put("id", "c").put("model", "leak-model").put("choices", new JsonArray().add(
                                    new JsonObject().put("index", 0).put("message", new JsonObject()
                                            .put("role", "assistant").put("content", answer))
                                            .put("finish_reason", "stop"))).put("usage", usage).encode());
                }
            }
            case "/v1/completions" -> req.response().putHeader("content-type", "application/json").end(new JsonObject()
                    .put("id", "c").put("model", "leak-model").put("choices", new JsonArray().add(new JsonObject()
                            .put("index", 0).put("text", answer).put("finish_reason", "stop"))).put("usage", usage)
                    .encode());
            case "/api/chat" -> req.response().putHeader("content-type", "application/json").end(new JsonObject()
                    .put("model", "leak-model").put("message", new JsonObject().put("role", "assistant")
                            .put("content", answer)).put("done", true).put("prompt_eval_count", 1800)
                    .put("eval_count", 20).encode());
            default -> req.response().setStatusCode(404).end();
        }
    }

    /** The same seeded requests through a sidecar recording into {@code dir} under {@code secret}. */
    void record(Path dir, String secret) throws Exception {
        Vertx upstreamVertx = Vertx.vertx();
        try {
            HttpServer engine = upstream(upstreamVertx, 7);
            try (ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of("sidecar.trace.enabled", "true",
                    "sidecar.trace.dir", dir.toString(), "sidecar.trace.secret", secret,
                    "sidecar.trace.session-header", "x-conversation", "sidecar.trace.block-bytes", "256",
                    "sidecar.trace.max-file-bytes", "4096"), "http://127.0.0.1:" + engine.actualPort())) {
                Random random = new Random(42);
                for (int i = 0; i < REQUESTS; i++) {
                    String system = words(random, 30 + random.nextInt(100));
                    String user = words(random, 30 + random.nextInt(300));
                    String session = words(random, 3);
                    texts.add(system);
                    texts.add(user);
                    texts.add(session);
                    String path;
                    JsonObject body = new JsonObject().put("model", "leak-model");
                    switch (i % 4) {
                        case 0, 1 -> {
                            path = "/v1/chat/completions";
                            body.put("stream", i % 4 == 0).put("messages", new JsonArray()
                                    .add(new JsonObject().put("role", "system").put("content", system))
                                    .add(new JsonObject().put("role", "user").put("content", user)));
                        }
                        case 2 -> {
                            path = "/v1/completions";
                            body.put("prompt", system + "\n" + user);
                        }
                        default -> {
                            path = "/api/chat";
                            body.put("stream", false).put("messages", new JsonArray()
                                    .add(new JsonObject().put("role", "user").put("content", system + " " + user)));
                        }
                    }
                    var received = f.post(f.proxyPort, path, body.encode(), Map.of("x-conversation", session));
                    assertThat(received.status()).as(path).isEqualTo(200);
                    // written before the next one arrives, so the files rotate where the size says (a burst arriving
                    // before the recorder's thread writes lands in one file: it is one window of arrivals)
                    assertThat(f.telemetry.trace().sync()).isTrue();
                }
            }
        } finally {
            ProxyFixture.await(upstreamVertx.close());
        }
    }

    static List<JsonObject> records(Path dir) throws Exception {
        List<JsonObject> out = new ArrayList<>();
        for (Path p : TraceFiles.closed(dir)) {
            for (String line : Files.readAllLines(p)) {
                out.add(new JsonObject(line));
            }
        }
        return out;
    }

    /** Every 8-byte run of every file of {@code dir}, as a long. */
    static Set<Long> runsOfEightBytes(Path dir) throws Exception {
        Set<Long> runs = new HashSet<>();
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                byte[] b = Files.readAllBytes(p);
                for (int i = 0; i + 8 <= b.length; i++) {
                    runs.add(eight(b, i));
                }
            }
        }
        return runs;
    }

    static long eight(byte[] b, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[at + i] & 0xFF);
        }
        return v;
    }

    @Test
    void noRunOfEightBytesOfAnyPromptOrResponseIsInAFileAndAnotherSecretGivesOtherIds() throws Exception {
        record(first, "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0");
        int spoken = texts.size();
        record(second, "f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f");
        assertThat(texts).hasSize(2 * spoken);

        List<JsonObject> a = records(first);
        List<JsonObject> b = records(second);
        assertThat(a).hasSize(REQUESTS);
        assertThat(b).hasSize(REQUESTS);
        assertThat(TraceFiles.closed(first)).as("rotated at 4 KiB").hasSizeGreaterThan(1);

        long checked = 0;
        for (Path dir : List.of(first, second)) {
            Set<Long> runs = runsOfEightBytes(dir);
            for (String text : texts) {
                byte[] t = text.getBytes(StandardCharsets.UTF_8);
                for (int i = 0; i + 8 <= t.length; i++) {
                    checked++;
                    if (runs.contains(eight(t, i))) {
                        throw new AssertionError("a trace file of " + dir + " holds the 8 bytes '"
                                + new String(t, i, 8, StandardCharsets.UTF_8) + "' of a prompt or response");
                    }
                }
            }
        }
        assertThat(checked).as("8-byte runs checked").isGreaterThan(50_000);

        // the same requests in the same order: every id and every session differs between the two secrets
        a.sort(java.util.Comparator.comparingLong(r -> r.getLong("arrival_unix_ms")));
        b.sort(java.util.Comparator.comparingLong(r -> r.getLong("arrival_unix_ms")));
        Set<Long> idsA = new HashSet<>();
        for (JsonObject r : a) {
            r.getJsonArray("hash_ids").forEach(id -> idsA.add(((Number) id).longValue()));
        }
        int compared = 0;
        for (int i = 0; i < REQUESTS; i++) {
            JsonArray x = a.get(i).getJsonArray("hash_ids");
            JsonArray y = b.get(i).getJsonArray("hash_ids");
            assertThat(y.size()).isEqualTo(x.size());
            for (Object id : y) {
                assertThat(idsA).doesNotContain(((Number) id).longValue());
                compared++;
            }
            assertThat(b.get(i).getString("session_id")).isNotEqualTo(a.get(i).getString("session_id"));
        }
        assertThat(compared).as("ceil(1800 / 512) ids a record").isEqualTo(4 * REQUESTS);
    }

    /** The check finds a run that is there: a file holding a few bytes of one prompt is caught. */
    @Test
    void theCheckCatchesEightBytesOfAPrompt() throws Exception {
        String prompt = words(new Random(1), 50);
        Files.writeString(first.resolve("trace-20260101T000000000Z-000001.jsonl"),
                "{\"timestamp\":0,\"x\":\"" + prompt.substring(100, 108) + "\"}\n");
        Set<Long> runs = runsOfEightBytes(first);
        byte[] t = prompt.getBytes(StandardCharsets.UTF_8);
        boolean found = false;
        for (int i = 0; i + 8 <= t.length; i++) {
            found |= runs.contains(eight(t, i));
        }
        assertThat(found).isTrue();
    }
}
