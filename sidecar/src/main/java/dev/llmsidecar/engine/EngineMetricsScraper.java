package dev.llmsidecar.engine;

import static dev.llmsidecar.metrics.Label.ENGINE;
import static dev.llmsidecar.metrics.Label.PHASE;

import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.CumulativeHistogram;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.Series;
import dev.llmsidecar.scrape.ScrapeLoop.Outcome;
import dev.llmsidecar.scrape.ScrapeLoop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.time.Duration;
import java.util.EnumSet;
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
            double preemptions, long readNanos) {

        /** Down: nothing live, the counters as last seen; the age keeps growing from the last good scrape. */
        State down(EngineKind kind) {
            return new State(false, EngineSnapshot.unknown(), kind, counters, preemptions, readNanos);
        }

        /** A good scrape, read at {@code nanos}: its values, and for a counter it does not report, the last one seen. */
        State up(EngineSnapshot s, long nanos) {
            return new State(true, s, s.kind(), s.counters().orElse(counters),
                    Double.isNaN(s.preemptions()) ? preemptions : s.preemptions(), nanos);
        }

        /** Seconds since the last good scrape was read at {@code now}; NaN before the first. */
        double ageSeconds(long now) {
            return readNanos == NEVER ? Double.NaN : (now - readNanos) / 1e9;
        }
    }

    private static final long NEVER = Long.MIN_VALUE;

    private final Recorders recorders;
    private final ScrapeLoop loop;

    private volatile State state = new State(false, EngineSnapshot.unknown(), null, EngineCounters.none(),
            Double.NaN, NEVER);

    // confined to the loop's context
    private final EngineNormaliser normaliser = new EngineNormaliser();
    private final Set<EngineKind> infoRegistered = EnumSet.noneOf(EngineKind.class);

    /**
     * @param recorders where the engine's signals are exported (Prometheus, and OTLP when on)
     * @param url      the engine's metrics endpoint, http or https (e.g. {@code http://127.0.0.1:8000/metrics})
     * @param interval time between scrape starts; a tick is skipped while the previous scrape still runs
     * @param timeout  deadline for a whole scrape: connect, headers and body
     */
    public EngineMetricsScraper(Vertx vertx, Recorders recorders, URI url, Duration interval, Duration timeout) {
        this(vertx, recorders, url, interval, timeout, DEFAULT_TOKEN_DRIFT_LIMIT);
    }

    /** The default of {@code sidecar.engine.token-drift-limit}. */
    public static final double DEFAULT_TOKEN_DRIFT_LIMIT = 0.05;

    /**
     * @param tokenDriftLimit how far the sidecar's token totals may drift from the engine's counters read here before
     *     the reconciliation alert fires ({@code sidecar.engine.token-drift-limit}), exported for the rule to read
     */
    public EngineMetricsScraper(Vertx vertx, Recorders recorders, URI url, Duration interval, Duration timeout,
            double tokenDriftLimit) {
        if (!(tokenDriftLimit > 0 && tokenDriftLimit <= 1)) {
            throw new IllegalArgumentException("sidecar.engine.token-drift-limit must be above 0 and at most 1, not "
                    + tokenDriftLimit);
        }
        this.recorders = Objects.requireNonNull(recorders, "recorders");
        this.loop = new ScrapeLoop(vertx, recorders, new ScrapeLoop.Target("engine metrics", url, interval, timeout,
                MAX_BODY_BYTES, ACCEPT, Contract.ENGINE_SCRAPES), this::read, () -> down(state.infoKind()));
        gauge(Contract.ENGINE_UP, s -> s.up() ? 1 : 0);
        gauge(Contract.ENGINE_SCRAPE_AGE, s -> s.ageSeconds(System.nanoTime()));
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
        recorders.observe(Contract.ENGINE_TOKEN_DRIFT_LIMIT, () -> tokenDriftLimit);
        for (EnginePhase phase : EnginePhase.values()) {
            phaseHistogram(phase);
        }
    }

    /** Starts scraping now and then every interval. Idempotent; completes once scheduled. */
    public Future<Void> start() {
        return loop.start();
    }

    /**
     * Stops scraping, abandons a scrape in flight and reports the engine as down (meters stay registered).
     * Idempotent; completes once stopped, without blocking.
     */
    public Future<Void> stop() {
        return loop.stop();
    }

    /** The last successful normalised snapshot, or {@link EngineSnapshot#unknown()} while down. */
    public EngineSnapshot latest() {
        return state.snapshot();
    }

    /** Whether the last scrape succeeded and was recognised. */
    public boolean up() {
        return state.up();
    }

    /**
     * The engine member of /q/llm (docs/slo.md), from one state read: the last scrape's figures ({@code null} where
     * the engine does not say) and their age, so a reader compares them with the sidecar's own counts of that moment.
     */
    public JsonObject view() {
        State s = state;
        EngineSnapshot e = s.snapshot();
        return new JsonObject().put("up", s.up()).put("kind", e.kind().label())
                .put("scrape_age_seconds", finite(s.ageSeconds(System.nanoTime())))
                .put("requests_waiting", finite(e.requestsWaiting())).put("requests_running", finite(e.requestsRunning()))
                .put("kv_cache_usage_ratio", finite(e.kvCacheUsageRatio()))
                .put("prefix_cache_hit_ratio", finite(e.prefixCacheHitRatio()));
    }

    private static Double finite(double v) {
        return Double.isFinite(v) ? v : null;
    }

    /** A 2xx answer: up with its values when it is an engine's, else unparseable. */
    private Outcome read(String body) {
        EngineSnapshot snapshot = normaliser.normalise(
                ExpositionParser.parse(body, EngineNormaliser::relevant).samples());
        if (snapshot.kind() == EngineKind.UNKNOWN) {
            down(EngineKind.UNKNOWN);
            return Outcome.UNPARSEABLE;
        }
        registerInfo(snapshot.kind());
        state = state.up(snapshot, System.nanoTime());
        return Outcome.OK;
    }

    private void down(EngineKind infoKind) {
        normaliser.forget(); // the next good scrape is a first one: no prefix ratio across a gap or restart
        state = state.down(infoKind);
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
}
