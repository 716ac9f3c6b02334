package dev.llmsidecar.sweep;

import dev.llmsidecar.load.ClosedLoop;
import dev.llmsidecar.load.LoadClient;
import dev.llmsidecar.load.OpenLoop;
import dev.llmsidecar.load.PoissonArrivals;
import dev.llmsidecar.metrics.CumulativeHistogram;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Runs a sweep: a preflight request, then one step per offered load, each read from the sidecar's metrics (see
 * {@link StepResult}). The client ({@link LoadClient}, each response read by a {@link RecordReader}) runs on one
 * Vert.x context; the steps are sequenced from the calling thread; the load is an {@link OpenLoop} of Poisson arrivals
 * or a {@link ClosedLoop}.
 */
public final class Sweep {

    private final SweepOptions o;
    private final Vertx vertx;
    private final PrintStream log;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<String> warnings = new ArrayList<>();
    /** What one step's notes say of a trace replay, for the report. */
    private final List<String> notes = new ArrayList<>();
    private Context context;
    private LoadClient client;
    /** --url's path prefix and --path. */
    private String requestPath;
    private long started;
    private String startedAt;
    /** How request shapes are drawn, for the report. */
    private String shapes;
    /** A length-only --trace, or null. */
    private RequestShapes lengthTrace;
    /** A recorded --trace's records (by timestamp), or null. */
    private List<TraceRecord> records;
    /** Its prompts: set by the preflight's calibration. */
    private BlockPrompts blockPrompts;

    Sweep(SweepOptions options, Vertx vertx, PrintStream log) {
        this.o = options;
        this.vertx = vertx;
        this.log = log;
    }

    /** Runs the sweep {@code options} describe; progress goes to {@code log} (null: none). */
    public static SweepResult run(SweepOptions options, Vertx vertx, PrintStream log) throws Exception {
        Sweep sweep = new Sweep(options, vertx, log);
        try {
            sweep.open();
            List<StepResult> steps = new ArrayList<>();
            for (int i = 0; i < options.loads.length; i++) {
                steps.add(sweep.step(i, options.loads[i], null));
            }
            return sweep.result(steps);
        } finally {
            sweep.close();
        }
    }

    /** What one request asks for: its prompt and output length. */
    record Planned(String prompt, int maxTokens) {
    }

    /**
     * Lets a step run longer ({@link Search}): asked each time the step's measured time is up, with the scrape taken
     * after its warm-up and one taken now.
     */
    interface Extension {
        /** The most measured seconds the step may run. */
        double boundSeconds();

        /** Whether to keep measuring for another --step-seconds. */
        boolean extend(SidecarScrape before, SidecarScrape now, double measuredSeconds);
    }

    /**
     * A session's turns in flight and waiting: a turn is sent only once the previous one ended, or the gap after it
     * (context-confined).
     */
    private static final class SessionGate {
        boolean open;
        final ArrayDeque<Integer> waiting = new ArrayDeque<>();
    }

    /** Everything one step's load needs, confined to the client's context. */
    private static final class StepState {
        /** The next request of an open or closed loop; null for a trace replay. */
        final Supplier<Planned> next;
        /** The trace replay's records and times; null otherwise. */
        final TraceReplay replay;
        final List<RequestRecord> records = new ArrayList<>();
        final Map<String, SessionGate> sessions = new HashMap<>();
        boolean measuring;
        boolean stopped;
        int measuredSent;
        int dropped;
        /** Records sent at their times so far (of {@link TraceReplay#timed}). */
        int arrived;
        /** Records sent (or dropped) so far, both kinds. */
        int replayed;
        int sessionWaits;
        /** Turns waiting for their session's previous turn. */
        int waitingTurns;
        /** Turns to be sent after their previous turn and its gap, not sent (nor given up) yet. */
        int chainedTurns;

        StepState(Supplier<Planned> next, TraceReplay replay) {
            this.next = next;
            this.replay = replay;
            this.chainedTurns = replay == null ? 0 : replay.records().size() - replay.timed().length;
        }

