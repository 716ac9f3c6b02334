package dev.llmsidecar.measure;

import static dev.llmsidecar.metrics.Contract.SATURATION_KNEE;
import static dev.llmsidecar.metrics.Contract.SATURATION_LOAD;
import static dev.llmsidecar.metrics.Contract.TPOT_BY_LOAD;
import static dev.llmsidecar.metrics.Contract.TTFT_BY_LOAD;
import static dev.llmsidecar.metrics.Label.LOAD_BAND;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.saturation.KneeEstimator;
import dev.llmsidecar.saturation.LoadBand;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * Latency by the load a request met and the saturation knee (sidecar.saturation): the by-load histograms, the knee
 * and load-ratio gauges, and the {@code saturation} member of /q/llm. Only successful streaming requests count: a
 * failure's latency says nothing about load, and a response that does not stream has no TTFT of its own.
 */
public final class SaturationMetrics {

    private static final double NS = 1e9;

    private final Recorders recorders;
    private final KneeEstimator estimator;
    private final Integer configuredKnee;
    private final IntSupplier inFlight;
    // bound on first use: a band no request arrived in exports no series
    private final AtomicReferenceArray<Bound> ttftByBand = new AtomicReferenceArray<>(LoadBand.count());
    private final AtomicReferenceArray<Bound> tpotByBand = new AtomicReferenceArray<>(LoadBand.count());

    public SaturationMetrics(Recorders recorders, SidecarConfig.Saturation config, IntSupplier inFlight,
            LongSupplier nanoClock) {
        this.recorders = recorders;
        this.inFlight = inFlight;
        this.configuredKnee = config.knee().orElse(null);
        if (configuredKnee != null && configuredKnee < 1) {
            throw new IllegalArgumentException("sidecar.saturation.knee must be at least 1: " + configuredKnee);
        }
        this.estimator = new KneeEstimator(nanoClock, config.window(), config.minSamples(), config.hold());
        recorders.observe(SATURATION_KNEE, this::knee);
        recorders.observe(SATURATION_LOAD, () -> inFlight.getAsInt() / knee());
    }

    /** Records a finished request that arrived with {@code loadAtArrival} LLM requests in flight (itself included). */
    public void record(int loadAtArrival, RequestResult r) {
        if (r.outcome() != Outcome.OK || !r.streaming()) {
            return;
        }
        LoadBand band = LoadBand.of(loadAtArrival);
        if (r.ttftNanos() >= 0) {
            bound(ttftByBand, band, true).record(r.ttftNanos() / NS);
        }
        if (r.tpotNanos() >= 0) {
            bound(tpotByBand, band, false).record(r.tpotNanos() / NS);
        }
        estimator.record(band, r.ttftNanos(), r.tpotNanos());
    }

    private Bound bound(AtomicReferenceArray<Bound> slots, LoadBand band, boolean ttft) {
        Bound b = slots.get(band.index());
        if (b == null) {
            // two event loops may bind at once: both get the same meters
            b = recorders.ended(ttft ? TTFT_BY_LOAD : TPOT_BY_LOAD, true, LabelValues.of(LOAD_BAND, band.label()));
            slots.set(band.index(), b);
        }
        return b;
    }

    /** The knee in requests in flight: configured, else the live estimate; NaN when neither is known. */
    public double knee() {
        return knee(estimator.estimate());
    }

    private double knee(KneeEstimator.Estimate e) {
        return configuredKnee != null ? configuredKnee : e.kneeRequests();
    }

    /** The {@code saturation} member of /q/llm (docs/slo.md); what is not known yet is left out. */
    public JsonObject render() {
        KneeEstimator.Estimate e = estimator.estimate();
        double knee = knee(e);
        int now = inFlight.getAsInt();
        JsonArray bands = new JsonArray();
        for (KneeEstimator.BandStats b : e.bands()) {
            JsonObject band = new JsonObject().put("band", b.band().label());
            if (b.band().finiteUpper() != null) {
                band.put("upper", b.band().finiteUpper());
            }
            band.put("count", b.ttftCount());
            LiveJson.putFinite(band, "ttft_p50", b.ttftP50());
            LiveJson.putFinite(band, "ttft_p90", b.ttftP90());
            band.put("tpot_count", b.tpotCount());
            LiveJson.putFinite(band, "tpot_p50", b.tpotP50());
            LiveJson.putFinite(band, "tpot_p90", b.tpotP90());
            bands.add(band);
        }
        JsonObject out = new JsonObject().put("in_flight", now);
        if (!Double.isNaN(knee)) {
            out.put("knee_requests", knee).put("knee_source", configuredKnee != null ? "configured"
                    : e.inWindow() ? "estimated" : "held");
            LiveJson.putFinite(out, "load_ratio", now / knee);
        }
        return out.put("bands", bands);
    }
}
