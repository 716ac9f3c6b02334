package dev.llmsidecar.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.measure.ModelLabels;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.support.Waits;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Requests that name no model (TGI, llama.cpp native) carry the model the engine says it serves: through the proxy
 * over loopback, with the discovery asking the simulated engine as the application does.
 */
class ModelDiscoveryTest {

    private static final EngineBehaviour ENGINE = EngineBehaviour.defaults()
            .withTiming(Duration.ofMillis(5), Duration.ofMillis(1)).withOutputTokens(4);
    private static final Duration INTERVAL = Duration.ofMillis(50);
    private static final String TGI_STREAM = "{\"inputs\":\"What is Deep Learning?\",\"parameters\":{\"max_new_tokens\":4}}";
    private static final String LLAMACPP = "{\"prompt\":\"Once upon\",\"n_predict\":4,\"stream\":true}";

    /** The fixture's proxy, and the discovery on its Vert.x asking {@code path} of the engine, labelling through it. */
    private record Discovering(ProxyFixture f, ServedModels models) implements AutoCloseable {

        static Discovering start(Map<String, String> config, String path) {
            // nothing pinned: what has a label of its own here is what the engine listed or answered
            var unpinned = new java.util.HashMap<>(config);
            unpinned.putIfAbsent("sidecar.metrics.pinned-models", "");
            ProxyFixture f = new ProxyFixture(ENGINE, unpinned);
            ModelLabels labels = f.telemetry.reporter().labelSources().models();
            ServedModels models = new ServedModels(f.vertx, f.telemetry.recorders(),
                    URI.create("http://127.0.0.1:" + f.enginePort + path), INTERVAL, Duration.ofSeconds(3),
                    labels::listed);
            ProxyFixture.await(models.start());
            return new Discovering(f, models);
        }

        void eventuallyServing(String model) {
            Waits.eventually(f.registry, "llm_sidecar_engine_model", Duration.ofSeconds(10),
                    "the engine's model " + model, () -> java.util.Objects.equals(
                            f.telemetry.reporter().labelSources().models().serving(), model));
        }

        /** Requests of the wire format at {@code path}, as the sidecar counted them under {@code model}. */
        double requests(String model, String operation, boolean streaming) {
            return f.settledScrape().sum("llm_sidecar_requests_total", "model", model, "operation", operation,
                    "streaming", Boolean.toString(streaming), "outcome", "ok");
        }

        void post(String path, String body) {
            assertThat(f.post(f.proxyPort, path, body, Map.of()).status()).isEqualTo(200);
        }

        void rejected(String path, String body) {
            assertThat(f.post(f.proxyPort, path, body, Map.of("x-sim-status", "404")).status()).isEqualTo(404);
        }

        @Override
        public void close() {
            ProxyFixture.await(models.stop());
            f.close();
        }
    }

