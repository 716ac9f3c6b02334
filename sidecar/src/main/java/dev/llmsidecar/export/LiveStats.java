package dev.llmsidecar.export;

import dev.llmsidecar.slo.GoodputWindows;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;

/**
 * The JSON document served at {@code /q/llm} on the management port: what an SRE sees at once with
 * {@code kubectl port-forward} and {@code curl}. Documented in docs/slo.md.
 */
public final class LiveStats {

    private LiveStats() {
    }

    public static JsonObject render(SidecarTelemetry t) {
        JsonObject root = new JsonObject()
                .put("in_flight", t.metrics().inFlight())
                .put("waiting_first_token", t.metrics().waitingFirstToken())
                .put("max_in_flight", t.metrics().maxInFlight());
        JsonObject models = new JsonObject();
        t.windows().render(models);
        for (Map.Entry<String, Map<String, Map<Duration, GoodputWindows.Counts>>> m : t.goodput().snapshot().entrySet()) {
            JsonObject model = models.getJsonObject(m.getKey());
            if (model == null) {
                model = new JsonObject();
                models.put(m.getKey(), model);
            }
            JsonObject classes = new JsonObject();
            m.getValue().forEach((sloClass, windows) -> {
                JsonObject perWindow = new JsonObject();
                windows.forEach((w, c) -> perWindow.put(LiveWindows.label(w), new JsonObject()
                        .put("requests", c.requests()).put("good_requests", c.goodRequests())
                        .put("attainment", finite(c.attainment()))
                        .put("output_tokens", c.outputTokens()).put("good_output_tokens", c.goodOutputTokens())
                        .put("goodput_requests_per_second", c.goodRequests() / (double) w.toSeconds())
                        .put("goodput_tokens_per_second", c.goodOutputTokens() / (double) w.toSeconds())));
                classes.put(sloClass, perWindow);
            });
            model.put("goodput", classes);
        }
        root.put("models", models);
        root.put("saturation", t.saturation().render());
        JsonObject engine = t.engineView();
        if (engine != null) {
            root.put("engine", engine);
        }
        return root;
    }

    /** JSON has no NaN: unknown values are null. */
    static Object finite(double v) {
        return Double.isFinite(v) ? v : null;
    }
}
