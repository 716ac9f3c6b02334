package dev.llmsidecar.measure;

import static dev.llmsidecar.metrics.Label.METRIC;
import static dev.llmsidecar.metrics.Label.MODEL;
import static dev.llmsidecar.metrics.Label.WINDOW;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.window.LatencyWindows;
import dev.llmsidecar.window.Metric;
import dev.llmsidecar.window.SlidingCounts;
import dev.llmsidecar.window.WindowStats;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Sliding-window percentiles of successful requests per model (HdrHistogram), served as JSON at /q/llm and as
 * window-p99 and p99-drift gauges for alerting without a static threshold, and the finished requests per model over
 * the same windows. See docs/slo.md.
 */
public final class LiveWindows {

    private static final List<Metric> DRIFT_METRICS = List.of(Metric.TTFT, Metric.TPOT);

    private final Recorders recorders;
    private final LatencyWindows windows;
    private final SidecarConfig.Windows config;
    private final Set<String> gaugedModels = ConcurrentHashMap.newKeySet();
    private final LongSupplier clock;
    /** Finished requests per model: all, failed (upstream_error, upstream_broken), cancelled by the client. */
    private final SlidingCounts outcomes;
    // one scrape reads many window gauges: merge the histograms once per scrape, not once per gauge
    private volatile Map<String, Map<Metric, Map<Duration, WindowStats>>> cached;
    private volatile long cachedAt;

    public LiveWindows(Recorders recorders, SidecarConfig.Windows config, LongSupplier nanoClock) {
        this.recorders = recorders;
        this.config = config;
        List<Duration> durations = config.durations();
        if (!durations.contains(config.driftShort()) || !durations.contains(config.driftBaseline())) {
            throw new IllegalArgumentException("sidecar.windows.drift-short and drift-baseline must be among "
                    + "sidecar.windows.durations " + durations);
        }
        if (config.driftShort().compareTo(config.driftBaseline()) >= 0) {
            throw new IllegalArgumentException("sidecar.windows.drift-short must be shorter than drift-baseline");
        }
        this.windows = new LatencyWindows(nanoClock, durations);
        this.outcomes = new SlidingCounts(nanoClock, durations, 3);
        this.clock = nanoClock;
    }

    private Map<String, Map<Metric, Map<Duration, WindowStats>>> snapshot() {
        long now = clock.getAsLong();
        Map<String, Map<Metric, Map<Duration, WindowStats>>> s = cached;
        if (s == null || now - cachedAt > 1_000_000_000L) {
            s = windows.snapshot();
            cached = s;
            cachedAt = now;
        }
        return s;
    }

    /**
     * Only successful requests: failures have their own series and would blur the latency percentiles. TTFT of
     * streaming requests only: a response that does not stream has its E2E as TTFT, which would poison the TTFT
     * p99 and its drift.
     */
    public void record(RequestLabels labels, RequestResult r) {
        String model = labels.model(); // windows and their gauges are per model
        Outcome o = r.outcome();
        outcomes.add(model, 1, o == Outcome.UPSTREAM_ERROR || o == Outcome.UPSTREAM_BROKEN ? 1 : 0,
                o == Outcome.CLIENT_CANCELLED ? 1 : 0);
        if (o != Outcome.OK) {
            return;
        }
        if (gaugedModels.add(model)) {
            registerGauges(model);
        }
        if (r.streaming() && r.ttftNanos() >= 0) {
            windows.record(model, Metric.TTFT, r.ttftNanos());
        }
        if (r.tpotNanos() >= 0) {
            windows.record(model, Metric.TPOT, r.tpotNanos());
        }
        windows.record(model, Metric.E2E, r.e2eNanos());
        r.itl().forEach((seconds, count) -> windows.record(model, Metric.ITL, Math.round(seconds * 1e9), count));
    }

    private void registerGauges(String model) {
        for (Metric m : DRIFT_METRICS) {
            String metric = m.name().toLowerCase(Locale.ROOT);
            for (Duration w : config.durations()) {
                recorders.observe(Contract.WINDOW_P99, () -> seconds(
                        snapshot().getOrDefault(model, Map.of()).getOrDefault(m, Map.of()).get(w)),
                        LabelValues.of(MODEL, model).and(METRIC, metric).and(WINDOW, label(w)));
            }
            recorders.observe(Contract.DRIFT, () -> windows.drift(model, m, config.driftShort(),
                    config.driftBaseline(), config.driftMinSamples()), LabelValues.of(MODEL, model).and(METRIC, metric));
        }
    }

    private static double seconds(WindowStats s) {
        return s == null ? Double.NaN : s.p99();
    }

    /**
     * Adds the percentiles of each model, metric and window among {@code some} to {@code models} (a JSON object per
     * model, made if missing). A window without samples is left out, and a metric without any such window.
     */
    public void renderLatency(JsonObject models, List<Duration> some) {
        windows.snapshot(some).forEach((model, perMetric) -> perMetric.forEach((metric, perWindow) -> {
            JsonObject w = new JsonObject();
            perWindow.forEach((d, s) -> {
                if (!s.isEmpty()) {
                    JsonObject stats = new JsonObject().put("count", s.count());
                    LiveJson.putFinite(stats, "mean", s.mean());
                    LiveJson.putFinite(stats, "p50", s.p50());
                    LiveJson.putFinite(stats, "p90", s.p90());
                    LiveJson.putFinite(stats, "p95", s.p95());
                    LiveJson.putFinite(stats, "p99", s.p99());
                    LiveJson.putFinite(stats, "p999", s.p999());
                    LiveJson.putFinite(stats, "max", s.max());
                    w.put(label(d), stats);
                }
            });
            if (!w.isEmpty()) {
                LiveJson.model(models, model).put(metric.name().toLowerCase(Locale.ROOT), w);
            }
        }));
    }

    /** Adds each model's known p99 drift ratios; none while either window is too thin. */
    public void renderDrift(JsonObject models) {
        for (String model : windows.models()) {
            JsonObject drift = new JsonObject();
            for (Metric d : DRIFT_METRICS) {
                LiveJson.putFinite(drift, d.name().toLowerCase(Locale.ROOT), windows.drift(model, d,
                        config.driftShort(), config.driftBaseline(), config.driftMinSamples()));
            }
            if (!drift.isEmpty()) {
                LiveJson.model(models, model).put("drift", drift);
            }
        }
    }

    /** Adds each model's finished requests per window (rate over what the window observed, errors, cancels). */
    public void renderRequests(JsonObject models) {
        long now = outcomes.now();
        outcomes.counts(now).forEach((model, perWindow) -> {
            JsonObject w = new JsonObject();
            perWindow.forEach((d, c) -> {
                if (c[0] > 0) {
                    JsonObject counts = new JsonObject().put("count", c[0]);
                    LiveJson.putFinite(counts, "per_second", SlidingCounts.perSecond(c[0], outcomes.observedNanos(d, now)));
                    w.put(label(d), counts.put("errors", c[1]).put("cancelled", c[2]));
                }
            });
            if (!w.isEmpty()) {
                LiveJson.model(models, model).put("requests", w);
            }
        });
    }

    /** "1m", "5m", "1h", "90s": the window names used in JSON and labels. */
    public static String label(Duration d) {
        long s = d.toSeconds();
        if (s % 3600 == 0) {
            return s / 3600 + "h";
        }
        if (s % 60 == 0) {
            return s / 60 + "m";
        }
        return s + "s";
    }
}
