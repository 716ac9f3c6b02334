package dev.llmsidecar.engine;

import static dev.llmsidecar.export.contract.Label.RESULT;
import static dev.llmsidecar.export.contract.Label.PHASE;
import static dev.llmsidecar.export.contract.Label.ENGINE;
import dev.llmsidecar.export.contract.LabelValues;
import dev.llmsidecar.export.contract.Contract;
import dev.llmsidecar.export.contract.CumulativeHistogram;
import dev.llmsidecar.export.contract.Recorder.Bound;
import dev.llmsidecar.export.contract.Recorders;
import dev.llmsidecar.export.contract.Series;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.PoolOptions;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.net.URI;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * Scrapes the upstream engine's own Prometheus endpoint on a timer and re-exports a few normalised gauges, its own
 * cumulative counters and its per-request phase histograms ({@code llm_sidecar.engine.*}), so the sidecar's metrics
 * say what the engine thinks of its load and where its time went next to what the sidecar measured.
 *
 * <p>Everything runs on one Vert.x context (the caller's, or a fresh event-loop one): the HTTP call, the parse
 * and the normalisation; nothing blocks. A failed, unrecognised, oversized or late scrape sets
 * {@code up} to 0, every engine gauge and counter to NaN and takes the phase histograms out of the export (no lines,
 * no OTLP points) until a scrape succeeds again, so stale numbers never look live.
 *
 * <p>Meters are registered in the constructor and stay registered; use one scraper per registry (Micrometer
 * would hand a second one the first one's gauges).
 */
public final class EngineMetricsScraper {

    /** Responses larger than this are refused: a real engine exposition is a few hundred KiB. */
    public static final int MAX_BODY_BYTES = 8 * 1024 * 1024;

    // Classic text format. Not offering OpenMetrics at all: Python's prometheus_client ignores q-values and
    // switches to it whenever it is named (we would parse it, but it adds _created series per counter).
    private static final String ACCEPT = "text/plain;version=0.0.4, */*;q=0.1";

    /**
     * What gauges read. Replaced as a whole so a reader never sees up=1 with another scrape's values. The engine's
     * cumulative counters are held at their last value while it cannot be read: a NaN between two values would hide
     * a restart's reset from Prometheus' rate() (1000, NaN, 5 reads as an increase of -995), while a held value then
     * a lower one is the reset it is.
     */
    private record State(boolean up, EngineSnapshot snapshot, EngineKind infoKind, EngineCounters counters,
            double preemptions) {

        /** Down: nothing live, the counters as last seen. */
        State down(EngineKind kind) {
            return new State(false, EngineSnapshot.unknown(), kind, counters, preemptions);
        }

        /** A good scrape: its values, and for a counter it does not report, the last one seen. */
        State up(EngineSnapshot s) {
            return new State(true, s, s.kind(), s.counters().orElse(counters),
                    Double.isNaN(s.preemptions()) ? preemptions : s.preemptions());
        }
    }

    /** One scrape in flight: its deadline timer and the body codec to abandon if it is late. */
    private static final class Attempt {
        final LimitedBodyCodec body = new LimitedBodyCodec(MAX_BODY_BYTES);
        long deadlineTimer = -1;
    }

    private enum Outcome {
        OK, ERROR, UNPARSEABLE;

        String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Vertx vertx;
    private final Recorders recorders;
    private final String url;
    private final long intervalMillis;
    private final long timeoutMillis;
    private final Context context;
    private final Bound okScrapes;
    private final Bound errorScrapes;
    private final Bound unparseableScrapes;

    private volatile State state = new State(false, EngineSnapshot.unknown(), null, EngineCounters.none(),
            Double.NaN);

    // confined to `context`
    private final EngineNormaliser normaliser = new EngineNormaliser();
    private final Set<EngineKind> infoRegistered = EnumSet.noneOf(EngineKind.class);
    private HttpClient httpClient;
    private WebClient client;
    private HttpConnection connection; // the one pooled connection, to cut when a scrape is abandoned
    private long periodicTimer = -1;
    private Attempt inFlight;
    private boolean running;

    /**
     * @param recorders where the engine's signals are exported (Prometheus, and OTLP when on)
     * @param url      the engine's metrics endpoint, http or https (e.g. {@code http://127.0.0.1:8000/metrics})
     * @param interval time between scrape starts; a tick is skipped while the previous scrape still runs
     * @param timeout  deadline for a whole scrape: connect, headers and body
     */
    public EngineMetricsScraper(Vertx vertx, Recorders recorders, URI url, Duration interval, Duration timeout) {
        this.vertx = Objects.requireNonNull(vertx, "vertx");
        this.recorders = Objects.requireNonNull(recorders, "recorders");
        Objects.requireNonNull(url, "url");
        String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || url.getHost() == null) {
            throw new IllegalArgumentException("engine metrics URL must be an absolute http(s) URL: " + url);
        }
        this.url = url.toString();
        this.intervalMillis = positiveMillis(interval, "interval");
        this.timeoutMillis = positiveMillis(timeout, "timeout");
        this.context = vertx.getOrCreateContext();

        gauge(Contract.ENGINE_UP, s -> s.up() ? 1 : 0);
        gauge(Contract.ENGINE_WAITING, s -> s.snapshot().requestsWaiting());
        gauge(Contract.ENGINE_RUNNING, s -> s.snapshot().requestsRunning());
        gauge(Contract.ENGINE_KV, s -> s.snapshot().kvCacheUsageRatio());
        gauge(Contract.ENGINE_PREFIX_HIT, s -> s.snapshot().prefixCacheHitRatio());
        // the engine's own cumulative counts, passed through (they restart from 0 with the engine, as rate() expects)
        gauge(Contract.ENGINE_PREEMPTIONS, State::preemptions);
        gauge(Contract.ENGINE_PROMPT_TOKENS, s -> s.counters().promptTokens());
        gauge(Contract.ENGINE_PROMPT_CACHED, s -> s.counters().promptTokensCached());
        gauge(Contract.ENGINE_SPEC_DRAFTS, s -> s.counters().specDrafts());
        gauge(Contract.ENGINE_SPEC_DRAFT_TOKENS, s -> s.counters().specDraftTokens());
        gauge(Contract.ENGINE_SPEC_ACCEPTED, s -> s.counters().specAcceptedTokens());
        gauge(Contract.ENGINE_GENERATION_TOKENS, s -> s.counters().generationTokens());
        for (EnginePhase phase : EnginePhase.values()) {
            phaseHistogram(phase);
        }
        this.okScrapes = scrapeCounter(Outcome.OK);
        this.errorScrapes = scrapeCounter(Outcome.ERROR);
        this.unparseableScrapes = scrapeCounter(Outcome.UNPARSEABLE);
    }

    /** Starts scraping now and then every interval. Idempotent; completes once scheduled. */
    public Future<Void> start() {
        Promise<Void> started = Promise.promise();
        context.runOnContext(v -> {
            if (!running) {
                running = true;
                // one connection is enough for sequential scrapes, and is the one to close when one is abandoned:
                // WebClient alone would leave a late or oversized response draining on it
                httpClient = vertx.httpClientBuilder()
                        .with(new HttpClientOptions()
                                .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMillis)))
                        .with(new PoolOptions().setHttp1MaxSize(1).setHttp2MaxSize(1))
                        .withConnectHandler(this::connected)
                        .build();
                client = WebClient.wrap(httpClient, new WebClientOptions()
                        .setUserAgent("llm-sidecar")
                        .setFollowRedirects(false));
                periodicTimer = vertx.setPeriodic(intervalMillis, id -> scrape());
                scrape();
            }
            started.complete();
        });
        return started.future();
    }

    /**
     * Stops scraping, abandons a scrape in flight and reports the engine as down (meters stay registered).
     * Idempotent; completes once stopped, without blocking.
     */
    public Future<Void> stop() {
        Promise<Void> stopped = Promise.promise();
        context.runOnContext(v -> {
            if (running) {
                running = false;
                vertx.cancelTimer(periodicTimer);
                if (inFlight != null) {
                    vertx.cancelTimer(inFlight.deadlineTimer);
                    inFlight.body.abandon();
                    inFlight = null;
                }
                client.close();
                httpClient.close();
                client = null;
                httpClient = null;
                connection = null;
                normaliser.forget();
                state = state.down(state.infoKind());
            }
            stopped.complete();
        });
        return stopped.future();
    }

    /** The last successful normalised snapshot, or {@link EngineSnapshot#unknown()} while down. */
    public EngineSnapshot latest() {
        return state.snapshot();
    }

    /** Whether the last scrape succeeded and was recognised. */
    public boolean up() {
        return state.up();
    }

    private void scrape() {
        if (!running || inFlight != null) {
            return; // the previous scrape is still within its deadline: skip a tick rather than pile up
        }
        Attempt attempt = new Attempt();
        inFlight = attempt;
        attempt.deadlineTimer = vertx.setTimer(timeoutMillis, id -> finish(attempt, null));
        client.getAbs(url)
                .putHeader("Accept", ACCEPT)
                .connectTimeout(timeoutMillis)
                .idleTimeout(timeoutMillis)
                .as(attempt.body)
                .send()
                .onComplete(ar -> finish(attempt, ar));
    }

    /** Records the end of an attempt; a null result means its deadline passed. Late results are ignored. */
    private void finish(Attempt attempt, AsyncResult<HttpResponse<String>> result) {
        if (inFlight != attempt) {
            return; // already timed out, or stopped
        }
        inFlight = null;
        vertx.cancelTimer(attempt.deadlineTimer);
        attempt.body.abandon();
        if (result == null || result.failed() || result.result().statusCode() / 100 != 2) {
            dropConnection(); // it may be mid-response (late, oversized): never reuse it
            down(Outcome.ERROR, state.infoKind());
            return;
        }
        EngineSnapshot snapshot;
        try {
            String body = result.result().body();
            snapshot = normaliser.normalise(
                    ExpositionParser.parse(body == null ? "" : body, EngineNormaliser::relevant).samples());
        } catch (RuntimeException e) {
            snapshot = EngineSnapshot.unknown(); // parser and normaliser do not throw; if they ever do, be down
        }
        if (snapshot.kind() == EngineKind.UNKNOWN) {
            down(Outcome.UNPARSEABLE, EngineKind.UNKNOWN);
            return;
        }
        registerInfo(snapshot.kind());
        state = state.up(snapshot);
        okScrapes.record(1);
    }

    private void connected(HttpConnection conn) {
        connection = conn;
        conn.closeHandler(v -> {
            if (connection == conn) {
                connection = null;
            }
        });
    }

    private void dropConnection() {
        if (connection != null) {
            connection.close();
            connection = null;
        }
    }

    private void down(Outcome outcome, EngineKind infoKind) {
        normaliser.forget(); // the next good scrape is a first one: no prefix ratio across a gap or restart
        state = state.down(infoKind);
        (outcome == Outcome.ERROR ? errorScrapes : unparseableScrapes).record(1);
    }

    /**
     * One info series per known kind ever seen, 1 for the current kind and 0 for the others, so a changed
     * engine never leaves two series at 1. The kind outlives an outage (error): it is identity, not liveness
     * ({@code up}). An unrecognised answer (unparseable) sets every series to 0; there is no "unknown" series.
     */
    private void registerInfo(EngineKind kind) {
        if (infoRegistered.add(kind)) {
            recorders.observe(Contract.ENGINE_INFO, () -> state.infoKind() == kind ? 1 : 0,
                    LabelValues.of(ENGINE, kind.label()));
        }
    }

    /** The engine's histogram of one phase, with its bounds, on every backend that has the series. */
    private void phaseHistogram(EnginePhase phase) {
        recorders.observeHistogram(Contract.ENGINE_PHASE, () -> phase(phase), LabelValues.of(PHASE, phase.label()));
    }

    /** One state read, so a reader never mixes two scrapes; null (no point) while down or not reported. */
    private CumulativeHistogram phase(EnginePhase phase) {
        State s = state;
        return s.up() ? s.snapshot().phase(phase) : null;
    }

    private void gauge(Series series, ToDoubleFunction<State> value) {
        recorders.observe(series, () -> value.applyAsDouble(state));
    }

    /** Scrapes by result: ok, error (connect / timeout / non-2xx / oversized), unparseable (no engine metric). */
    private Bound scrapeCounter(Outcome outcome) {
        Bound counter = recorders.bound(Contract.ENGINE_SCRAPES, LabelValues.of(RESULT, outcome.tag()));
        counter.record(0);
        return counter;
    }

    private static long positiveMillis(Duration duration, String what) {
        long millis = Objects.requireNonNull(duration, what).toMillis();
        if (millis < 1) {
            throw new IllegalArgumentException(what + " must be at least 1 ms: " + duration);
        }
        return millis;
    }
}
