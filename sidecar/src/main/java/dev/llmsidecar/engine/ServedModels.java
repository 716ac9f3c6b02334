package dev.llmsidecar.engine;

import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.scrape.ScrapeLoop.Outcome;
import dev.llmsidecar.scrape.ScrapeLoop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Asks the engine which models it serves, at start and every interval, on the shared scrape loop, so that a request
 * naming no model (TGI, llama.cpp native) is labelled with the model that answers it. Reads the answer of every
 * engine's listing: OpenAI's {@code GET /v1/models} (vLLM, SGLang, TGI, llama.cpp, Ollama), TGI's {@code /info},
 * llama.cpp's {@code /props} and Ollama's {@code /api/tags}. One model is the served model; none, several, or an
 * answer not understood is no served model (then {@code unknown} is honest). A failed request keeps what was known:
 * an outage is not a change of model.
 */
public final class ServedModels {

    /** A listing is a few KiB; Ollama's with hundreds of models well under this. */
    public static final int MAX_BODY_BYTES = 1024 * 1024;
    /** Names kept for /q/llm: enough to see what several are. */
    static final int MAX_LISTED = 16;

    private final ScrapeLoop loop;
    private final Consumer<List<String>> listed;
    private volatile List<String> names = List.of();

    /**
     * @param listed told the names of the engine's answer whenever it changes them (empty when it names none); called
     *     on the loop's context
     */
    public ServedModels(Vertx vertx, Recorders recorders, URI url, Duration interval, Duration timeout,
            Consumer<List<String>> listed) {
        this.listed = Objects.requireNonNull(listed, "listed");
        this.loop = new ScrapeLoop(vertx, recorders, new ScrapeLoop.Target("engine models", url, interval, timeout,
                MAX_BODY_BYTES, "application/json", Contract.ENGINE_MODEL_PROBES), this::read, () -> { });
    }

    public Future<Void> start() {
        return loop.start();
    }

    public Future<Void> stop() {
        return loop.stop();
    }

    /** What the engine said it serves at its last answer (at most {@value #MAX_LISTED} names); empty if nothing. */
    public List<String> names() {
        return names;
    }

    private Outcome read(String body) {
        List<String> found = namesIn(body);
        List<String> now = found == null ? List.of() : found;
        if (!now.equals(names)) {
            names = now;
            listed.accept(now);
        }
        return found == null ? Outcome.UNPARSEABLE : Outcome.OK;
    }

    /**
     * The model names in an engine's answer, distinct, in its order, at most {@value #MAX_LISTED} (past one, the
     * count no longer matters: several is several); null when the answer is not a listing this class knows.
     */
    static List<String> namesIn(String body) {
        JsonObject json;
        try {
            json = new JsonObject(body);
        } catch (RuntimeException notAnObject) {
            return null;
        }
        Set<String> names = new LinkedHashSet<>();
        if (json.getValue("data") instanceof JsonArray data) { // OpenAI's list (llama.cpp also adds Ollama's)
            collect(data, "id", names);
        } else if (json.getValue("models") instanceof JsonArray models) { // Ollama /api/tags
            collect(models, "name", names);
        } else if (json.getValue("model_id") instanceof String id) { // TGI /info
            add(id, names);
        } else if (json.getValue("model_path") instanceof String path) { // llama.cpp /props: its alias, else the path
            add(json.getValue("model_alias") instanceof String alias && !alias.isBlank() ? alias : path, names);
        } else {
            return null;
        }
        return List.copyOf(names);
    }

    private static void collect(JsonArray entries, String member, Set<String> names) {
        for (Object entry : entries) {
            if (entry instanceof JsonObject o && o.getValue(member) instanceof String name) {
                add(name, names);
            }
        }
    }

    private static void add(String name, Set<String> names) {
        if (!name.isBlank() && names.size() < MAX_LISTED) {
            names.add(name);
        }
    }
}
