package dev.llmsidecar.gpu;

import static dev.llmsidecar.export.contract.Label.GPU;
import static dev.llmsidecar.export.contract.Label.RESULT;
import dev.llmsidecar.export.contract.LabelValues;
import dev.llmsidecar.engine.ExpositionParser;
import dev.llmsidecar.export.contract.Contract;
import dev.llmsidecar.export.contract.Recorder.Bound;
import dev.llmsidecar.export.contract.Recorders;
import dev.llmsidecar.export.contract.Series;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.ToDoubleFunction;
import org.jboss.logging.Logger;

/**
 * Scrapes NVIDIA's DCGM exporter on a timer and re-exports the GPUs of this pod as normalised gauges
 * ({@code llm_sidecar.gpu.*}): utilisation 0..1, framebuffer memory used in bytes and as a ratio, power in W.
 *
 * <p>Everything runs on one Vert.x context: the HTTP call, the parse and the normalisation; nothing blocks. The body
 * is read up to {@link #MAX_BODY_BYTES} and the whole scrape (connect, headers, body) has a deadline. A failed, late,
 * oversized or unrecognised scrape sets {@code up} to 0 and every GPU gauge to NaN, so stale values never look live;
 * so does a good scrape without a GPU of this pod (the GPU gauges of a GPU missing from the answer read NaN).
 *
 * <p>A GPU's gauges are registered the first time it is seen, for at most {@link #MAX_GPUS} GPUs, and stay
 * registered; use one scraper per registry.
 */
public final class DcgmScraper {

    private static final Logger LOG = Logger.getLogger(DcgmScraper.class);

    /** Answers larger than this are refused: a node of 8 GPUs with the default counters is some 100 KiB. */
    public static final int MAX_BODY_BYTES = 8 * 1024 * 1024;

    /** GPUs with their own series at most (a pod rarely has more than 8; MIG instances count one each). */
    public static final int MAX_GPUS = 16;

    private static final String ACCEPT = "text/plain;version=0.0.4, */*;q=0.1";

    /** What gauges read. Replaced as a whole so a reader never mixes two scrapes. */
    private record State(boolean up, Map<String, GpuReading> gpus) {
        static final State DOWN = new State(false, Map.of());
    }

    /** One scrape in flight. */
    private static final class Attempt {
        final Buffer body = Buffer.buffer();
        HttpClientRequest request;
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
    private final DcgmNormaliser normaliser;
    private final long intervalMillis;
    private final long timeoutMillis;
    private final Context context;
    private final Bound okScrapes;
    private final Bound errorScrapes;
    private final Bound unparseableScrapes;

    private volatile State state = State.DOWN;

    // confined to `context`
    private final Set<String> registered = new HashSet<>();
    private HttpClient client;
    private long periodicTimer = -1;
    private Attempt inFlight;
    private boolean running;
    private boolean warnedTooMany;
    private String lastWarning;

    /**
     * @param url        the exporter's metrics endpoint, http or https (e.g. {@code http://dcgm-exporter:9400/metrics})
     * @param normaliser which GPUs are this pod's
     * @param interval   time between scrape starts; a tick is skipped while the previous scrape still runs
     * @param timeout    deadline for a whole scrape: connect, headers and body
     */
    public DcgmScraper(Vertx vertx, Recorders recorders, URI url, DcgmNormaliser normaliser, Duration interval,
            Duration timeout) {
        this.vertx = Objects.requireNonNull(vertx, "vertx");
        this.recorders = Objects.requireNonNull(recorders, "recorders");
        Objects.requireNonNull(url, "url");
        String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || url.getHost() == null) {
            throw new IllegalArgumentException("DCGM exporter URL must be an absolute http(s) URL: " + url);
        }
        this.url = url.toString();
        this.normaliser = Objects.requireNonNull(normaliser, "normaliser");
        this.intervalMillis = positiveMillis(interval, "interval");
        this.timeoutMillis = positiveMillis(timeout, "timeout");
        this.context = vertx.getOrCreateContext();