        /** A trace replay whose every record has been sent (or dropped): nothing more will arrive. */
        boolean exhausted() {
            return replay != null && arrived >= replay.timed().length && waitingTurns == 0 && chainedTurns == 0;
        }
    }

    /** Reads the trace, connects, checks the target (and calibrates prompts for a recorded trace). */
    void open() throws Exception {
        started = System.nanoTime();
        startedAt = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
        if (o.trace != null) {
            TraceFile file = TraceFile.read(o.trace);
            if (file.recorded()) {
                records = file.recordsOf(o.traceModel);
                shapes = String.format(Locale.ROOT, "recorded trace %s: %d records over %s s%s; prompts from its "
                        + "hash ids (equal ids, equal 512-token blocks)", file.name(), records.size(),
                        Report.f3(TraceFile.spanMs(records) / 1000.0), o.traceModel == null ? ""
                                : " (model " + o.traceModel + " only)");
                if (o.mode != SweepOptions.Mode.TRACE) {
                    shapes += "; its lengths and prompts in order and cycled, its timestamps not used (--"
                            + (o.mode == SweepOptions.Mode.OPEN ? "rates" : "concurrency") + ")";
                }
            } else {
                if (o.traceModel != null) {
                    throw new IllegalArgumentException("--trace-model: " + file.name() + " is a length-only trace "
                            + "(no model field)");
                }
                if (o.mode == SweepOptions.Mode.TRACE && !o.search) {
                    throw new IllegalArgumentException(file.name() + " is a length-only trace (input_tokens, "
                            + "output_tokens): it has no arrival times to replay; give --rates or --concurrency");
                }
                if (o.mode == SweepOptions.Mode.TRACE) {
                    o.mode = SweepOptions.Mode.OPEN; // --search on the rate, with the trace's lengths
                }
                lengthTrace = RequestShapes.trace(file.shapes(), file.name());
                shapes = lengthTrace.describe();
            }
        } else {
            shapes = "input " + o.inputLength.describe() + ", output " + o.outputLength.describe() + ", seed " + o.seed;
        }
        int connections = o.openArrivals() ? o.maxInFlight : (int) Arrays.stream(o.loads).max().orElse(1);
        if (!"http".equals(o.url.getScheme())) {
            throw new IllegalArgumentException("--url must be http://host:port (the sidecar's proxy port): " + o.url);
        }
        requestPath = (o.url.getRawPath() == null ? "" : o.url.getRawPath().replaceAll("/+$", "")) + o.path;
        context = vertx.getOrCreateContext();
        client = new LoadClient(vertx, context, o.url.getHost(), o.url.getPort() > 0 ? o.url.getPort() : 80,
                connections);
        preflight();
    }

    /** The sweep's result over {@code steps}, read with a last scrape. */
    SweepResult result(List<StepResult> steps) throws Exception {
        SidecarScrape last = scrape();
        SweepAnalysis.Knee knee = SweepAnalysis.knee(steps);
        SweepAnalysis.Goodput goodput = o.slo == null ? null : SweepAnalysis.goodput(steps, o.slo.target());
        double[] ttftBounds = Report.upperBounds(last.histogram(SidecarSeries.TTFT,
                SidecarSeries.streams(o.model, o.operation())));
        double[] tokenBounds = Report.upperBounds(last.histogram(SidecarSeries.TPOT,
                SidecarSeries.ok(o.model, o.operation())));
        return new SweepResult(o, steps, knee, last.gauge(SidecarSeries.KNEE), goodput, ttftBounds, tokenBounds,
                last.labelValues(SidecarSeries.SLO_TARGET, "objective"), shapes, List.copyOf(notes), startedAt,
                (System.nanoTime() - started) / 1e9, List.copyOf(warnings));
    }

    /** Closes the load client. */
    void close() throws Exception {
        if (client != null) {
            await(onContext(() -> client.close()));
        }
    }

