package dev.llmsidecar.sim;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An inference server without a GPU, on a known schedule, with a bounded number of generation slots (requests
 * beyond them queue) and a vLLM-style {@code /metrics} that says what it does: {@code num_requests_running} = slots in
 * use, {@code num_requests_waiting} = requests queued for one, at the moment it is asked. It speaks every wire format
 * the sidecar decodes, one {@link SimDialect} each: OpenAI chat / completions / responses / embeddings, Anthropic
 * messages, Ollama /api/chat and /api/generate, TGI /generate_stream and /generate, llama.cpp /completion; and names
 * the model it serves as they do: {@code GET /v1/models}, TGI's {@code /info}, llama.cpp's {@code /props}. Used by
 * the tests, the benchmark and the demo.
 *
 * <p>Per-request overrides (headers): {@code x-sim-ttft-ms}, {@code x-sim-inter-chunk-ms},
 * {@code x-sim-output-tokens}, {@code x-sim-tokens-per-chunk}, {@code x-sim-reasoning-tokens} (the first N output
 * tokens are reasoning / thinking, in formats that carry it), {@code x-sim-status} (answer with this error
 * status), {@code x-sim-fail-after-chunks} (close the connection after N token chunks),
 * {@code x-sim-stall-after-chunks} (stop sending after N token chunks, keep the connection),
 * {@code x-sim-stamps: 1} (each token chunk's JSON ends with {@code "t":<System.nanoTime()>} taken just before its
 * write, the first one also with {@code "a":<nanoTime the request was received>}: a client on the same machine splits
 * latency into request path, engine schedule and response path without trusting a proxy),
 * {@code x-sim-format: /v1/chat/completions} (answer a path it does not know in the format of the one named: the
 * benchmark's path that the sidecar forwards without timing), and
 * {@code x-request-id} (response id, for byte-exact comparisons). An inter-chunk time of 0 sends as fast as the
 * client reads: the next chunk waits while the connection's write queue is full.
 */
public final class SimulatedEngine {

    private static final String[] WORDS = {"The", " quick", " brown", " fox", " jumps", " over", " the", " lazy",
        " dog", ".", " Ünïcödé", " \"quoted\"", "\n", " 😀", " tab\t", " and"};

    private final Vertx vertx;
    private final EngineBehaviour behaviour;
    private final Random random;
    // event-loop confined: requests holding a slot, and those queued for one (a cancelled one leaves at once)
    private final Deque<Generation> queue = new ArrayDeque<>();
    private final ConcurrentLinkedDeque<ServedRequest> served = new ConcurrentLinkedDeque<>();
    /** The deque's size: its own size() walks every node, too slow at thousands of requests a second. */
    private final AtomicInteger servedCount = new AtomicInteger();
    private volatile int keepServed = 10_000;
    private final AtomicLong ids = new AtomicLong();
    private final Map<String, SimDialect> dialects = Map.of(
            "/v1/chat/completions", new OpenAiDialect(true),
            "/v1/completions", new OpenAiDialect(false),
            "/v1/responses", new ResponsesDialect(),
            "/v1/embeddings", new EmbeddingsDialect(),
            "/v1/messages", new AnthropicDialect(),
            "/api/chat", new OllamaDialect(true),
            "/api/generate", new OllamaDialect(false),
            "/generate_stream", new TgiDialect(true),
            "/generate", new TgiDialect(false),
            "/completion", new LlamaCppDialect());
    private HttpServer server;
    private int running;
    private volatile boolean recordResponses;
    private volatile List<String> servedModels;
    /** Paths served by handlers from outside (the demo's control), before the engine's own. */
    private final Map<String, io.vertx.core.Handler<HttpServerRequest>> routes =
            new java.util.concurrent.ConcurrentHashMap<>();

    // vLLM-style counters (event-loop confined writes, read by /metrics on the same loop)
    private long promptTokensTotal;
    private long generationTokensTotal;
    private long prefixQueries;
    private long prefixHits;
    private long successTotal;
    // vLLM's per-request phase histograms (v1/metrics/loggers.py: request_latency_buckets)
    private static final double[] LATENCY_BUCKETS = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
        40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
    private final PhaseHistogram queueTime = new PhaseHistogram();
    private final PhaseHistogram prefillTime = new PhaseHistogram();
    private final PhaseHistogram decodeTime = new PhaseHistogram();
    private final PhaseHistogram inferenceTime = new PhaseHistogram();

    /** One classic histogram in the exposition, as prometheus_client keeps it (event-loop confined). */
    private static final class PhaseHistogram {
        final long[] counts = new long[LATENCY_BUCKETS.length];
        long count;
        double sum;

        void observe(double seconds) {
            for (int i = 0; i < LATENCY_BUCKETS.length; i++) {
                if (seconds <= LATENCY_BUCKETS[i]) {
                    counts[i]++;
                }
            }
            count++;
            sum += seconds;
        }

        void write(StringBuilder sb, String name, String help, String model) {
            sb.append("# HELP ").append(name).append(' ').append(help).append('\n')
                    .append("# TYPE ").append(name).append(" histogram\n");
            for (int i = 0; i < LATENCY_BUCKETS.length; i++) {
                sb.append(name).append("_bucket{le=\"").append(LATENCY_BUCKETS[i]).append("\",model_name=\"")
                        .append(model).append("\"} ").append((double) counts[i]).append('\n');
            }
            sb.append(name).append("_bucket{le=\"+Inf\",model_name=\"").append(model).append("\"} ")
                    .append((double) count).append('\n')
                    .append(name).append("_count{model_name=\"").append(model).append("\"} ").append((double) count)
                    .append('\n')
                    .append(name).append("_sum{model_name=\"").append(model).append("\"} ").append(sum).append('\n');
        }
    }

    public SimulatedEngine(Vertx vertx, EngineBehaviour behaviour) {
        this.vertx = vertx;
        this.behaviour = behaviour;
        this.random = new Random(behaviour.seed());
        this.servedModels = List.of(behaviour.model());
    }

    /**
     * The models {@code /v1/models}, {@code /info} and {@code /props} name from now on, and the model of a request that
     * names none (tests: a model swap, several models, or none: then /info and /props answer 404).
     */
    public SimulatedEngine serving(String... models) {
        servedModels = List.of(models);
        return this;
    }

    /** The model a request that names none is answered by. */
    private String servedModel() {
        List<String> models = servedModels;
        return models.isEmpty() ? behaviour.model() : models.get(0);
    }

    public EngineBehaviour behaviour() {
        return behaviour;
    }

    /** Starts on host:port (0 = any free port); completes with the bound port. */
    public Future<Integer> start(String host, int port) {
        // one verticle-less server on one event loop: all engine state is confined to that loop
        // a deep accept queue: the benchmark opens thousands of connections within a second
        server = vertx.createHttpServer(new HttpServerOptions().setHost(host).setPort(port).setTcpNoDelay(true)
                .setAcceptBacklog(8192));
        return server.requestHandler(this::handle).listen().map(HttpServer::actualPort);
    }

    public Future<Void> close() {
        return server == null ? Future.succeededFuture() : server.close();
    }

    /**
     * Keeps at most the last {@code max} requests in {@link #served()} (10 000 unless set; each holds its chunks'
     * send times, 16 KB for a 2 000-token stream). An engine run as a process of its own, which nobody asks, keeps
     * none: the benchmark's long-stream phase, 16 000 such streams, filled its 256 MB heap with them.
     */
    public SimulatedEngine keepServed(int max) {
        keepServed = max;
        while (servedCount.get() > max && served.pollFirst() != null) {
            servedCount.decrementAndGet();
        }
        return this;
    }

    /** Requests served so far (newest last), bounded to the last 10 000 ({@link #keepServed}). */
    public List<ServedRequest> served() {
        return new ArrayList<>(served);
    }

    public void clearServed() {
        served.clear();
        servedCount.set(0);
    }

    /** Keeps a copy of every response body in {@link ServedRequest#responseBody()} (tests: byte-exact checks). */
    public SimulatedEngine recordResponses(boolean on) {
        recordResponses = on;
        return this;
    }

    /**
     * Serves {@code path} with {@code handler} from now on, before the engine's own paths (the demo's control of its
     * traffic, /demo/incident).
     */
    public SimulatedEngine route(String path, io.vertx.core.Handler<HttpServerRequest> handler) {
        routes.put(path, handler);
        return this;
    }

    private void handle(HttpServerRequest req) {
        String path = req.path();
        io.vertx.core.Handler<HttpServerRequest> route = routes.get(path);
        if (route != null) {
            route.handle(req);
            return;
        }
        String format = req.getHeader("x-sim-format");
        SimDialect dialect = dialects.containsKey(path) || format == null ? dialects.get(path) : dialects.get(format);
        if (dialect != null) {
            if (req.method().name().equals("POST")) {
                req.body().onSuccess(body -> generate(req, body, dialect));
            } else {
                error(req.response(), 405, "method not allowed");
            }
            return;
        }
        switch (path) {
            case "/v1/models" -> json(req.response(), modelList());
            case "/info" -> named(req.response(), m -> new JsonObject().put("model_id", m).put("model_sha", null)
                    .put("model_pipeline_tag", "text-generation").put("max_concurrent_requests", behaviour.slots())
                    .put("version", "sim"));
            case "/props" -> named(req.response(), m -> new JsonObject().put("model_alias", m)
                    .put("model_path", "/models/" + m + ".gguf").put("total_slots", behaviour.slots()));
            case "/metrics" -> req.response().putHeader("content-type", "text/plain; version=0.0.4")
                    .end(metricsText());
            case "/health" -> req.response().end();
            default -> {
                if (path.startsWith("/echo")) {
                    echo(req);
                } else {
                    error(req.response(), 404, "not found: " + path);
                }
            }
        }
    }

    /** Echoes method, path, headers and body: lets tests see exactly what the proxy sent upstream. */
    private void echo(HttpServerRequest req) {
        req.body().onSuccess(body -> {
            JsonObject headers = new JsonObject();
            req.headers().forEach(e -> headers.put(e.getKey().toLowerCase(java.util.Locale.ROOT), e.getValue()));
            req.response().putHeader("content-type", "application/json").putHeader("x-sim-echo", "1")
                    .end(new JsonObject().put("method", req.method().name()).put("uri", req.uri())
                            .put("headers", headers).put("bodyLength", body.length())
                            .put("bodySha", Integer.toHexString(java.util.Arrays.hashCode(body.getBytes()))).encode());
        });
    }

    private void generate(HttpServerRequest req, Buffer body, SimDialect dialect) {
        long arrival = System.nanoTime();
        int errorStatus = intHeader(req, "x-sim-status", 0);
        if (errorStatus >= 400) {
            error(req.response(), errorStatus, "simulated error " + errorStatus);
            return;
        }
        JsonObject json;
        try {
            json = body.toJsonObject();
        } catch (RuntimeException e) {
            error(req.response(), 400, "request body is not a JSON object");
            return;
        }
        Generation g = new Generation(req, body.toString(), json, dialect, arrival);
        if (running < behaviour.slots()) {
            running++;
            g.begin();
        } else {
            queue.add(g);
        }
    }

    /** A slot is free: the next queued request takes it, or it stays free. */
    private void releaseSlot() {
        Generation next = queue.poll();
        if (next != null) {
            next.begin();
        } else {
            running--;
        }
    }

    /** OpenAI's model list, as vLLM, SGLang, TGI and llama.cpp answer it. */
    private JsonObject modelList() {
        JsonArray data = new JsonArray();
        for (String m : servedModels) {
            data.add(new JsonObject().put("id", m).put("object", "model").put("owned_by", "sim"));
        }
        return new JsonObject().put("object", "list").put("data", data);
    }

    /** An engine's own description of its one model; 404 while it serves none. */
    private void named(HttpServerResponse res, java.util.function.Function<String, JsonObject> description) {
        List<String> models = servedModels;
        if (models.isEmpty()) {
            error(res, 404, "no model loaded");
        } else {
            json(res, description.apply(models.get(0)));
        }
    }

    private static void json(HttpServerResponse res, JsonObject body) {
        res.putHeader("content-type", "application/json").end(body.encode());
    }

    /** One request being generated; the schedule is the engine's, the bytes are the dialect's. */
    private final class Generation {
        final HttpServerRequest req;
        final HttpServerResponse res;
        final String body;
        final SimDialect dialect;
        final SimTurn turn;
        final boolean stream;
        final int outputTokens;
        final int reasoningTokens;
        final int tokensPerChunk;
        final long ttftNanos;
        final long interChunkNanos;
        final int failAfter;
        final int stallAfter;
        final boolean stamps;
        final long arrival;
        long slotStart;
        int tokensSent;
        int chunksSent;
        long timer = -1;
        long firstSent = -1;
        long lastSent = -1;
        long[] sentTimes = new long[16];
        boolean closed;
        boolean done;
        final Buffer written = recordResponses ? Buffer.buffer() : null;

        Generation(HttpServerRequest req, String body, JsonObject json, SimDialect dialect, long arrival) {
            this.req = req;
            this.res = req.response();
            this.body = body;
            this.dialect = dialect;
            this.arrival = arrival;
            this.stream = dialect.stream(json);
            JsonObject so = json.getJsonObject("stream_options");
            String model = dialect.model(json);
            String rid = req.getHeader("x-request-id");
            String id = dialect.idPrefix() + (rid != null ? rid : "sim" + ids.incrementAndGet());
            long created = behaviour.fixedCreated() > 0 ? behaviour.fixedCreated() : System.currentTimeMillis() / 1000;
            Integer maxTokens = dialect.maxTokens(json);
            this.outputTokens = intHeader(req, "x-sim-output-tokens",
                    maxTokens != null ? maxTokens : behaviour.outputTokens());
            this.reasoningTokens = dialect.reasoning()
                    ? Math.max(0, Math.min(outputTokens, intHeader(req, "x-sim-reasoning-tokens", 0))) : 0;
            this.tokensPerChunk = Math.max(1, intHeader(req, "x-sim-tokens-per-chunk", behaviour.tokensPerChunk()));
            this.ttftNanos = intHeader(req, "x-sim-ttft-ms", -1) >= 0
                    ? intHeader(req, "x-sim-ttft-ms", 0) * 1_000_000L : behaviour.ttft().toNanos();
            this.interChunkNanos = intHeader(req, "x-sim-inter-chunk-ms", -1) >= 0
                    ? intHeader(req, "x-sim-inter-chunk-ms", 0) * 1_000_000L : behaviour.interChunk().toNanos();
            this.failAfter = intHeader(req, "x-sim-fail-after-chunks", -1);
            this.stallAfter = intHeader(req, "x-sim-stall-after-chunks", -1);
            String stamp = req.getHeader("x-sim-stamps");
            this.stamps = stamp != null && (stamp.equals("1") || stamp.equalsIgnoreCase("true"));
            int promptTokens = Math.max(1, body.length() / 4);
            int cachedTokens = (int) (promptTokens * behaviour.cachedTokenRatio()) / 16 * 16;
            this.turn = new SimTurn(id, model != null ? model : servedModel(), created, promptTokens, cachedTokens,
                    outputTokens, reasoningTokens, so != null && so.getBoolean("include_usage", false),
                    so != null && so.getBoolean("continuous_usage_stats", false), behaviour,
                    behaviour.crlf() ? "\r\n" : "\n");
            res.closeHandler(v -> onClosed());
        }

        SimTimes times() {
            return new SimTimes(arrival, slotStart, firstSent, lastSent);
        }

        /** Token chunks the whole output takes: reasoning and answer tokens never share a chunk. */
        int chunkCount() {
            int answer = outputTokens - reasoningTokens;
            return (reasoningTokens + tokensPerChunk - 1) / tokensPerChunk + (answer + tokensPerChunk - 1) / tokensPerChunk;
        }

        void begin() {
            slotStart = System.nanoTime();
            if (closed) {
                releaseSlot();
                return;
            }
            prefixQueries += turn.promptTokens();
            prefixHits += turn.cachedTokens();
            promptTokensTotal += turn.promptTokens();
            if (!stream) {
                schedule(slotStart + jittered(ttftNanos) + Math.max(0, chunkCount() - 1) * interChunkNanos,
                        this::sendWhole);
                return;
            }
            res.setChunked(true).putHeader("content-type", dialect.streamContentType())
                    .putHeader("cache-control", "no-cache");
            res.write(Buffer.buffer(0));
            for (String frame : dialect.prelude(turn)) {
                write(frame);
            }
            long first = slotStart + jittered(ttftNanos);
            schedule(first, () -> sendTokens(first));
        }

        void sendTokens(long scheduledAt) {
            long at = scheduledAt;
            // with no gap, up to 64 chunks in one go while the client keeps up: a task per chunk costs more than the
            // chunk, and after 64 the loop's other streams get their turn
            for (int batch = 1; ; batch++) {
                if (closed) {
                    return;
                }
                if (stallAfter >= 0 && chunksSent >= stallAfter) {
                    return; // keep the connection open, send nothing more
                }
                if (failAfter >= 0 && chunksSent >= failAfter) {
                    finishGeneration();
                    res.reset(); // abrupt close mid-stream
                    return;
                }
                boolean reasoning = tokensSent < reasoningTokens;
                int n = Math.min(tokensPerChunk, (reasoning ? reasoningTokens : outputTokens) - tokensSent);
                String frame = dialect.token(turn, tokensSent, n, text(tokensSent, n), reasoning);
                tokensSent += n;
                chunksSent++;
                boolean last = tokensSent >= outputTokens;
                // stamped before the write: a reader on another thread can have the bytes before write() returns
                long now = System.nanoTime();
                write(stamps ? stamped(frame, now, chunksSent == 1 ? arrival : -1) : frame);
                if (firstSent < 0) {
                    firstSent = now;
                }
                lastSent = now;
                if (chunksSent > sentTimes.length) {
                    sentTimes = java.util.Arrays.copyOf(sentTimes, sentTimes.length * 2);
                }
                sentTimes[chunksSent - 1] = now;
                if (last) {
                    break;
                }
                long next = at + jittered(interChunkNanos);
                if (interChunkNanos > 0 || batch == 64 || res.writeQueueFull()) {
                    schedule(next, () -> sendTokens(next));
                    return;
                }
                at = next;
            }
            for (String end : dialect.end(turn, times())) {
                write(end);
            }
            // recorded before the response ends: a client on another thread may have it all before end() returns
            successTotal++;
            finishGeneration();
            res.end();
        }

        void sendWhole() {
            if (closed) {
                return;
            }
            tokensSent = outputTokens;
            firstSent = lastSent = System.nanoTime();
            SimTimes times = times();
            JsonObject response = dialect.whole(turn, times, text(0, reasoningTokens),
                    text(reasoningTokens, outputTokens - reasoningTokens));
            dialect.wholeHeaders(turn, times, res.headers());
            String encoded = response.encode();
            if (written != null) {
                written.appendString(encoded);
            }
            successTotal++;
            finishGeneration(); // before the end, as for a stream
            res.putHeader("content-type", "application/json").end(encoded);
        }

        void write(String frame) {
            if (written != null) {
                written.appendString(frame);
            }
            res.write(frame);
        }

        void schedule(long atNanos, Runnable action) {
            long delayMs = Math.round((atNanos - System.nanoTime()) / 1e6);
            if (delayMs >= 1) {
                timer = vertx.setTimer(delayMs, t -> action.run());
            } else if (res.writeQueueFull()) {
                // due now but the client is behind: no faster than it reads, as a real server's socket would block
                res.drainHandler(v -> action.run());
            } else {
                vertx.runOnContext(v -> action.run());
            }
        }

        long jittered(long nanos) {
            if (behaviour.jitter() <= 0) {
                return nanos;
            }
            return (long) (nanos * (1 + behaviour.jitter() * (2 * random.nextDouble() - 1)));
        }

        void onClosed() {
            if (done) {
                return;
            }
            closed = true;
            if (timer >= 0) {
                vertx.cancelTimer(timer);
            }
            long now = System.nanoTime();
            record(true, now);
            done = true;
            if (slotStart > 0) {
                releaseSlot();
            } else {
                queue.remove(this); // as vLLM aborts a waiting request whose client went away
            }
        }

        void finishGeneration() {
            if (done) {
                return;
            }
            done = true;
            generationTokensTotal += tokensSent;
            if (slotStart > 0 && firstSent > 0) {
                // as vLLM: queued until scheduled, prefill until the first token, decode to the last
                queueTime.observe((slotStart - arrival) / 1e9);
                prefillTime.observe((firstSent - slotStart) / 1e9);
                decodeTime.observe((lastSent - firstSent) / 1e9);
                inferenceTime.observe((lastSent - slotStart) / 1e9);
            }
            record(false, -1);
            releaseSlot();
        }

        void record(boolean cancelled, long closedAt) {
            if (keepServed == 0) {
                return;
            }
            served.add(new ServedRequest(turn.id(), body, arrival, firstSent, lastSent, chunksSent, cancelled, closedAt,
                    java.util.Arrays.copyOf(sentTimes, chunksSent), written));
            if (servedCount.incrementAndGet() > keepServed && served.pollFirst() != null) {
                servedCount.decrementAndGet();
            }
        }
    }

    /** The frame with {@code ,"a":arrival} (when >= 0) and {@code ,"t":sent} before its last '}'. */
    static String stamped(String frame, long sent, long arrival) {
        int close = frame.lastIndexOf('}');
        if (close < 0) {
            return frame;
        }
        StringBuilder sb = new StringBuilder(frame.length() + 48).append(frame, 0, close);
        if (arrival >= 0) {
            sb.append(",\"a\":").append(arrival);
        }
        return sb.append(",\"t\":").append(sent).append(frame, close, frame.length()).toString();
    }

    static String text(int from, int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = from; i < from + n; i++) {
            sb.append(WORDS[i % WORDS.length]);
        }
        return sb.toString();
    }

    /**
     * The text of {@code /metrics} as of now, for a {@link #route} that serves it on another path (a test that needs
     * the moment the figures were taken). Call it on the engine's event loop, as a route's handler runs.
     */
    public String metricsText() {
        String m = "{model_name=\"" + servedModel() + "\"}";
        int waiting = queue.size();
        StringBuilder sb = new StringBuilder();
        gauge(sb, "vllm:num_requests_running", "Number of requests in model execution batches.", m, running);
        gauge(sb, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", m, waiting);
        gauge(sb, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", m,
                behaviour.slots() == 0 ? 0 : (double) running / behaviour.slots());
        counter(sb, "vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.", m,
                prefixQueries);
        counter(sb, "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", m,
                prefixHits);
        counter(sb, "vllm:prompt_tokens", "Number of prefill tokens processed.", m, promptTokensTotal);
        counter(sb, "vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external).", m,
                prefixHits);
        counter(sb, "vllm:generation_tokens", "Number of generation tokens processed.", m, generationTokensTotal);
        // the simulator never preempts (a fixed number of slots, no KV-cache pressure), and says so as vLLM does
        counter(sb, "vllm:num_preemptions", "Cumulative number of preemption from the engine.", m, 0);
        counter(sb, "vllm:request_success", "Count of successfully processed requests.",
                "{finished_reason=\"length\",model_name=\"" + servedModel() + "\"}", successTotal);
        String model = servedModel();
        queueTime.write(sb, "vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
                model);
        prefillTime.write(sb, "vllm:request_prefill_time_seconds",
                "Histogram of time spent in PREFILL phase for request.", model);
        decodeTime.write(sb, "vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
                model);
        inferenceTime.write(sb, "vllm:request_inference_time_seconds",
                "Histogram of time spent in RUNNING phase for request.", model);
        return sb.toString();
    }

    private static void gauge(StringBuilder sb, String name, String help, String labels, double value) {
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(name).append(" gauge\n")
                .append(name).append(labels).append(' ').append(value).append('\n');
    }

    private static void counter(StringBuilder sb, String name, String help, String labels, long value) {
        sb.append("# HELP ").append(name).append("_total ").append(help).append('\n')
                .append("# TYPE ").append(name).append("_total counter\n")
                .append(name).append("_total").append(labels).append(' ').append((double) value).append('\n');
    }

    private static void error(HttpServerResponse res, int status, String message) {
        res.setStatusCode(status).putHeader("content-type", "application/json")
                .end(new JsonObject().put("object", "error").put("message", message).put("type", "BadRequestError")
                        .put("param", (String) null).put("code", status).encode());
    }

    private static int intHeader(HttpServerRequest req, String name, int fallback) {
        String v = req.getHeader(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }
}
