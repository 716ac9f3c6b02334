package dev.llmsidecar.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What each engine's listing of its models says it serves. */
class ServedModelsTest {

    @Test
    void openAiModelList() {
        // vLLM 0.11 (--served-model-name), SGLang and TGI answer GET /v1/models like this
        assertThat(ServedModels.namesIn("""
                {"object":"list","data":[{"id":"meta-llama/Llama-3.1-8B-Instruct","object":"model","created":1,
                "owned_by":"vllm","root":"meta-llama/Llama-3.1-8B-Instruct","parent":null,"max_model_len":8192}]}"""))
                .containsExactly("meta-llama/Llama-3.1-8B-Instruct");
    }

    @Test
    void llamaCppModelList() {
        // llama-server (de3ff815ea7d, -a tiny) GET /v1/models: Ollama's "models" and OpenAI's "data" in one answer
        assertThat(ServedModels.namesIn("""
                {"models":[{"name":"tiny","model":"tiny","modified_at":"","size":"","digest":"","type":"model"}],
                "object":"list","data":[{"id":"tiny","aliases":["tiny"],"tags":[],"object":"model","created":1795637188,
                "owned_by":"llamacpp","meta":{"vocab_type":1,"n_vocab":32000}}]}"""))
                .containsExactly("tiny");
    }

    @Test
    void tgiInfo() {
        assertThat(ServedModels.namesIn("""
                {"model_id":"bigscience/bloom-560m","model_sha":"e985a63cdc139290c5f700ff1929f0b5942cced2",
                "model_pipeline_tag":"text-generation","max_concurrent_requests":128,"version":"3.3.6"}"""))
                .containsExactly("bigscience/bloom-560m");
    }

    @Test
    void llamaCppProps() {
        assertThat(ServedModels.namesIn("""
                {"total_slots":1,"model_alias":"tiny","model_path":"/models/tiny.gguf","endpoint_metrics":true}"""))
                .containsExactly("tiny");
        // without -a, llama-server names its model by the path, in /props as in its answers
        assertThat(ServedModels.namesIn("""
                {"total_slots":1,"model_path":"/models/tiny.gguf","endpoint_metrics":true}"""))
                .containsExactly("/models/tiny.gguf");
    }

    @Test
    void ollamaTags() {
        assertThat(ServedModels.namesIn("""
                {"models":[{"name":"llama3.2:latest","model":"llama3.2:latest","size":2019393189},
                {"name":"qwen3:8b","model":"qwen3:8b","size":5225388164}]}"""))
                .containsExactly("llama3.2:latest", "qwen3:8b");
    }

    @Test
    void severalNoneAndRepeats() {
        assertThat(ServedModels.namesIn("""
                {"object":"list","data":[{"id":"base"},{"id":"lora-a","parent":"base"},{"id":"base"}]}"""))
                .containsExactly("base", "lora-a");
        assertThat(ServedModels.namesIn("{\"object\":\"list\",\"data\":[]}")).isEmpty();
        assertThat(ServedModels.namesIn("{\"object\":\"list\",\"data\":[{\"id\":\"\"},{\"id\":7},\"x\"]}")).isEmpty();
        StringBuilder many = new StringBuilder("{\"data\":[");
        for (int i = 0; i < 1000; i++) {
            many.append(i == 0 ? "" : ",").append("{\"id\":\"m").append(i).append("\"}");
        }
        assertThat(ServedModels.namesIn(many.append("]}").toString())).hasSize(ServedModels.MAX_LISTED);
    }

    @Test
    void answersThatAreNoListing() {
        assertThat(ServedModels.namesIn("<html><body>It works!</body></html>")).isNull();
        assertThat(ServedModels.namesIn("[{\"id\":\"m\"}]")).isNull();
        assertThat(ServedModels.namesIn("{\"status\":\"ok\"}")).isNull();
        assertThat(ServedModels.namesIn("")).isNull();
    }
}