    /** Seeds of a step's random streams: 1 lengths, 2 prompt words, 3 arrivals. */
    long stepSeed(int stream, int step) {
        return seed(o.seed, stream, step);
    }

    /**
     * A seed for one random stream of one step, mixed (SplitMix64's finaliser) from --seed, the stream and the step:
     * java.util.Random's first draws from neighbouring seeds are correlated, so neighbouring seeds are not used.
     */
    static long seed(long base, int stream, int step) {
        return mix(mix(base) + stream * 0x9E3779B97F4A7C15L + step);
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** The Poisson arrival offsets the open-loop step {@code step} (0-based) uses: for tests and models. */
    public static PoissonArrivals arrivals(SweepOptions options, int step) {
        return arrivals(options, step, options.loads[step]);
    }

    /** The Poisson arrivals of step {@code step} at {@code rate} (a search's probe). */
    public static PoissonArrivals arrivals(SweepOptions options, int step, double rate) {
        return new PoissonArrivals(rate, seed(options.seed, 3, step));
    }

    // ---- preflight: the target answers, the metrics are the sidecar's, the model label is there ----

    private void preflight() throws Exception {
        SidecarScrape first;
        try {
            first = scrape();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + o.metricsUrl + " (the sidecar's management port): " + e);
        }
        if (!first.has(SidecarSeries.REQUESTS) && first.select(SidecarSeries.IN_FLIGHT, java.util.Map.of()).isEmpty()) {
            throw new IllegalStateException(o.metricsUrl + " has no llm_sidecar_* series: is it the sidecar's "
                    + "management port (default :9000/q/metrics)?");
        }
        if (o.sloObjective != null && !first.labelValues(SidecarSeries.SLO_TARGET, "objective")
                .contains(o.sloObjective)) {
            throw new IllegalStateException("--slo-objective " + o.sloObjective + ": the sidecar has no such objective"
                    + " (it has " + first.labelValues(SidecarSeries.SLO_TARGET, "objective") + ")");
        }
        Random words = new Random(o.seed);
        RequestRecord r = await(onContext(() -> send(body(PromptBuilder.prompt(16, words), 4), false)));
        if (!r.ok()) {
            throw new IllegalStateException("the first request through " + o.url + o.path + " failed: " + r.error()
                    + " (model " + o.model + ")");
        }
        if (records != null) {
            calibrate(words);
        }
        SidecarScrape after = waitIdle(scrape());
        CumulativeHistogram ttft = after.histogram(SidecarSeries.TTFT, SidecarSeries.streams(o.model, o.operation()));
        if (ttft.isEmpty() || ttft.count() == 0) {
            // a name the engine does not list has a label of its own from its second request: the first 2xx earns it
            await(onContext(() -> send(body(PromptBuilder.prompt(16, words), 4), false)));
            after = waitIdle(scrape());
            ttft = after.histogram(SidecarSeries.TTFT, SidecarSeries.streams(o.model, o.operation()));
        }
        if (ttft.isEmpty() || ttft.count() == 0) {
            throw new IllegalStateException("the sidecar's metrics have no TTFT for model=\"" + o.model
                    + "\", operation=\"" + o.operation() + "\" after a request: is --url the proxy port of the sidecar "
                    + "behind --metrics-url? Models it labels: " + after.labelValues(SidecarSeries.TTFT, "model")
                    + " (a name the engine neither lists nor answered with 2xx, or past sidecar.metrics.max-models, is "
                    + "\"other\": pin it with sidecar.metrics.pinned-models)");
        }
        info("preflight ok: %s%s -> model %s; metrics %s", o.url, o.path, o.model, o.metricsUrl);
    }