    @Test
    void tgiRequestsCarryTheEnginesModel() {
        try (Discovering d = Discovering.start(Map.of(), "/info")) {
            d.eventuallyServing("sim-llama-8b");
            d.post("/generate_stream", TGI_STREAM);
            d.post("/generate", TGI_STREAM);
            assertThat(d.requests("sim-llama-8b", "text_completion", true)).isEqualTo(1.0);
            assertThat(d.requests("sim-llama-8b", "text_completion", false)).isEqualTo(1.0);
            Scrape s = d.f().settledScrape();
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count", "model", "sim-llama-8b",
                    "streaming", "true")).isEqualTo(1.0);
            assertThat(s.has("llm_sidecar_requests_total", "model", "unknown")).isFalse();
            assertThat(s.sum("llm_sidecar_engine_model_probes_total", "result", "ok")).isGreaterThanOrEqualTo(1.0);
        }
    }

    @Test
    void llamaCppNativeRequestsCarryTheEnginesModel() {
        try (Discovering d = Discovering.start(Map.of(), "/props")) {
            d.f().engine.serving("tiny");
            d.eventuallyServing("tiny");
            d.post("/completion", LLAMACPP);
            d.post("/completion", "{\"prompt\":\"Once upon\",\"n_predict\":4}");
            assertThat(d.requests("tiny", "text_completion", true)).isEqualTo(1.0);
            assertThat(d.requests("tiny", "text_completion", false)).isEqualTo(1.0);
        }
    }

    @Test
    void aModelTheClientNamesIsKept() {
        try (Discovering d = Discovering.start(ProxyFixture.pinned("m-named"), "/v1/models")) {
            d.eventuallyServing("sim-llama-8b");
            d.post("/v1/chat/completions", "{\"model\":\"m-named\",\"stream\":true,\"max_tokens\":4,"
                    + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
            d.post("/completion", "{\"model\":\"m-named\",\"prompt\":\"Once upon\",\"n_predict\":4,\"stream\":true}");
            assertThat(d.requests("m-named", "chat", true)).isEqualTo(1.0);
            assertThat(d.requests("m-named", "text_completion", true)).isEqualTo(1.0);
            assertThat(d.requests("sim-llama-8b", "text_completion", true)).isZero();
        }
    }

    @Test
    void unknownWhenTheEngineDoesNotSayOrServesSeveral() {
        try (Discovering d = Discovering.start(Map.of(), "/v1/models")) {
            d.eventuallyServing("sim-llama-8b");
            d.f().engine.serving("base-8b", "lora-sql");
            d.eventuallyServing(null);
            d.post("/generate_stream", TGI_STREAM);
            assertThat(d.requests("unknown", "text_completion", true)).isEqualTo(1.0);
            assertThat(d.models().names()).containsExactly("base-8b", "lora-sql");

            d.f().engine.serving();
            Waits.eventually(d.f().registry, "llm_sidecar_engine_model", Duration.ofSeconds(10), "an empty list",
                    () -> d.models().names().isEmpty());
            d.post("/generate_stream", TGI_STREAM);
            assertThat(d.requests("unknown", "text_completion", true)).isEqualTo(2.0);
        }
        // an engine without the endpoint (404: e.g. TGI before /v1/models) says nothing either
        try (Discovering d = Discovering.start(Map.of(), "/no-such-listing")) {
            Waits.eventually(d.f().registry, "llm_sidecar_engine_model", Duration.ofSeconds(10), "a failed probe",
                    () -> d.f().scrape().sum("llm_sidecar_engine_model_probes_total", "result", "error") >= 1.0);
            d.post("/completion", LLAMACPP);
            assertThat(d.requests("unknown", "text_completion", true)).isEqualTo(1.0);
        }
    }

    @Test
    void aNewServedModelNamesTheRequestsFromThen() {
        try (Discovering d = Discovering.start(Map.of(), "/v1/models")) {
            d.eventuallyServing("sim-llama-8b");
            d.post("/generate_stream", TGI_STREAM);
            d.f().engine.serving("sim-qwen-7b"); // the engine restarted with another model
            d.eventuallyServing("sim-qwen-7b");
            d.post("/generate_stream", TGI_STREAM);
            d.post("/generate_stream", TGI_STREAM);
            assertThat(d.requests("sim-llama-8b", "text_completion", true)).isEqualTo(1.0);
            assertThat(d.requests("sim-qwen-7b", "text_completion", true)).isEqualTo(2.0);
        }
    }

    @Test
    void theServedModelKeepsItsLabelPastTheCap() {
        try (Discovering d = Discovering.start(Map.of("sidecar.metrics.max-models", "2"), "/v1/models")) {
            d.eventuallyServing("sim-llama-8b");
            for (String model : List.of("flood-1", "flood-2", "flood-3", "flood-4")) {
                d.post("/v1/completions", "{\"model\":\"" + model + "\",\"prompt\":\"hi\",\"max_tokens\":4}");
            }
            // each first answer ends as other and takes a slot while there is one: flood-1 and flood-2 did
            d.post("/v1/completions", "{\"model\":\"flood-1\",\"prompt\":\"hi\",\"max_tokens\":4}");
            d.post("/v1/completions", "{\"model\":\"flood-3\",\"prompt\":\"hi\",\"max_tokens\":4}");
            d.post("/generate", TGI_STREAM);
            d.post("/v1/completions", "{\"model\":\"sim-llama-8b\",\"prompt\":\"hi\",\"max_tokens\":4}");
            Scrape s = d.f().settledScrape();
            assertThat(s.samples("llm_sidecar_requests_total").stream().map(x -> x.labels().get("model")).distinct()
                    .sorted()).containsExactly("flood-1", "other", "sim-llama-8b");
            assertThat(d.requests("other", "text_completion", false)).isEqualTo(5.0);
            assertThat(d.requests("flood-1", "text_completion", false)).isEqualTo(1.0);
            assertThat(d.requests("sim-llama-8b", "text_completion", false)).isEqualTo(2.0);
        }
    }

    /**
     * Issue 42: 50 model names the engine rejected took every slot, and a real model was then exported as other. A
     * slot is taken only by a name the engine listed or answered with 2xx: 60 rejected names leave them all free.
     */
    @Test
    void rejectedModelNamesLeaveTheSlotsFreeForARealOne() {
        try (Discovering d = Discovering.start(Map.of("sidecar.metrics.max-models", "50"), "/v1/models")) {
            d.eventuallyServing("sim-llama-8b");
            for (int i = 0; i < 60; i++) {
                d.rejected("/v1/completions", "{\"model\":\"typo-" + i + "\",\"prompt\":\"hi\",\"max_tokens\":4}");
            }
            d.post("/v1/completions", "{\"model\":\"sim-llama-8b\",\"prompt\":\"hi\",\"max_tokens\":4}");
            d.post("/v1/completions", "{\"model\":\"real-model\",\"prompt\":\"hi\",\"max_tokens\":4}");
            d.post("/v1/completions", "{\"model\":\"real-model\",\"prompt\":\"hi\",\"max_tokens\":4}");
            Scrape s = d.f().settledScrape();
            assertThat(s.samples("llm_sidecar_requests_total").stream().map(x -> x.labels().get("model")).distinct()
                    .sorted()).containsExactly("other", "real-model", "sim-llama-8b");
            assertThat(s.sum("llm_sidecar_requests_total", "model", "other", "outcome", "upstream_error"))
                    .isEqualTo(60.0);
            assertThat(d.requests("sim-llama-8b", "text_completion", false)).as("listed: its own from the first")
                    .isEqualTo(1.0);
            assertThat(d.requests("real-model", "text_completion", false)).as("its own from its second request")
                    .isEqualTo(1.0);
        }
    }
}
