package dev.llmsidecar.app;

import dev.llmsidecar.conversation.Conversations;
import dev.llmsidecar.config.HttpTarget;
import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.live.LiveHistory;
import dev.llmsidecar.live.LiveSources;
import dev.llmsidecar.live.LiveStats;
import dev.llmsidecar.measure.EndSeries;
import dev.llmsidecar.measure.InFlight;
import dev.llmsidecar.measure.LabelSources;
import dev.llmsidecar.measure.LiveSeries;
import dev.llmsidecar.measure.LiveWindows;
import dev.llmsidecar.measure.RequestReporter;
import dev.llmsidecar.measure.SaturationMetrics;
import dev.llmsidecar.measure.SloMetrics;
import dev.llmsidecar.measure.TrafficMetrics;
import dev.llmsidecar.measure.TrafficRecorder;
import dev.llmsidecar.measure.Upstream;
import dev.llmsidecar.measure.WorkMetrics;
import dev.llmsidecar.metrics.Buckets;
import dev.llmsidecar.metrics.GenAiConventions;
import dev.llmsidecar.metrics.HistogramMode;
import dev.llmsidecar.metrics.Recorder;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.otlp.OtelRecorder;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.otel.OtelPipeline;
import dev.llmsidecar.otel.RequestTracing;
import dev.llmsidecar.otel.TraceExemplars;
import dev.llmsidecar.slo.DeclaredTrust;
import dev.llmsidecar.slo.GoodputWindows;
import dev.llmsidecar.slo.SloPolicy;
import dev.llmsidecar.timeline.StallThresholds;
import dev.llmsidecar.timeline.StallWatch;
import dev.llmsidecar.trace.TraceRecorder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Builds the export side once (Prometheus metrics, OTLP metrics and spans, SLO policy, live windows) and hands it
 * to the proxy and the endpoints.
 */
public final class SidecarTelemetry implements AutoCloseable, LiveSources {

    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(SidecarTelemetry.class);

    private final InFlight inFlight;
    private final Buckets buckets;
    private final Recorders recorders;
    private final SloPolicy policy;
    private final GoodputWindows goodput;
    private final LiveWindows windows;
    private final RequestReporter reporter;
    private final TrafficRecorder traffic;
    private final OtelPipeline otel;
    private final RequestTracing tracing;
    private final SaturationMetrics saturation;
    /** Conversations and agent loops, or null while sidecar.conversations.enabled is off. */
    private final Conversations conversations;
    private final LiveHistory history;
    /** The trace recorder, or null while sidecar.trace.enabled is false. */
    private final TraceRecorder trace;
    private volatile java.util.function.Supplier<io.vertx.core.json.JsonObject> engineView;

    public SidecarTelemetry(PrometheusRegistry registry, SidecarConfig config, LongSupplier nanoClock) {
        this(registry, config, nanoClock, OtelPipeline.disabled());
    }

    public SidecarTelemetry(PrometheusRegistry registry, SidecarConfig config, LongSupplier nanoClock, OtelPipeline otel) {
        this.otel = otel;
        this.policy = new SloPolicy(config.slo());
        SidecarConfig.Metrics m = config.metrics();
        this.buckets = new Buckets(Buckets.preset(m.bucketPreset()), m.latencyBuckets().orElse(List.of()),
                m.tokenBuckets().orElse(List.of()), policy.thresholdsSeconds());
        // one contract, two backends: Prometheus always, OTLP when it is on
        List<Recorder> backends = new ArrayList<>();
        backends.add(new PrometheusRecorder(registry, buckets, new PrometheusRecorder.Histograms(
                HistogramMode.of(m.histograms()), m.nativeMaxBuckets(), TraceExemplars.of(otel))));
        GenAiConventions conventions = GenAiConventions.of(config.otel().semconv(), otel.semconvOptIn());
        if (otel.enabled()) {
            backends.add(new OtelRecorder(otel.openTelemetry().getMeter(OtelPipeline.METER_NAME), buckets,
                    otel.producedHistograms(), conventions));
        }
        LabelSources labels = new LabelSources(config);
        this.recorders = new Recorders(backends, labels.optionalSeries());
        String provider = config.otel().providerName();
        HttpTarget upstream = config.upstream().url();
        StallThresholds stall = StallThresholds.of(config.stall().firstTokenThreshold(), config.stall().threshold());
        TrafficMetrics trafficMetrics = new TrafficMetrics(recorders);
        FeatureEvents.register(trafficMetrics.proxy()); // what the features count through the seam, exported at 0
        this.inFlight = new InFlight(recorders, new StallWatch(stall, System::nanoTime)); // the exchanges' clock
        Upstream genaiUpstream = new Upstream(upstream.host(), upstream.port());
        this.goodput = new GoodputWindows(nanoClock, config.windows().durations());
        this.windows = new LiveWindows(recorders, config.windows(), nanoClock);
        this.history = new LiveHistory(LiveWindows.label(goodput.windows().get(0)));
        this.tracing = RequestTracing.of(otel, provider, conventions);
        this.saturation = new SaturationMetrics(recorders, config.saturation(), inFlight::count, nanoClock);
        this.conversations = config.conversations().enabled() ? new Conversations(recorders, config.conversations(),
                config.windows().driftShort(), nanoClock) : null;
        this.reporter = new RequestReporter(labels, trafficMetrics, new LiveSeries(recorders, genaiUpstream, inFlight),
                new EndSeries(recorders, genaiUpstream, stall), policy,
                declaredTrust(config.slo().declared(), nanoClock), new SloMetrics(recorders, policy.allObjectives(),
                policy.declared().enabled()), goodput, windows, saturation,
                new WorkMetrics(recorders, config.cost(), nanoClock), conversations);
        // the trace recorder follows every LLM exchange beside the metrics, when it is on (and nothing when off)
        this.trace = config.trace().enabled() ? TraceRecorder.startOrRefuse(config.trace(), recorders, nanoClock)
                : null;
        this.traffic = new TrafficRecorder(reporter, tracing.toUpstream(upstream.host(), upstream.port()), trace);
    }

