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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
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
    private Context context;
    private LoadClient client;
    /** --url's path prefix and --path. */
    private String requestPath;

    private Sweep(SweepOptions options, Vertx vertx, PrintStream log) {
        this.o = options;
        this.vertx = vertx;
        this.log = log;
    }

    /** Runs the sweep {@code options} describe; progress goes to {@code log} (null: none). */
    public static SweepResult run(SweepOptions options, Vertx vertx, PrintStream log) throws Exception {
        return new Sweep(options, vertx, log).run();
    }

    /** Everything one step's load needs, confined to the client's context. */
    private static final class StepState {
        final RequestShapes shapes;
        final Random promptRandom;
        final List<RequestRecord> records = new ArrayList<>();
        boolean measuring;
        boolean stopped;
        int measuredSent;
        int dropped;

        StepState(RequestShapes shapes, Random promptRandom) {
            this.shapes = shapes;
            this.promptRandom = promptRandom;
        }
    }

    private SweepResult run() throws Exception {
        long started = System.nanoTime();
        String startedAt = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
        RequestShapes traceShapes = o.trace == null ? null
                : RequestShapes.trace(RequestShapes.readTrace(o.trace), o.trace.getFileName().toString());
        int connections = o.mode == SweepOptions.Mode.OPEN ? o.maxInFlight
                : (int) Arrays.stream(o.loads).max().orElse(1);
        if (!"http".equals(o.url.getScheme())) {
            throw new IllegalArgumentException("--url must be http://host:port (the sidecar's proxy port): " + o.url);
        }
        requestPath = (o.url.getRawPath() == null ? "" : o.url.getRawPath().replaceAll("/+$", "")) + o.path;
        context = vertx.getOrCreateContext();
        client = new LoadClient(vertx, context, o.url.getHost(), o.url.getPort() > 0 ? o.url.getPort() : 80,
                connections);
        List<StepResult> steps = new ArrayList<>();
        SidecarScrape last;
        try {
            last = preflight(traceShapes);
            for (int i = 0; i < o.loads.length; i++) {
                RequestShapes shapes = traceShapes != null ? traceShapes
                        : RequestShapes.of(o.inputLength, o.outputLength, stepSeed(1, i));
                StepResult step = runStep(i, shapes);
                steps.add(step);
                progress(step);
            }
            last = scrape();
        } finally {
            await(onContext(() -> client.close()));
        }
        SweepAnalysis.Knee knee = SweepAnalysis.knee(steps);
        SweepAnalysis.Goodput goodput = o.slo == null ? null : SweepAnalysis.goodput(steps, o.slo.target());
        double[] ttftBounds = Report.upperBounds(last.histogram(SidecarSeries.TTFT,
                SidecarSeries.streams(o.model, o.operation())));
        double[] tokenBounds = Report.upperBounds(last.histogram(SidecarSeries.TPOT,
                SidecarSeries.ok(o.model, o.operation())));
        return new SweepResult(o, steps, knee, last.gauge(SidecarSeries.KNEE), goodput, ttftBounds, tokenBounds,
                last.labelValues(SidecarSeries.SLO_TARGET, "objective"),
                traceShapes != null ? traceShapes.describe()
                        : "input " + o.inputLength.describe() + ", output " + o.outputLength.describe() + ", seed "
                                + o.seed,
                startedAt, (System.nanoTime() - started) / 1e9, List.copyOf(warnings));
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

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** The Poisson arrival offsets the open-loop step {@code step} (0-based) uses: for tests and models. */
    public static PoissonArrivals arrivals(SweepOptions options, int step) {
        return new PoissonArrivals(options.loads[step], seed(options.seed, 3, step));
    }

    // ---- preflight: the target answers, the metrics are the sidecar's, the model label is there ----

    private SidecarScrape preflight(RequestShapes traceShapes) throws Exception {
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
        StepState st = new StepState(RequestShapes.of(new LengthDistribution.Fixed(16),
                new LengthDistribution.Fixed(4), o.seed), new Random(o.seed));
        RequestRecord r = await(onContext(() -> send(body(st.shapes.next(), st.promptRandom), false)));
        if (!r.ok()) {
            throw new IllegalStateException("the first request through " + o.url + o.path + " failed: " + r.error()
                    + " (model " + o.model + ")");
        }
        SidecarScrape after = waitIdle(scrape());
        CumulativeHistogram ttft = after.histogram(SidecarSeries.TTFT, SidecarSeries.streams(o.model, o.operation()));
        if (ttft.isEmpty() || ttft.count() == 0) {
            throw new IllegalStateException("the sidecar's metrics have no TTFT for model=\"" + o.model
                    + "\", operation=\"" + o.operation() + "\" after a request: is --url the proxy port of the sidecar "
                    + "behind --metrics-url? Models it labels: " + after.labelValues(SidecarSeries.TTFT, "model")
                    + " (a name past sidecar.metrics.max-models becomes \"other\": pin it with "
                    + "sidecar.metrics.pinned-models)");
        }
        info("preflight ok: %s%s -> model %s; metrics %s", o.url, o.path, o.model, o.metricsUrl);
        return after;
    }

    // ---- one step ----

    private StepResult runStep(int i, RequestShapes shapes) throws Exception {
        double load = o.loads[i];
        StepState st = new StepState(shapes, new Random(stepSeed(2, i)));
        info("step %d/%d: %s %s, warm-up %.0f s, then %.0f s (at most %d requests)", i + 1, o.loads.length,
                o.formatLoad(load), o.loadUnit(), o.warmupSeconds, o.stepSeconds, o.maxRequests);
        long t0 = System.nanoTime();
        long warmEnd = t0 + (long) (o.warmupSeconds * 1e9);
        long hardEnd = warmEnd + (long) (o.stepSeconds * 1e9);
        OpenLoop arrivals = null;
        if (o.mode == SweepOptions.Mode.OPEN) {
            arrivals = OpenLoop.start(context, arrivals(o, i)::nextNanos, t0, hardEnd - t0, () -> sendOne(st, true),
                    "sweep-arrivals");
        } else {
            // after a failed request a stream waits 100 ms: a failing target is not hammered
            int streams = (int) Math.round(load);
            await(onContext(() -> {
                ClosedLoop.start(vertx, streams, 0, 100, () -> {
                    Future<RequestRecord> f = sendOne(st, false);
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
        while (System.nanoTime() < measureEnd) {
            LockSupport.parkNanos(Math.min(50_000_000L, Math.max(1, measureEnd - System.nanoTime())));
            if (await(onContext(() -> Future.succeededFuture(st.measuredSent >= o.maxRequests)))) {
                break;
            }
        }
        long te = System.nanoTime();
        SidecarScrape end = scrape();
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
        return StepResult.compute(i + 1, load, o.model, o.operation(), o.slo, o.sloObjective, before, end, after,
                (te - tb) / 1e9, (drained - te) / 1e9, cs);
    }

    /** Sends one request unless the step stopped (or, open loop, too many are open); null when none was sent. */
    private Future<RequestRecord> sendOne(StepState st, boolean open) {
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
        Future<RequestRecord> f = send(body(st.shapes.next(), st.promptRandom), measured);
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

    /** A streaming request of the given shape (see {@link PromptBuilder}). */
    Buffer body(RequestShapes.Shape shape, Random promptRandom) {
        String prompt = PromptBuilder.prompt(shape.inputTokens(), promptRandom);
        JsonObject b = new JsonObject().put("model", o.model);
        if (o.operation().equals("chat")) {
            b.put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", prompt)));
        } else {
            b.put("prompt", prompt);
        }
        b.put("max_tokens", shape.outputTokens()).put("stream", true)
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

    private void progress(StepResult s) {
        info("  -> %.2f req/s, %.1f output tok/s; TTFT p50 %s p99 %s; TPOT p50 %s; E2E p50 %s; sidecar errors %.0f, "
                + "client errors %d%s", s.throughput(), s.outputTokensPerSecond(), Report.ms(s.ttft().p50()),
                Report.ms(s.ttft().p99()), Report.ms(s.tpot().p50()), Report.ms(s.e2e().p50()), s.sidecarErrors(),
                s.client().errorCount(), s.slo() == null ? ""
                        : String.format(Locale.ROOT, "; SLO share %.3f", s.slo().share()));
    }
}
