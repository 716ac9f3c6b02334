package dev.llmsidecar.measure;

import io.vertx.core.json.JsonObject;

/** What the views of /q/llm share: a model's object, and numbers JSON can hold. */
public final class LiveJson {

    private LiveJson() {
    }

    /** The object of {@code name} in {@code models}, made if missing. */
    public static JsonObject model(JsonObject models, String name) {
        JsonObject model = models.getJsonObject(name);
        if (model == null) {
            model = new JsonObject();
            models.put(name, model);
        }
        return model;
    }

    /** JSON has no NaN: an unknown value is left out. */
    public static JsonObject putFinite(JsonObject o, String key, double v) {
        return Double.isFinite(v) ? o.put(key, v) : o;
    }
}
