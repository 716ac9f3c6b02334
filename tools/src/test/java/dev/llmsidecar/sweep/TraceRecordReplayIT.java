package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.SimulatedEngine;
import dev.llmsidecar.testkit.Processes;
import dev.llmsidecar.trace.TraceFiles;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The trace recorder as users run it: the packaged jar (sidecar.trace.* on), its files fetched from the management
 * port, merged with bin/trace-merge's code and replayed with bin/sweep's ({@code --trace}) through another packaged
 * sidecar in front of a fresh llama-server (4 slots and their prompt cache; random weights on a real tokenizer,
 * ../shared/reference/real-engine.md).
 *
 * <p>{@link #aRecordedTraceReplaysWithItsLengthsArrivalsAndPrefixCacheHits}: traffic with known prefix sharing (four
 * system prompts of 1024 one-token words, each request one of them and a user message of its own, Poisson arrivals)
 * recorded through sidecar A in front of llama-server A; the replay of the recording, recorded again through sidecar
 * B in front of llama-server B, must give the original's input and output length medians and p90s and its median
 * inter-arrival time within 5 %, and llama-server's prefix-cache hit ratio (cached ÷ all prompt tokens, from its own
 * counters) within 5 points of the recording run's.
 *
 * <p>{@link #theManagementPortServesClosedFilesOnly} and {@link #withoutASecretTheSidecarDoesNotStart} need no
 * engine of their own (the simulated one, none).
 */
class TraceRecordReplayIT {

    /** 32 bytes in hex, as {@code openssl rand -hex 32} makes them. */
    static final String SECRET = "7e3b9c1d5a2f48e6b0c4d8a2f6e1b3c5d7a9e2f4b6c8d0e1f3a5b7c9d1e3f5a7";
    /** The bearer token of /q/traces, in the file {@link #tokenFile} names. */
    static final String TOKEN = "it-token-" + java.util.UUID.randomUUID();
    /** Five-letter English words, each one token of the llama SPM vocabulary (checked with /tokenize below). */
    static final List<String> WORDS = List.of(("about after again where which there their other would could water "
            + "think these those every first found great house large later light might never often place right "
            + "small sound still study thing three under until while world write years young").split(" "));
    static final int SYSTEM_WORDS = 1024;
    static final int REQUESTS = 150;
    static final double MEAN_GAP_MS = 300;
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static Path out(String name) throws Exception {
        Path p = Path.of("target/trace-it", name).toAbsolutePath();
        if (Files.exists(p)) {
            try (Stream<Path> old = Files.walk(p)) {
                for (Path f : old.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(f);
                }
            }
        }
        return Files.createDirectories(p);
    }

    static HttpResponse<String> get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The value of the exposition line that starts with {@code series} and a space; -1 when there is none. */
    static double value(String metrics, String series) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).trim().split(" ")[0]);
            }
        }
        return -1;
    }

    /** A simulated engine on {@code vertx}, on an ephemeral port of 127.0.0.1: its port. */
    static int simulatedEngine(Vertx vertx, EngineBehaviour behaviour) throws Exception {
        return new SimulatedEngine(vertx, behaviour).start("127.0.0.1", 0).toCompletionStage().toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
    }

    /** POSTs a chat request for the simulated engine's model, asking {@code q}, through the sidecar's proxy port. */
    static HttpResponse<String> chat(Processes.Sidecar sidecar, String q) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + sidecar.proxyPort
                + "/v1/chat/completions")).header("content-type", "application/json").POST(
                HttpRequest.BodyPublishers.ofString("{\"model\":\"sim-llama-8b\",\"messages\":[{\"role\":\"user\","
                        + "\"content\":\"" + q + "\"}]}")).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** GET with {@code Authorization: Bearer token}. */
    static HttpResponse<String> get(String url, String token) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).header("authorization", "Bearer " + token)
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The token file of a run's trace directory {@code dir} (beside it, not in it), holding this run's token. */
    static Path tokenFile(Path dir) throws Exception {
        Path f = dir.resolveSibling(dir.getFileName() + ".token");
        if (!Files.exists(f) || !Files.readString(f).strip().equals(TOKEN)) {
            Files.writeString(f, TOKEN + "\n"); // a file left by an earlier run holds that run's token
        }
        return f;
    }

    /** llama-server's prompt token counters: [processed, taken from the prefix cache]. */
    static double[] promptCounters(int enginePort) throws Exception {
        double processed = 0;
        double cached = 0;
        for (String line : get("http://127.0.0.1:" + enginePort + "/metrics").body().split("\n")) {
            if (line.startsWith("llamacpp:prompt_tokens_total ")) {
                processed = Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
            } else if (line.startsWith("llamacpp:prompt_tokens_cached_total ")) {
                cached = Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        return new double[] {processed, cached};
    }

    static double hitRatio(double[] before, double[] after) {
        double processed = after[0] - before[0];
        double cached = after[1] - before[1];
        return cached / (processed + cached);
    }

    static int tokens(int enginePort, String text) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + enginePort
                + "/tokenize")).POST(HttpRequest.BodyPublishers.ofString(new JsonObject().put("content", text)
                        .encode())).build(), HttpResponse.BodyHandlers.ofString());
        return new JsonObject(r.body()).getJsonArray("tokens").size();
    }

    /** The p-quantile by the nearest rank. */
    static double quantile(double[] values, double p) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v[Math.max(0, (int) Math.ceil(p * v.length) - 1)];
    }

    static double[] field(List<JsonObject> records, String name) {
        return records.stream().mapToDouble(r -> r.getDouble(name)).toArray();
    }

    static double[] gaps(List<JsonObject> byArrival) {
        double[] g = new double[byArrival.size() - 1];
        for (int i = 1; i < byArrival.size(); i++) {
            g[i - 1] = byArrival.get(i).getLong("arrival_unix_ms") - byArrival.get(i - 1).getLong("arrival_unix_ms");
        }
        return g;
    }

    static List<JsonObject> records(List<Path> files) throws Exception {
        List<JsonObject> out = new ArrayList<>();
        for (Path p : files) {
            for (String line : Files.readAllLines(p, StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    out.add(new JsonObject(line));
                }
            }
        }
        out.sort(Comparator.comparingLong(r -> r.getLong("arrival_unix_ms")));
        return out;
    }

    static Processes.Sidecar tracingSidecar(int enginePort, Path dir, Map<String, String> more) throws Exception {
        Map<String, String> props = new HashMap<>(Map.of("sidecar.trace.enabled", "true",
                "sidecar.trace.dir", dir.toString(), "sidecar.trace.token-file", tokenFile(dir).toString()));
        props.putAll(more);
        return Processes.Sidecar.launch(Processes.required("sidecar.jar"))
                .upstream("http://127.0.0.1:" + enginePort).env("SIDECAR_ENGINE_SCRAPE_INTERVAL", "PT0.5S")
                .env("SIDECAR_TRACE_SECRET", SECRET).properties(props).start();
    }

    /** Downloads every closed file /q/traces lists into {@code into}; returns them. */
    static List<Path> fetch(Processes.Sidecar sidecar, Path into) throws Exception {
        String base = "http://127.0.0.1:" + sidecar.managementPort + "/q/traces";
        JsonArray files = new JsonObject(get(base, TOKEN).body()).getJsonArray("files");
        List<Path> out = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            String name = files.getJsonObject(i).getString("name");
            HttpResponse<String> r = get(base + "/" + name, TOKEN);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body().length()).isEqualTo(files.getJsonObject(i).getLong("bytes").intValue());
            out.add(Files.writeString(into.resolve(name), r.body()));
        }
        return out;
    }

    /** Waits until the sidecar has no trace file open and its closed files hold {@code records} lines. */
    static void awaitClosed(Processes.Sidecar sidecar, Path dir, int records) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            long lines = 0;
            for (Path p : TraceFiles.closed(dir)) {
                lines += Files.readAllLines(p).size();
            }
            boolean open;
            try (Stream<Path> files = Files.list(dir)) {
                open = files.anyMatch(p -> p.getFileName().toString().endsWith(".open"));
            }
            if (lines >= records && !open) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the trace files of " + dir + " did not close with " + records + " records");
    }

    @Test
    void aRecordedTraceReplaysWithItsLengthsArrivalsAndPrefixCacheHits() throws Exception {
        Path recordedDir = out("recorded");
        Path fetchedDir = out("fetched");
        Path replayDir = out("replayed");
        Random random = new Random(37);
        String[] systems = new String[4];
        for (int s = 0; s < systems.length; s++) {
            StringBuilder b = new StringBuilder();
            for (int w = 0; w < SYSTEM_WORDS; w++) {
                b.append(w == 0 ? "" : " ").append(WORDS.get(random.nextInt(WORDS.size())));
            }
            systems[s] = b.toString();
        }
        // 6 bytes a token in these prompts (5 letters and a space, one token each): 512 tokens are 3072 bytes; the
        // canonical prompt's first two blocks lie inside the system prompt (19 bytes of "messages:[{content:", then
        // its 6143), the third starts in its last words and takes the user's: blocks shared exactly where the
        // prefix is, as Mooncake's 512-token blocks would be
        String blockBytes = "3072";

        int enginePort = Processes.freePort();
        double hitA;
        List<JsonObject> recorded;
        Path merged = fetchedDir.resolve("day.jsonl");
        try (Processes.Running engine = Processes.llamaServer(enginePort);
                Processes.Sidecar sidecar = tracingSidecar(enginePort, recordedDir, Map.of(
                        "sidecar.trace.block-bytes", blockBytes, "sidecar.trace.max-file-age", "PT5S"))) {
            for (String s : systems) {
                assertThat(tokens(enginePort, s)).as("one token a word").isEqualTo(SYSTEM_WORDS);
            }
            sidecar.awaitReady(Duration.ofSeconds(30));
            double[] before = promptCounters(enginePort);
            List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
            long start = System.nanoTime();
            double at = 0;
            for (int i = 0; i < REQUESTS; i++) {
                at += -Math.log(1 - random.nextDouble()) * MEAN_GAP_MS;
                int userWords = (int) Math.max(100, Math.min(700, Math.round(Math.exp(5.6 + 0.45
                        * random.nextGaussian()))));
                StringBuilder user = new StringBuilder();
                for (int w = 0; w < userWords; w++) {
                    user.append(w == 0 ? "" : " ").append(WORDS.get(random.nextInt(WORDS.size())));
                }
                JsonObject body = new JsonObject().put("model", "tiny").put("stream", true).put("temperature", 0)
                        .put("ignore_eos", true).put("max_tokens", 16 + random.nextInt(49))
                        .put("messages", new JsonArray()
                                .add(new JsonObject().put("role", "system").put("content",
                                        systems[random.nextInt(systems.length)]))
                                .add(new JsonObject().put("role", "user").put("content", user.toString())));
                long wait = start + (long) (at * 1e6) - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                sent.add(HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + sidecar.proxyPort
                        + "/v1/chat/completions")).header("content-type", "application/json")
                        .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body.encode()))
                        .build(), HttpResponse.BodyHandlers.ofString()));
            }
            for (CompletableFuture<HttpResponse<String>> f : sent) {
                HttpResponse<String> r = f.get(120, TimeUnit.SECONDS);
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).contains("[DONE]");
            }
            hitA = hitRatio(before, promptCounters(enginePort));
            // the last file closes at its age (5 s) once its requests ended: then the management port serves it
            awaitClosed(sidecar, recordedDir, REQUESTS);
            List<Path> fetched = fetch(sidecar, fetchedDir);
            assertThat(fetched).as("a file every 5 s of arrivals").hasSizeGreaterThan(3);
            String metrics = sidecar.metrics();
            assertThat(metrics).contains("llm_sidecar_trace_records_total " + REQUESTS + ".0",
                    "llm_sidecar_trace_records_dropped_total{reason=\"queue_full\"} 0.0");
            // the prompts' bytes per token, as the docs tell operators to read it for block-bytes: 6 here
            double bytes = metricValue(metrics, "llm_sidecar_trace_prompt_bytes_total");
            double promptTokens = metricValue(metrics, "llm_sidecar_trace_prompt_tokens_total");
            assertThat(bytes / promptTokens).isBetween(5.5, 6.2);
            assertThat(sidecar.running.lines).noneMatch(l -> l.contains(SECRET));

            // bin/trace-merge of the fetched files: one trace in arrival order
            List<String> args = new ArrayList<>(List.of("-o", merged.toString()));
            fetched.forEach(p -> args.add(p.toString()));
            assertThat(traceMerge(args)).isZero();
            recorded = records(List.of(merged));
            assertThat(recorded).hasSize(REQUESTS);
        }

        // the replay: bin/sweep --trace day.jsonl at speed-up 1 through sidecar B in front of a fresh llama-server B
        int enginePortB = Processes.freePort();
        double hitB;
        long span = recorded.get(REQUESTS - 1).getLong("timestamp");
        Vertx vertx = Vertx.vertx();
        try (Processes.Running engine = Processes.llamaServer(enginePortB);
                Processes.Sidecar sidecar = tracingSidecar(enginePortB, replayDir, Map.of(
                        "sidecar.trace.block-bytes", blockBytes))) {
            sidecar.awaitReady(Duration.ofSeconds(30));
            SweepOptions o = SweepOptions.parse("--url", "http://127.0.0.1:" + sidecar.proxyPort, "--metrics-url",
                    "http://127.0.0.1:" + sidecar.managementPort, "--model", "tiny", "--trace", merged.toString(),
                    "--speedup", "1", "--warmup-seconds", "0", "--step-seconds",
                    Long.toString(span / 1000 + 30), "--drain-seconds", "60", "--quiet",
                    "--out", out("sweep").toString());
            double[] before = promptCounters(enginePortB);
            SweepResult result = Sweep.run(o, vertx, System.err);
            hitB = hitRatio(before, promptCounters(enginePortB));
            assertThat(result.steps()).hasSize(1);
            assertThat(result.steps().get(0).client().errorCount()).isZero();
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
        // sidecar B is stopped: its files are closed; the last REQUESTS records are the replay's (before them: the
        // sweep's check request and its two calibration probes)
        List<JsonObject> all = records(TraceFiles.closed(replayDir));
        assertThat(all.size()).isBetween(REQUESTS, REQUESTS + 5);
        List<JsonObject> replayed = all.subList(all.size() - REQUESTS, all.size());

        double[] inA = field(recorded, "input_length");
        double[] inB = field(replayed, "input_length");
        double[] outA = field(recorded, "output_length");
        double[] outB = field(replayed, "output_length");
        double gapA = quantile(gaps(recorded), 0.5);
        double gapB = quantile(gaps(replayed), 0.5);
        System.out.printf(Locale.ROOT, "TraceRecordReplayIT: %d requests over %.1f s; input p50 %.0f / %.0f, p90 %.0f "
                + "/ %.0f tokens; output p50 %.0f / %.0f, p90 %.0f / %.0f; inter-arrival p50 %.0f / %.0f ms; prefix-cache "
                + "hit ratio %.3f / %.3f (recorded / replayed)%n", REQUESTS, span / 1000.0, quantile(inA, 0.5),
                quantile(inB, 0.5), quantile(inA, 0.9), quantile(inB, 0.9), quantile(outA, 0.5), quantile(outB, 0.5),
                quantile(outA, 0.9), quantile(outB, 0.9), gapA, gapB, hitA, hitB);
        assertThat(quantile(inB, 0.5)).isCloseTo(quantile(inA, 0.5), withinPercent(5));
        assertThat(quantile(inB, 0.9)).isCloseTo(quantile(inA, 0.9), withinPercent(5));
        assertThat(quantile(outB, 0.5)).isCloseTo(quantile(outA, 0.5), withinPercent(5));
        assertThat(quantile(outB, 0.9)).isCloseTo(quantile(outA, 0.9), withinPercent(5));
        assertThat(gapB).isCloseTo(gapA, withinPercent(5));
        assertThat(hitA).as("the recording run's hit ratio: the shared system prompts").isBetween(0.4, 0.9);
        assertThat(hitB).as("the replay's hit ratio").isCloseTo(hitA, org.assertj.core.api.Assertions.within(0.05));
    }

    static org.assertj.core.data.Percentage withinPercent(double p) {
        return org.assertj.core.data.Percentage.withPercentage(p);
    }

    static double metricValue(String exposition, String name) {
        for (String line : exposition.split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError(name + " not in the scrape");
    }

    /** bin/trace-merge, in this JVM. */
    static int traceMerge(List<String> args) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = TraceMerge.run(args.toArray(String[]::new), new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(err));
        System.err.print(err);
        return status;
    }

    @Test
    void theManagementPortServesClosedFilesOnly() throws Exception {
        Path dir = out("served");
        Vertx vertx = Vertx.vertx();
        try {
            int port = simulatedEngine(vertx, EngineBehaviour.defaults()
                    .withTiming(Duration.ofMillis(2), Duration.ofMillis(1)).withOutputTokens(4));
            try (Processes.Sidecar sidecar = tracingSidecar(port, dir, Map.of("sidecar.trace.max-file-bytes", "1500",
                    "sidecar.trace.session-header", "x-session"))) {
                sidecar.awaitReady(Duration.ofSeconds(30));
                for (int i = 0; i < 20; i++) {
                    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                            + sidecar.proxyPort + "/v1/chat/completions")).header("content-type", "application/json")
                            .header("x-session", "s" + i % 3).POST(HttpRequest.BodyPublishers.ofString(
                                    "{\"model\":\"sim-llama-8b\",\"messages\":[{\"role\":\"user\",\"content\":\"q" + i
                                            + "\"}]}")).build(), HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).isEqualTo(200);
                }
                String base = "http://127.0.0.1:" + sidecar.managementPort + "/q/traces";
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (TraceFiles.closed(dir).size() < 2 && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                // the recorder's thread closes files on its own time (it looks again after 20 to 160 ms when idle):
                // a file may close between the two listings, which are taken again then
                List<String> names = new ArrayList<>();
                List<String> text = List.of();
                for (int attempt = 0; attempt < 5 && (names.isEmpty() || !text.equals(names)); attempt++) {
                    JsonArray listed = new JsonObject(get(base, TOKEN).body()).getJsonArray("files");
                    names = new ArrayList<>();
                    for (int i = 0; i < listed.size(); i++) {
                        names.add(listed.getJsonObject(i).getString("name"));
                    }
                    text = List.of(get(base + "?format=text", TOKEN).body().split("\n"));
                }
                assertThat(names.size()).isGreaterThanOrEqualTo(2);
                assertThat(names).allMatch(n -> TraceFiles.CLOSED_NAME.matcher(n).matches());
                assertThat(text).containsExactlyElementsOf(names);
                HttpResponse<String> one = get(base + "/" + names.get(0), TOKEN);
                assertThat(one.statusCode()).isEqualTo(200);
                assertThat(one.headers().firstValue("content-type")).hasValue("application/jsonl");
                assertThat(one.body()).isEqualTo(Files.readString(dir.resolve(names.get(0))));
                // the file written now: none when the last record rotated the files (the next one opens with the
                // next record), so one more request opens it
                String open = null;
                for (int attempt = 0; open == null && attempt < 50; attempt++) {
                    try (Stream<Path> files = Files.list(dir)) {
                        open = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".open")).findFirst()
                                .orElse(null);
                    }
                    if (open == null) {
                        if (attempt == 0) {
                            assertThat(chat(sidecar, "q").statusCode()).isEqualTo(200);
                        }
                        Thread.sleep(100);
                    }
                }
                assertThat(open).as("the file being written").isNotNull();
                assertThat(names).doesNotContain(open);
                Files.writeString(dir.getParent().resolve("outside.jsonl"), "secret stuff\n");
                for (String bad : List.of(open, "..%2Foutside.jsonl", "%2e%2e%2foutside.jsonl",
                        "..%2F..%2F..%2F..%2Fetc%2Fpasswd", names.get(0) + "%2F..%2F..%2Foutside.jsonl",
                        "trace-20990101T000000000Z-000001.jsonl")) {
                    HttpResponse<String> r = get(base + "/" + bad, TOKEN);
                    assertThat(r.statusCode()).as(bad).isEqualTo(404);
                    assertThat(r.body()).doesNotContain("secret stuff");
                }
                HttpResponse<String> dotted = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/../../outside.jsonl"))
                        .header("authorization", "Bearer " + TOKEN).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(dotted.body()).doesNotContain("secret stuff");
                theTokenGuardsTheFiles(base, names.get(0), tokenFile(dir));
                aLinkIsNeverListedOrServed(base, dir, names.get(0));
                assertThat(sidecar.running.lines).noneMatch(l -> l.contains(SECRET) || l.contains(TOKEN));
            }
            // stopped: every file is closed
            try (Stream<Path> files = Files.list(dir)) {
                assertThat(files.map(p -> p.getFileName().toString()).toList())
                        .allMatch(n -> TraceFiles.CLOSED_NAME.matcher(n).matches());
            }
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * 401 without the token, with a wrong one, and with the right one in a query parameter; 200 with it in the header.
     * A new token written to the file is honoured within a second or two, the old one refused, without a restart.
     */
    static void theTokenGuardsTheFiles(String base, String name, Path tokenFile) throws Exception {
        for (String url : List.of(base, base + "?format=text", base + "/" + name)) {
            HttpResponse<String> none = get(url);
            assertThat(none.statusCode()).as(url).isEqualTo(401);
            assertThat(none.headers().firstValue("www-authenticate")).hasValueSatisfying(v -> assertThat(v)
                    .startsWith("Bearer"));
            assertThat(none.body()).doesNotContain("trace-");
            assertThat(get(url, TOKEN + "x").statusCode()).as(url).isEqualTo(401);
            assertThat(get(url, TOKEN.substring(0, TOKEN.length() - 1)).statusCode()).as(url).isEqualTo(401);
            String sep = url.contains("?") ? "&" : "?";
            for (String param : List.of("access_token", "token", "bearer")) {
                assertThat(get(url + sep + param + "=" + TOKEN).statusCode()).as(url + " ?" + param).isEqualTo(401);
            }
            assertThat(get(url, TOKEN).statusCode()).as(url).isEqualTo(200);
        }
        String rotated = "it-rotated-" + java.util.UUID.randomUUID();
        Files.writeString(tokenFile, rotated + "\n");
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (get(base, rotated).statusCode() != 200 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertThat(get(base, rotated).statusCode()).as("the rotated token").isEqualTo(200);
            assertThat(get(base, TOKEN).statusCode()).as("the old token after rotation").isEqualTo(401);
        } finally {
            Files.writeString(tokenFile, TOKEN + "\n");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (get(base, TOKEN).statusCode() != 200 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
        }
    }

    /**
     * A symbolic link in the directory, named as a closed file, to a file outside: never listed, never served. And a
     * file replaced by a link while it is being downloaded: the download goes on with the file that was opened,
     * nothing of the link's target is sent.
     */
    static void aLinkIsNeverListedOrServed(String base, Path dir, String closedName) throws Exception {
        Path outside = Files.writeString(dir.getParent().resolve("outside-linked.jsonl"), "linked secret stuff\n");
        String linkName = "trace-20991231T235959000Z-999998.jsonl";
        Files.createSymbolicLink(dir.resolve(linkName), outside);
        try {
            assertThat(get(base, TOKEN).body()).doesNotContain(linkName);
            assertThat(get(base + "?format=text", TOKEN).body()).doesNotContain(linkName);
            HttpResponse<String> r = get(base + "/" + linkName, TOKEN);
            assertThat(r.statusCode()).isEqualTo(404);
            assertThat(r.body()).doesNotContain("linked secret stuff");
        } finally {
            Files.delete(dir.resolve(linkName));
        }
        // a closed file of 8 MiB (whole lines) that becomes a link while the client is reading it
        String bigName = "trace-20991231T235959000Z-999999.jsonl";
        StringBuilder lines = new StringBuilder();
        for (int i = 0; lines.length() < 8 * 1024 * 1024; i++) {
            lines.append("{\"timestamp\":").append(i).append(",\"input_length\":1,\"output_length\":1}\n");
        }
        byte[] original = lines.toString().getBytes(StandardCharsets.UTF_8);
        Path big = Files.write(dir.resolve(bigName), original);
        try {
            HttpResponse<java.io.InputStream> download = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/"
                    + bigName)).header("authorization", "Bearer " + TOKEN).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertThat(download.statusCode()).isEqualTo(200);
            try (java.io.InputStream in = download.body()) {
                byte[] first = in.readNBytes(64 * 1024);
                Files.delete(big);
                Files.createSymbolicLink(big, outside);
                byte[] rest = in.readAllBytes();
                byte[] all = new byte[first.length + rest.length];
                System.arraycopy(first, 0, all, 0, first.length);
                System.arraycopy(rest, 0, all, first.length, rest.length);
                assertThat(all).as("the file opened, whole, and nothing of the link's target").isEqualTo(original);
            }
            assertThat(get(base + "/" + bigName, TOKEN).statusCode()).isEqualTo(404);
        } finally {
            Files.deleteIfExists(big);
            Files.deleteIfExists(outside);
        }
    }

    /**
     * A stream still open when the grace after SIGTERM runs out is cut, and its record is written before the recorder
     * closes (issue 42: the telemetry used to close before the proxy cut the last streams, which left no record).
     */
    @Test
    void aStreamCutAtShutdownIsRecorded() throws Exception {
        Path dir = out("cut-at-shutdown");
        Vertx vertx = Vertx.vertx();
        try {
            // 1 000 tokens 200 ms apart: the stream outlives the 1 s grace by minutes
            int port = simulatedEngine(vertx, EngineBehaviour.defaults()
                    .withTiming(Duration.ofMillis(5), Duration.ofMillis(200)).withOutputTokens(1_000));
            CompletableFuture<HttpResponse<java.io.InputStream>> stream;
            try (Processes.Sidecar sidecar = tracingSidecar(port, dir, Map.of("quarkus.shutdown.timeout", "1s"))) {
                sidecar.awaitReady(Duration.ofSeconds(30));
                HttpResponse<String> done = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                        + sidecar.proxyPort + "/v1/chat/completions")).header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"sim-llama-8b\",\"max_tokens\":2,"
                                + "\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(done.statusCode()).isEqualTo(200);
                stream = HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + sidecar.proxyPort
                        + "/v1/chat/completions")).header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"sim-llama-8b\",\"stream\":true,"
                                + "\"messages\":[{\"role\":\"user\",\"content\":\"b\"}]}")).build(),
                        HttpResponse.BodyHandlers.ofInputStream());
                HttpResponse<java.io.InputStream> open = stream.get(10, TimeUnit.SECONDS);
                assertThat(open.statusCode()).isEqualTo(200);
                assertThat(open.body().readNBytes(64)).hasSize(64); // tokens are flowing
            } // SIGTERM: the grace (1 s) runs out, the stream is cut, then the telemetry closes
            List<JsonObject> records = records(TraceFiles.closed(dir));
            assertThat(records).as("the finished request and the stream cut at shutdown").hasSize(2);
            assertThat(records).extracting(r -> r.getString("outcome")).containsExactly("ok", "client_cancelled");
            assertThat(records.get(1).getDouble("ttft_ms")).isPositive();
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * Nothing about the recorder stops the proxy: without a secret, with one it refuses, and with a trace directory
     * that cannot be created (its parent is a file), the packaged sidecar starts and serves, the log names the
     * property (never the value), and the series say why nothing is written.
     */
    @Test
    void withoutASecretOrWithAnUnusableDirectoryTheSidecarServesAndSaysWhy() throws Exception {
        Path dir = out("refused");
        Vertx vertx = Vertx.vertx();
        try {
            int port = simulatedEngine(vertx, EngineBehaviour.defaults()
                    .withTiming(Duration.ofMillis(2), Duration.ofMillis(1)).withOutputTokens(4));
            String passphrase = "only-a-passphrase-of-32-chars!!!";
            Path blocker = Files.writeString(dir.resolve("a-file"), "where the trace directory's parent goes");
            record Case(Map<String, String> env, String dir, String reason) {
            }
            for (Case c : List.of(new Case(Map.of(), dir.resolve("no-secret").toString(), "configuration"),
                    new Case(Map.of("SIDECAR_TRACE_SECRET", passphrase), dir.resolve("weak").toString(),
                            "configuration"),
                    new Case(Map.of("SIDECAR_TRACE_SECRET", SECRET), blocker.resolve("traces").toString(),
                            "not_a_directory"))) {
                try (Processes.Sidecar sidecar = Processes.Sidecar.launch(Processes.required("sidecar.jar"))
                        .upstream("http://127.0.0.1:" + port).env(c.env()).properties(Map.of("sidecar.trace.enabled",
                                "true", "sidecar.trace.dir", c.dir(), "sidecar.trace.token-file",
                                tokenFile(dir).toString())).start()) {
                    sidecar.awaitReady(Duration.ofSeconds(30));
                    for (int i = 0; i < 3; i++) {
                        assertThat(chat(sidecar, "q").statusCode()).as(c.reason()).isEqualTo(200);
                    }
                    String failures = "llm_sidecar_trace_write_failures_total{reason=\"" + c.reason() + "\"}";
                    String dropped = "llm_sidecar_trace_records_dropped_total{reason=\"write_failed\"}";
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    String metrics = sidecar.metrics();
                    while ((value(metrics, failures) < 1 || c.reason().equals("not_a_directory")
                            && value(metrics, dropped) < 3) && System.nanoTime() < deadline) {
                        Thread.sleep(100);
                        metrics = sidecar.metrics();
                    }
                    assertThat(value(metrics, "llm_sidecar_trace_writing")).as(c.reason()).isZero();
                    assertThat(value(metrics, failures)).as(c.reason()).isGreaterThanOrEqualTo(1);
                    if (c.reason().equals("configuration")) {
                        assertThat(sidecar.running.lines).anyMatch(l -> l.contains("sidecar.trace.secret"))
                                .noneMatch(l -> l.contains(passphrase));
                        assertThat(get("http://127.0.0.1:" + sidecar.managementPort + "/q/traces", TOKEN)
                                .statusCode()).isEqualTo(404);
                    } else {
                        assertThat(value(metrics, dropped)).isEqualTo(3);
                        assertThat(value(metrics, "llm_sidecar_trace_records_total")).isZero();
                    }
                }
            }
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