    /** Words per 512-token block for this engine: two probes (max_tokens 1), their usage.prompt_tokens. */
    private void calibrate(Random words) throws Exception {
        int w1 = 32;
        int w2 = 32 + TraceRecord.BLOCK_TOKENS;
        RequestRecord a = await(onContext(() -> send(body(PromptBuilder.prompt(w1, words), 1), false)));
        RequestRecord b = await(onContext(() -> send(body(PromptBuilder.prompt(w2, words), 1), false)));
        BlockPrompts.Calibration c = a.ok() && b.ok() && a.promptTokens() > 0 && b.promptTokens() > 0
                ? BlockPrompts.Calibration.of(w1, a.promptTokens(), w2, b.promptTokens())
                : BlockPrompts.Calibration.NONE;
        if (c == BlockPrompts.Calibration.NONE) {
            warnings.add("prompt calibration: the engine reported no usable usage.prompt_tokens (" + a.promptTokens()
                    + ", " + b.promptTokens() + "): prompts assume 1 token per word");
        }
        blockPrompts = new BlockPrompts(o.seed, c);
        notes.add("Prompt calibration: " + c.how() + "; a 512-token block is " + blockPrompts.blockWords()
                + " words.");
        info("prompt calibration: %s", c.how());
    }

    // ---- one step ----

    /**
     * Runs step {@code i} (0-based) at {@code load}: warm-up, measured time (--step-seconds, or longer while
     * {@code extension} asks), drain. Returns what the sidecar measured.
     */
    StepResult step(int i, double load, Extension extension) throws Exception {
        StepResult step = runStep(i, load, extension);
        progress(step);
        return step;
    }

    private StepState stepState(int i, double load, double wallSeconds) {
        if (o.mode == SweepOptions.Mode.TRACE) {
            TraceReplay replay = TraceReplay.plan(records, load, wallSeconds, o.traceSample, o.traceOffset,
                    stepSeed(6, i));
            notes.add(String.format(Locale.ROOT, "Step %d (speed-up %s): %s.", i + 1, o.formatLoad(load),
                    replay.description()));
            return new StepState(null, replay);
        }
        Random promptRandom = new Random(stepSeed(2, i));
        if (records != null) {
            int[] next = {0};
            return new StepState(() -> {
                TraceRecord r = records.get(next[0]++ % records.size());
                return planned(r);
            }, null);
        }
        RequestShapes shapes = lengthTrace != null ? lengthTrace
                : RequestShapes.of(o.inputLength, o.outputLength, stepSeed(1, i));
        return new StepState(() -> {
            RequestShapes.Shape shape = shapes.next();
            return new Planned(PromptBuilder.prompt(shape.inputTokens(), promptRandom), shape.outputTokens());
        }, null);
    }

    /** A recorded request: its blocks' prompt, its output length (at least 1: max_tokens 0 is no request). */
    private Planned planned(TraceRecord r) {
        return new Planned(blockPrompts.prompt(r, r.line()), Math.max(1, r.outputLength()));
    }

