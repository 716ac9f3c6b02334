package dev.llmsidecar.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EngineKindTest {

    @Test
    void detectsEachSampleExposition() {
        assertThat(EngineKind.detect(EngineSamples.samples("vllm.txt"))).isEqualTo(EngineKind.VLLM);
        assertThat(EngineKind.detect(EngineSamples.samples("sglang.txt"))).isEqualTo(EngineKind.SGLANG);
        assertThat(EngineKind.detect(EngineSamples.samples("tgi.txt"))).isEqualTo(EngineKind.TGI);
        assertThat(EngineKind.detect(EngineSamples.samples("llamacpp.txt"))).isEqualTo(EngineKind.LLAMACPP);
    }

    @Test
    void foreignOrEmptyExpositionIsUnknown() {
        assertThat(EngineKind.detect(ExpositionParser.parse("""
                # TYPE node_load1 gauge
                node_load1 0.42
                process_cpu_seconds_total 12.5
                vllmish_metric 1
                tgi 1
                """).samples())).isEqualTo(EngineKind.UNKNOWN);
        assertThat(EngineKind.detect(java.util.List.of())).isEqualTo(EngineKind.UNKNOWN);
    }

    @Test
    void theEngineWithMostSamplesWinsOverAStrayForeignSeries() {
        assertThat(EngineKind.detect(ExpositionParser.parse("""
                tgi_wrapper_requests 1
                sglang:num_running_reqs 1
                sglang:num_queue_reqs 0
                """).samples())).isEqualTo(EngineKind.SGLANG);
    }

    @Test
    void labelsAndPrefixes() {
        assertThat(EngineKind.LLAMACPP.label()).isEqualTo("llamacpp");
        assertThat(EngineKind.UNKNOWN.label()).isEqualTo("unknown");
        assertThat(EngineKind.ofMetric("vllm:num_requests_waiting")).isEqualTo(EngineKind.VLLM);
        assertThat(EngineKind.ofMetric("tgi_queue_size")).isEqualTo(EngineKind.TGI);
        assertThat(EngineKind.ofMetric("llamacpp:requests_deferred")).isEqualTo(EngineKind.LLAMACPP);
        assertThat(EngineKind.ofMetric("python_info")).isEqualTo(EngineKind.UNKNOWN);
    }
}