        recorders.observe(Contract.GPU_UP, () -> state.up() ? 1 : 0);
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
                // one connection for sequential scrapes; a late or oversized answer is reset, which closes it
                client = vertx.httpClientBuilder()
                        .with(new HttpClientOptions()
                                .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMillis)))
                        .with(new PoolOptions().setHttp1MaxSize(1).setHttp2MaxSize(1))
                        .build();
                periodicTimer = vertx.setPeriodic(intervalMillis, id -> scrape());
                scrape();
            }
            started.complete();
        });
        return started.future();
    }

    /**
     * Stops scraping, abandons a scrape in flight and reports the GPUs as unknown (meters stay registered).
     * Idempotent; completes once stopped, without blocking.
     */
    public Future<Void> stop() {
        Promise<Void> stopped = Promise.promise();
        context.runOnContext(v -> {
            if (running) {
                running = false;
                vertx.cancelTimer(periodicTimer);
                Attempt attempt = inFlight;
                if (attempt != null) {
                    inFlight = null;
                    abandon(attempt);
                }
                client.close();
                client = null;
                state = State.DOWN;
            }
            stopped.complete();
        });
        return stopped.future();
    }

    /** Whether the last scrape succeeded and had GPUs of this pod. */
    public boolean up() {
        return state.up();
    }

    /** This pod's GPUs at the last scrape, in GPU order; empty while down. */
    public List<GpuReading> latest() {
        return List.copyOf(state.gpus().values());
    }

    private void scrape() {
        if (!running || inFlight != null) {
            return; // the previous scrape is still within its deadline: skip a tick rather than pile up
        }
        Attempt attempt = new Attempt();
        inFlight = attempt;
        attempt.deadlineTimer = vertx.setTimer(timeoutMillis, id -> failed(attempt));
        Future<HttpClientRequest> requested;
        try {
            requested = client.request(new RequestOptions()
                    .setMethod(HttpMethod.GET)
                    .setAbsoluteURI(url)
                    .putHeader("Accept", ACCEPT)
                    .putHeader("User-Agent", "llm-sidecar")
                    .setConnectTimeout(timeoutMillis)
                    .setIdleTimeout(timeoutMillis));
        } catch (RuntimeException e) { // the client closed under us: Vert.x itself is closing
            failed(attempt);
            return;
        }
        requested.onFailure(e -> failed(attempt))
                .onSuccess(request -> {
                    if (inFlight != attempt) {
                        request.reset(); // late: the deadline passed, or stopped
                        return;
                    }
                    attempt.request = request;
                    request.send()
                            .onFailure(e -> failed(attempt))
                            .onSuccess(response -> receive(attempt, response));
                });
    }

    private void receive(Attempt attempt, HttpClientResponse response) {
        // first: the reset that ends a refused answer reaches the response as an exception (else Vert.x logs it)
        response.exceptionHandler(e -> failed(attempt));
        if (inFlight != attempt) {
            return;
        }
        if (response.statusCode() / 100 != 2) {
            failed(attempt);
            return;
        }
        response.handler(data -> {
            if (inFlight != attempt) {
                return;
            }
            if ((long) attempt.body.length() + data.length() > MAX_BODY_BYTES) {
                failed(attempt);
                return;
            }
            attempt.body.appendBuffer(data);
        });
        response.endHandler(v -> succeeded(attempt));
    }

    /** Connect error, non-2xx, oversized, broken or late (the deadline timer): down, and the connection reset. */
    private void failed(Attempt attempt) {
        if (inFlight != attempt) {
            return; // already finished, timed out or stopped
        }
        inFlight = null;
        abandon(attempt);
        down(Outcome.ERROR);
    }

    private void abandon(Attempt attempt) {
        vertx.cancelTimer(attempt.deadlineTimer);
        if (attempt.request != null) {
            attempt.request.reset(); // HTTP/1.1: closes the connection, so a late body is never read as the next one
        }
    }

    private void succeeded(Attempt attempt) {
        if (inFlight != attempt) {
            return;
        }
        inFlight = null;
        vertx.cancelTimer(attempt.deadlineTimer);
        DcgmSnapshot snapshot;
        try {
            snapshot = normaliser.normalise(ExpositionParser.parse(attempt.body.toString(StandardCharsets.UTF_8),
                    DcgmNormaliser::relevant).samples());
        } catch (RuntimeException e) {
            snapshot = DcgmSnapshot.UNRECOGNISED; // parser and normaliser do not throw; if they ever do, be down
        }
        if (!snapshot.recognised()) {
            warnOnce("the answer of " + url + " has none of DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_GR_ENGINE_ACTIVE, "
                    + "DCGM_FI_DEV_FB_USED, DCGM_FI_DEV_FB_FREE, DCGM_FI_DEV_POWER_USAGE: is it a DCGM exporter?");
            down(Outcome.UNPARSEABLE);
            return;
        }
        Map<String, GpuReading> gpus = new LinkedHashMap<>();
        for (GpuReading gpu : snapshot.gpus()) {
            if (register(gpu.gpu())) {
                gpus.put(gpu.gpu(), gpu);
            }
        }
        if (gpus.isEmpty()) {
            warnOnce(normaliser.pod() == null ? "no pod to select GPUs of: set sidecar.gpu.pod (or HOSTNAME)"
                    : !snapshot.podLabels()
                            ? "the DCGM exporter at " + url + " labels no GPU with a pod: run it with --kubernetes "
                                    + "(DCGM_EXPORTER_KUBERNETES=true), or set sidecar.gpu.pod=* for every GPU"
                            : "no GPU of pod " + normaliser.pod() + " at " + url + " (the exporter of another "
                                    + "node? point sidecar.gpu.dcgm-url at the one on this pod's node)");
        } else {
            lastWarning = null;
        }
        state = new State(!gpus.isEmpty(), Collections.unmodifiableMap(gpus)); // in GPU order
        okScrapes.record(1);
    }

    private void down(Outcome outcome) {
        state = State.DOWN;
        (outcome == Outcome.ERROR ? errorScrapes : unparseableScrapes).record(1);
    }

    /** Registers a GPU's gauges the first time it is seen; false past {@link #MAX_GPUS}. */
    private boolean register(String gpu) {
        if (registered.contains(gpu)) {
            return true;
        }
        if (registered.size() >= MAX_GPUS) {
            if (!warnedTooMany) {
                warnedTooMany = true;
                LOG.warnf("More than %d GPUs selected at %s: GPU %s and later ones are not exported", MAX_GPUS, url,
                        gpu);
            }
            return false;
        }
        registered.add(gpu);
        gauge(Contract.GPU_UTILIZATION, gpu, GpuReading::utilization);
        gauge(Contract.GPU_MEMORY_USED, gpu, GpuReading::memoryUsedBytes);
        gauge(Contract.GPU_MEMORY_RATIO, gpu, GpuReading::memoryUsedRatio);
        gauge(Contract.GPU_POWER, gpu, GpuReading::powerWatts);
        return true;
    }

    private void gauge(Series series, String gpu, ToDoubleFunction<GpuReading> value) {
        recorders.observe(series, () -> {
            GpuReading r = state.gpus().get(gpu);
            return r == null ? Double.NaN : value.applyAsDouble(r);
        }, LabelValues.of(GPU, gpu));
    }

    /** Logs a configuration problem once, until the scrape finds GPUs again or another problem shows. */
    private void warnOnce(String warning) {
        if (!warning.equals(lastWarning)) {
            lastWarning = warning;
            LOG.warn(warning);
        }
    }

    /** Scrapes by result: ok, error (connect / timeout / non-2xx / oversized), unparseable (no DCGM field). */
    private Bound scrapeCounter(Outcome outcome) {
        Bound counter = recorders.bound(Contract.GPU_SCRAPES, LabelValues.of(RESULT, outcome.tag()));
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