    private StepResult runStep(int i, double load, Extension extension) throws Exception {
        double boundSeconds = extension == null ? o.stepSeconds : Math.max(o.stepSeconds, extension.boundSeconds());
        StepState st = stepState(i, load, o.warmupSeconds + boundSeconds);
        info("step %d: %s %s, warm-up %.0f s, then %.0f s%s (at most %d requests)", i + 1, o.formatLoad(load),
                o.loadUnit(), o.warmupSeconds, o.stepSeconds, boundSeconds > o.stepSeconds
                        ? String.format(Locale.ROOT, " (up to %.0f s when inconclusive)", boundSeconds) : "",
                o.maxRequests);
        long t0 = System.nanoTime();
        long warmEnd = t0 + (long) (o.warmupSeconds * 1e9);
        long hardEnd = warmEnd + (long) (boundSeconds * 1e9);
        OpenLoop arrivals = null;
        if (st.replay != null) {
            long[] offsets = st.replay.offsetsNanos();
            int[] timed = st.replay.timed();
            int[] at = {0};
            arrivals = OpenLoop.start(context, () -> at[0] < timed.length ? offsets[timed[at[0]++]] : Long.MAX_VALUE,
                    t0, hardEnd - t0, () -> arriveRecorded(st), "sweep-replay");
        } else if (o.mode == SweepOptions.Mode.OPEN) {
            arrivals = OpenLoop.start(context, arrivals(o, i, load)::nextNanos, t0, hardEnd - t0,
                    () -> sendOne(st, true, null), "sweep-arrivals");
        } else {
            // after a failed request a stream waits 100 ms: a failing target is not hammered
            int streams = (int) Math.round(load);
            await(onContext(() -> {
                ClosedLoop.start(vertx, streams, 0, 100, () -> {
                    Future<RequestRecord> f = sendOne(st, false, null);
                    return f == null ? null : f.map(RequestRecord::ok);
                });
                return Future.succeededFuture();
            }));
        }
        sleepUntil(warmEnd);
        await(onContext(() -> {
            st.measuring = true;
            return Future.succeededFuture();
        }));
        long tb = System.nanoTime();
        SidecarScrape before = scrape();
        long measureEnd = tb + (long) (o.stepSeconds * 1e9);
        long boundEnd = tb + (long) (boundSeconds * 1e9);
        SidecarScrape end;
        long te;
        while (true) {
            boolean done = false;
            while (System.nanoTime() < measureEnd) {
                LockSupport.parkNanos(Math.min(50_000_000L, Math.max(1, measureEnd - System.nanoTime())));
                if (await(onContext(() -> Future.succeededFuture(st.measuredSent >= o.maxRequests
                        || st.exhausted())))) {
                    done = true;
                    break;
                }
            }
            te = System.nanoTime();
            end = scrape();
            if (done || extension == null || measureEnd >= boundEnd
                    || !extension.extend(before, end, (te - tb) / 1e9)) {
                break;
            }
            measureEnd = Math.min(boundEnd, measureEnd + (long) (o.stepSeconds * 1e9));
            info("  inconclusive after %.0f s: measuring up to %.0f s", (te - tb) / 1e9, (measureEnd - tb) / 1e9);
        }
        if (arrivals != null) {
            arrivals.stop();
        }
        await(onContext(() -> {
            st.stopped = true;
            return Future.succeededFuture();
        }));
        if (arrivals != null) {
            arrivals.join(10_000);
        }
        long drainDeadline = System.nanoTime() + (long) (o.drainSeconds * 1e9);
        int open;
        while ((open = await(onContext(() -> Future.succeededFuture(client.inFlight())))) > 0
                && System.nanoTime() < drainDeadline) {
            LockSupport.parkNanos(20_000_000L);
        }
        if (open > 0) {
            warnings.add(String.format(Locale.ROOT, "step %d (%s %s): %d requests still open after --drain-seconds %s "
                    + "were cancelled (counted as errors \"cancelled\"; the sidecar counts them as client_cancelled)",
                    i + 1, o.formatLoad(load), o.loadUnit(), open, SloSpec.fmt(o.drainSeconds)));
            await(onContext(() -> {
                client.cancelAll();
                return Future.succeededFuture();
            }));
        }
        long drained = System.nanoTime();
        SidecarScrape after = waitIdle(scrape());
        ClientSummary cs = await(onContext(() -> Future.succeededFuture(ClientSummary.of(st.records, st.dropped))));
        if (cs.dropped() > 0) {
            warnings.add(String.format(Locale.ROOT, "step %d (%s %s): %d arrivals dropped: --max-in-flight %d requests "
                    + "were open (the offered load was not fully offered)", i + 1, o.formatLoad(load), o.loadUnit(),
                    cs.dropped(), o.maxInFlight));
        }
        if (st.replay != null) {
            int[] counts = await(onContext(() -> Future.succeededFuture(new int[] {st.replayed, st.sessionWaits})));
            List<TraceRecord> planned = st.replay.records();
            notes.add(String.format(Locale.ROOT, "Step %d: %d of its %d records sent%s%s.", i + 1, counts[0],
                    planned.size(), counts[0] == 0 || counts[0] == planned.size() ? "" : " (the step ended first)",
                    counts[1] == 0 ? ""
                            : String.format(Locale.ROOT, "; %d session turn%s waited for the previous turn of their "
                                    + "session to end (sent later than recorded)", counts[1],
                                    counts[1] == 1 ? "" : "s")));
        }
        return StepResult.compute(i + 1, load, o.model, o.operation(), o.slo, o.sloObjective, before, end, after,
                (te - tb) / 1e9, (drained - te) / 1e9, cs);
    }

