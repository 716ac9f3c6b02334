package dev.llmsidecar.gpu;

import static dev.llmsidecar.metrics.Label.GPU;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.engine.ExpositionParser;
import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.Series;
import dev.llmsidecar.scrape.ScrapeLoop.Outcome;
import dev.llmsidecar.scrape.ScrapeLoop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.net.URI;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import java.util.function.UnaryOperator;
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

    private final Recorders recorders;
    private final String url;
    private final DcgmNormaliser normaliser;
    private final ScrapeLoop loop;

    private volatile State state = State.DOWN;

    // confined to the loop's context
    private final Set<String> registered = new HashSet<>();
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
        this.recorders = Objects.requireNonNull(recorders, "recorders");
        this.normaliser = Objects.requireNonNull(normaliser, "normaliser");
        this.loop = new ScrapeLoop(vertx, recorders, new ScrapeLoop.Target("DCGM exporter", url, interval, timeout,
                MAX_BODY_BYTES, ACCEPT, Contract.GPU_SCRAPES), this::read, () -> state = State.DOWN);
        this.url = url.toString();
        recorders.observe(Contract.GPU_UP, () -> state.up() ? 1 : 0);
    }

    /** Starts scraping now and then every interval. Idempotent; completes once scheduled. */
    public Future<Void> start() {
        return loop.start();
    }

    /**
     * Stops scraping, abandons a scrape in flight and reports the GPUs as unknown (meters stay registered).
     * Idempotent; completes once stopped, without blocking.
     */
    public Future<Void> stop() {
        return loop.stop();
    }

    /** Whether the last scrape succeeded and had GPUs of this pod. */
    public boolean up() {
        return state.up();
    }

    /** This pod's GPUs at the last scrape, in GPU order; empty while down. */
    public List<GpuReading> latest() {
        return List.copyOf(state.gpus().values());
    }

    /** A 2xx answer: this pod's GPUs (up when it has any), or unparseable when it is not a DCGM exporter's. */
    private Outcome read(String body) {
        DcgmSnapshot snapshot = normaliser.normalise(ExpositionParser.parse(body, DcgmNormaliser::relevant).samples());
        if (!snapshot.recognised()) {
            warnOnce("the answer of " + url + " has none of DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_GR_ENGINE_ACTIVE, "
                    + "DCGM_FI_DEV_FB_USED, DCGM_FI_DEV_FB_FREE, DCGM_FI_DEV_POWER_USAGE: is it a DCGM exporter?");
            state = State.DOWN;
            return Outcome.UNPARSEABLE;
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
        return Outcome.OK;
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

    /**
     * The scraper the configuration asks for, not started; null (and the recorders not even asked for) without
     * {@code dcgm-url}. The pod is {@code sidecar.gpu.pod}, else the environment's HOSTNAME (the pod name on
     * Kubernetes).
     */
    public static DcgmScraper configured(Vertx vertx, Supplier<Recorders> recorders, SidecarConfig.Gpu gpu,
            UnaryOperator<String> env) {
        if (gpu.dcgmUrl().isEmpty()) {
            return null;
        }
        String pod = gpu.pod().filter(p -> !p.isBlank()).orElseGet(() -> env.apply("HOSTNAME"));
        if (pod == null || pod.isBlank()) {
            LOG.warn("sidecar.gpu.dcgm-url is set but neither sidecar.gpu.pod nor HOSTNAME is: no GPU can be "
                    + "selected (set sidecar.gpu.pod to this pod's name, or * for every GPU of the exporter)");
        } else {
            LOG.infof("Scraping the DCGM exporter at %s for the GPUs of pod %s", gpu.dcgmUrl().get(), pod);
        }
        return new DcgmScraper(vertx, recorders.get(), gpu.dcgmUrl().get(), new DcgmNormaliser(pod),
                gpu.scrapeInterval(), gpu.scrapeTimeout());
    }
}