    /**
     * Whose declared SLO targets count: the callers holding the token of sidecar.slo.declared.trust-token-file, or
     * every caller with trust-all; the start warns when declarations are read but refused from everyone, or taken from
     * anyone.
     */
    static DeclaredTrust declaredTrust(SidecarConfig.Slo.Declared config, LongSupplier nanoClock) {
        TokenFile file = config.trustTokenFile().filter(f -> !f.isBlank())
                .map(f -> new TokenFile("sidecar.slo.declared.trust-token-file", java.nio.file.Path.of(f), nanoClock))
                .orElse(null);
        if (config.enabled() && config.trustAll()) {
            LOG.warn("sidecar.slo.declared.trust-all=true: every caller's declared SLO targets are taken, so any client "
                    + "can fill the declared objectives with violations (docs/slo.md, \"Trusted callers\")");
        } else if (config.enabled() && file == null) {
            LOG.warn("sidecar.slo.declared.enabled without sidecar.slo.declared.trust-token-file: every declared SLO "
                    + "target is refused (handling=\"refused\") until a gateway is trusted (docs/slo.md)");
        }
        return DeclaredTrust.of(config, file == null ? v -> false : file::matches);
    }

    /** The trace recorder, or null while it is off (or its settings were refused). */
    public TraceRecorder trace() {
        return trace;
    }

    /** What the proxy reports to: the seam between the data path and everything above. */
    public TrafficObserver traffic() {
        return traffic;
    }

    /** Every backend of the metrics contract (Prometheus, and OTLP when it is on). */
    public Recorders recorders() {
        return recorders;
    }

    /** The histogram bounds of this sidecar (preset, overrides, SLO thresholds). */
    public Buckets buckets() {
        return buckets;
    }

    /** The LLM requests in flight, their wait for a first token and the open streams' stalls. */
    @Override
    public InFlight inFlight() {
        return inFlight;
    }

    public RequestReporter reporter() {
        return reporter;
    }

    public RequestTracing tracing() {
        return tracing;
    }

    private JsonObject lastPlotted; // on the history tick's thread only
    private long lastPlottedNanos;

    public OtelPipeline otel() {
        return otel;
    }

    public GoodputWindows goodput() {
        return goodput;
    }

    public LiveWindows windows() {
        return windows;
    }

    public SaturationMetrics saturation() {
        return saturation;
    }

    @Override
    public Conversations conversations() {
        return conversations;
    }

    /** What the live page plots, over the last minutes. */
    public LiveHistory history() {
        return history;
    }

    /**
     * Adds what the live page plots now (the shortest window) to its history. When nothing is in flight and no
     * request has ended within the window (plus one step) before the last full reading, the windows are empty and
     * that reading still holds: its windows' part is added again instead of merging every model's windows anew (an
     * idle sidecar's costliest work on this tick, 1 ms of CPU a second with 11 models).
     */
    public void sampleHistory(long wallMillis) {
        Duration window = goodput.windows().get(0);
        long now = System.nanoTime();
        JsonObject plotted;
        if (lastPlotted == null || inFlight.count() > 0
                || lastPlottedNanos - inFlight.lastEndNanos() <= window.plus(LiveHistory.STEP).toNanos()) {
            plotted = LiveStats.renderPlotted(this, window);
            lastPlotted = plotted;
            lastPlottedNanos = now;
        } else {
            // the windows' part as it was; the engine's (its scrape goes on) as it is now
            plotted = new JsonObject(new java.util.LinkedHashMap<>(lastPlotted.getMap()));
            JsonObject engine = engineView();
            if (engine != null) {
                plotted.put("engine", engine);
            }
        }
        history.sample(wallMillis, plotted);
    }

    /**
     * What the engine scraper knows, for the {@code engine} member of /q/llm; set once the scraper runs (the
     * scraper starts after telemetry exists, and is off with sidecar.engine.scrape-enabled=false).
     */
    public void engineView(java.util.function.Supplier<io.vertx.core.json.JsonObject> view) {
        this.engineView = view;
    }

    /** The engine member of /q/llm, or null while no scraper runs. */
    public io.vertx.core.json.JsonObject engineView() {
        var view = engineView;
        return view == null ? null : view.get();
    }

    public SloPolicy policy() {
        return policy;
    }

    /** Closes the trace files and flushes and stops the OTLP export (bounded by their timeouts). */
    @Override
    public void close() {
        if (trace != null) {
            trace.close();
        }
        otel.close();
    }
}