    /**
     * A trace replay's arrival at its time (on the context): the next timed record, sent now unless an earlier turn of
     * its session is still open, in which case it waits for that turn to end.
     */
    private void arriveRecorded(StepState st) {
        if (st.arrived >= st.replay.timed().length) {
            return;
        }
        int index = st.replay.timed()[st.arrived++];
        TraceRecord r = st.replay.records().get(index);
        if (r.sessionId() == null) {
            st.replayed++;
            sendOne(st, true, planned(r));
            return;
        }
        SessionGate gate = st.sessions.computeIfAbsent(r.sessionId(), k -> new SessionGate());
        if (gate.open) {
            gate.waiting.add(index);
            st.sessionWaits++;
            st.waitingTurns++;
            return;
        }
        sendTurn(st, gate, index);
    }

    /**
     * Sends a session's turn; when it ends, its next turn after the recorded gap, or the next one waiting. A turn that
     * cannot be sent (the step stopped, too many open) ends at once.
     */
    private void sendTurn(StepState st, SessionGate gate, int first) {
        // a loop, not recursion: a stopped step gives up a session's waiting turns one after another
        for (int index = first; index >= 0; index = turnEnded(st, gate, index)) {
            st.replayed++;
            gate.open = true;
            Future<RequestRecord> f = sendOne(st, true, planned(st.replay.records().get(index)));
            if (f != null) {
                int sent = index;
                f.onComplete(ar -> {
                    int waiting = turnEnded(st, gate, sent);
                    if (waiting >= 0) {
                        sendTurn(st, gate, waiting);
                    }
                });
                return;
            }
        }
    }

    /**
     * The turn at {@code index} ended: its conversation's next turn goes after the recorded gap (the gate stays
     * closed), or the gate opens. Returns the waiting turn to send now, or -1.
     */
    private int turnEnded(StepState st, SessionGate gate, int index) {
        int next = st.replay.next()[index];
        if (next >= 0) {
            if (st.stopped) {
                for (int n = next; n >= 0; n = st.replay.next()[n]) {
                    st.chainedTurns--; // given up with the step
                }
                gate.open = false;
                return -1;
            }
            long gapMillis = Math.max(1, Math.round(st.replay.gapNanos()[next] / 1e6));
            vertx.setTimer(gapMillis, t -> context.runOnContext(v -> {
                st.chainedTurns--;
                sendTurn(st, gate, next);
            }));
            return -1;
        }
        gate.open = false;
        Integer waiting = gate.waiting.poll();
        if (waiting == null) {
            return -1;
        }
        st.waitingTurns--;
        return waiting;
    }

    /**
     * Sends one request ({@code planned}, or the step's next) unless the step stopped (or, with open arrivals, too
     * many are open); null when none was sent.
     */
    private Future<RequestRecord> sendOne(StepState st, boolean open, Planned planned) {
        if (st.stopped) {
            return null;
        }
        if (st.measuring && st.measuredSent >= o.maxRequests) {
            st.stopped = true;
            return null;
        }
        if (open && client.inFlight() >= o.maxInFlight) {
            if (st.measuring) {
                st.dropped++;
            }
            return null;
        }
        boolean measured = st.measuring;
        if (measured) {
            st.measuredSent++;
        }
        Planned p = planned != null ? planned : st.next.get();
        Future<RequestRecord> f = send(body(p.prompt(), p.maxTokens()), measured);
        return f.onSuccess(r -> {
            if (r.measured()) {
                st.records.add(r);
            }
        });
    }

