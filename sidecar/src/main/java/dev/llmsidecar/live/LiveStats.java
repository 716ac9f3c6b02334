package dev.llmsidecar.live;

import dev.llmsidecar.measure.LiveJson;
import dev.llmsidecar.measure.LiveWindows;
import dev.llmsidecar.slo.GoodputWindows;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The JSON document served at {@code /q/llm} on the management port: what an SRE sees at once with
 * {@code kubectl port-forward} and {@code curl}. Documented in docs/slo.md. What is not known is left out rather than
 * written as null: a window without samples, a metric without any such window, a ratio without a denominator.
 */
public final class LiveStats {

    private LiveStats() {
    }

    public static JsonObject render(LiveSources t) {
        JsonObject root = load(t);
        JsonObject windows = new JsonObject();
        t.goodput().coverage().forEach((w, c) -> windows.put(LiveWindows.label(w), new JsonObject()
                .put("observed_seconds", round(c.observedNanos() / 1e9)).put("covers", round(c.covers()))));
        root.put("windows", windows);
        JsonObject models = new JsonObject();
        t.windows().renderRequests(models);
        t.windows().renderLatency(models, t.goodput().windows());
        t.windows().renderDrift(models);
        renderGoodput(models, t.goodput().snapshot());
        root.put("models", models);
        root.put("saturation", t.saturation().render());
        if (t.conversations() != null) {
            root.put("conversations", t.conversations().render());
        }
        JsonObject engine = t.engineView();
        if (engine != null) {
            root.put("engine", engine);
        }
        return root;
    }

    /**
     * What the live page plots over time, in the same shape as {@link #render}: the load, and per model the latency
     * percentiles and goodput of the {@code window} only.
     */
    public static JsonObject renderPlotted(LiveSources t, Duration window) {
        JsonObject root = load(t);
        JsonObject models = new JsonObject();
        t.windows().renderLatency(models, List.of(window));
        models.forEach(m -> ((JsonObject) m.getValue()).remove("e2e")); // not plotted
        Map<String, Map<String, Map<Duration, GoodputWindows.Counts>>> goodput = t.goodput().snapshot();
        goodput.values().forEach(classes -> classes.values().forEach(perWindow -> perWindow.keySet().retainAll(List.of(window))));
        renderGoodput(models, goodput);
        root.put("models", models);
        JsonObject engine = t.engineView();
        if (engine != null) {
            root.put("engine", engine);
        }
        return root;
    }

    private static JsonObject load(LiveSources t) {
        var stalls = t.inFlight().scan();
        return new JsonObject()
                .put("in_flight", t.inFlight().count())
                .put("waiting_first_token", t.inFlight().waitingFirstToken())
                .put("max_in_flight", t.inFlight().max())
                .put("stalled_streams", stalls.stalled())
                .put("longest_silence_first_token_seconds",
                        stalls.longestSilenceNanos(dev.llmsidecar.timeline.StreamPhase.FIRST_TOKEN) / 1e9)
                .put("longest_silence_generation_seconds",
                        stalls.longestSilenceNanos(dev.llmsidecar.timeline.StreamPhase.GENERATION) / 1e9);
    }

    /** Goodput per model and SLO class; a window without requests is left out, rates over what it observed. */
    private static void renderGoodput(JsonObject models, Map<String, Map<String, Map<Duration, GoodputWindows.Counts>>> goodput) {
        goodput.forEach((name, perClass) -> {
            JsonObject classes = new JsonObject();
            perClass.forEach((sloClass, windows) -> {
                JsonObject perWindow = new JsonObject();
                windows.forEach((w, c) -> {
                    if (c.requests() > 0) {
                        JsonObject o = new JsonObject().put("requests", c.requests()).put("good_requests", c.goodRequests())
                                .put("attainment", c.attainment())
                                .put("output_tokens", c.outputTokens()).put("good_output_tokens", c.goodOutputTokens());
                        LiveJson.putFinite(o, "goodput_requests_per_second", c.goodRequestsPerSecond());
                        LiveJson.putFinite(o, "goodput_tokens_per_second", c.goodTokensPerSecond());
                        perWindow.put(LiveWindows.label(w), o);
                    }
                });
                if (!perWindow.isEmpty()) {
                    classes.put(sloClass, perWindow);
                }
            });
            if (!classes.isEmpty()) {
                LiveJson.model(models, name).put("goodput", classes);
            }
        });
    }

    /** To a thousandth: what a reader needs of a span or a share. */
    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }
}