    /** One streaming request through --url; on the client's context. */
    private Future<RequestRecord> send(Buffer body, boolean measured) {
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setURI(requestPath)
                .setIdleTimeout((long) (o.requestTimeoutSeconds * 1000)).putHeader("content-type", "application/json")
                .putHeader("accept", "text/event-stream");
        o.headers.forEach(options::putHeader);
        return client.send(options, body, new RecordReader(measured));
    }

    /** A streaming request with this prompt and max_tokens. */
    Buffer body(String prompt, int maxTokens) {
        JsonObject b = new JsonObject().put("model", o.model);
        if (o.operation().equals("chat")) {
            b.put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", prompt)));
        } else {
            b.put("prompt", prompt);
        }
        b.put("max_tokens", maxTokens).put("stream", true)
                .put("stream_options", new JsonObject().put("include_usage", true));
        if (o.ignoreEos) {
            b.put("ignore_eos", true);
        }
        o.extraBody.forEach(e -> b.put(e.getKey(), e.getValue()));
        return b.toBuffer();
    }

    // ---- scraping ----

    SidecarScrape scrape() throws IOException, InterruptedException {
        HttpResponse<String> res = http.send(HttpRequest.newBuilder(URI.create(o.metricsUrl))
                .header("accept", "text/plain;version=0.0.4").timeout(Duration.ofSeconds(20)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (res.statusCode() != 200) {
            throw new IOException(o.metricsUrl + " answered " + res.statusCode());
        }
        return SidecarScrape.parse(res.body());
    }

    /**
     * Scrapes until the sidecar's in-flight gauge is 0 (at most 3 s): our client sees a stream end a moment before
     * the sidecar has recorded it. Other traffic through the same sidecar can keep it above 0; then the last scrape.
     */
    private SidecarScrape waitIdle(SidecarScrape first) throws IOException, InterruptedException {
        SidecarScrape e = first;
        long deadline = System.nanoTime() + 3_000_000_000L;
        while (e.gauge(SidecarSeries.IN_FLIGHT) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
            e = scrape();
        }
        if (e.gauge(SidecarSeries.IN_FLIGHT) > 0) {
            warnings.add("the sidecar still had requests in flight after a step: other traffic shares it, and is in "
                    + "the figures");
        }
        return e;
    }

    // ---- plumbing ----

    private <T> Future<T> onContext(Supplier<Future<T>> action) {
        Promise<T> p = Promise.promise();
        context.runOnContext(v -> {
            try {
                action.get().onComplete(p);
            } catch (RuntimeException e) {
                p.fail(e);
            }
        });
        return p.future();
    }

    private static <T> T await(Future<T> f) throws Exception {
        CompletableFuture<T> c = f.toCompletionStage().toCompletableFuture();
        return c.get(10, TimeUnit.MINUTES);
    }

    private static void sleepUntil(long nanos) {
        long wait;
        while ((wait = nanos - System.nanoTime()) > 0) {
            LockSupport.parkNanos(wait);
        }
    }

    private void info(String format, Object... args) {
        if (log != null) {
            log.println("sweep: " + String.format(Locale.ROOT, format, args));
        }
    }

    void progress(StepResult s) {
        info("  -> %.2f req/s, %.1f output tok/s; TTFT p50 %s p99 %s; TPOT p50 %s; E2E p50 %s; sidecar errors %.0f, "
                + "client errors %d%s", s.throughput(), s.outputTokensPerSecond(), Report.ms(s.ttft().p50()),
                Report.ms(s.ttft().p99()), Report.ms(s.tpot().p50()), Report.ms(s.e2e().p50()), s.sidecarErrors(),
                s.client().errorCount(), s.slo() == null ? ""
                        : String.format(Locale.ROOT, "; SLO share %.3f", s.slo().share()));
    }
}
