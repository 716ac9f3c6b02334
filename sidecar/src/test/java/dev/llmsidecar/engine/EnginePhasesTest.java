package dev.llmsidecar.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.llmsidecar.metrics.CumulativeHistogram;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The engines' own phase histograms and counters, normalised from the fixtures: the expositions each engine's source
 * writes (make_fixtures.py beside them) and a real llama-server's. Expected numbers are the fixture's own, summed
 * by hand over its label sets.
 */
class EnginePhasesTest {

    static final List<Double> VLLM_BOUNDS = List.of(0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
            40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0);

    private final EngineNormaliser normaliser = new EngineNormaliser();

    private EngineSnapshot normalise(String text) {
        return normaliser.normalise(ExpositionParser.parse(text, EngineNormaliser::relevant).samples());
    }

    @Test
    void vllmGivesAllFourPhasesSummedOverItsTwoEnginesWithItsOwnBounds() {
        EngineSnapshot s = normalise(EngineSamples.text("vllm.txt"));
        assertThat(s.phases()).containsOnlyKeys(EnginePhase.values());

        CumulativeHistogram queue = s.phase(EnginePhase.QUEUE);
        assertThat(queue.bounds()).isEqualTo(VLLM_BOUNDS);
        // engine 0: 1240 + engine 1: 1012 at le=0.3, ...; 1810 + 1739 requests
        assertThat(queue.cumulativeCounts()).containsExactly(2252L, 2699L, 3067L, 3211L, 3438L, 3510L, 3534L,
                3549L, 3549L, 3549L, 3549L, 3549L, 3549L, 3549L, 3549L, 3549L, 3549L, 3549L, 3549L, 3549L, 3549L,
                3549L);
        assertThat(queue.count()).isEqualTo(3549);
        assertThat(queue.sum()).isCloseTo(489.5618278914423 + 704.7188772446552, within(1e-9));

        CumulativeHistogram prefill = s.phase(EnginePhase.PREFILL);
        assertThat(prefill.bounds()).isEqualTo(VLLM_BOUNDS);
        assertThat(prefill.cumulativeCounts().subList(0, 5)).containsExactly(3321L, 3507L, 3545L, 3549L, 3549L);
        assertThat(prefill.sum()).isCloseTo(509.4540018748286, within(1e-9));

        CumulativeHistogram decode = s.phase(EnginePhase.DECODE);
        assertThat(decode.cumulativeCounts().subList(0, 12)).containsExactly(0L, 0L, 2L, 15L, 105L, 314L, 681L,
                2405L, 3447L, 3541L, 3548L, 3549L);
        assertThat(decode.sum()).isCloseTo(15729.887849445473, within(1e-9));

        CumulativeHistogram inference = s.phase(EnginePhase.INFERENCE);
        assertThat(inference.cumulativeCounts().subList(0, 12)).containsExactly(0L, 0L, 1L, 8L, 64L, 251L, 582L,
                2340L, 3440L, 3541L, 3548L, 3549L);
        assertThat(inference.sum()).isCloseTo(16239.34185132028, within(1e-9));
        // prefill + decode = inference, per request: so for the sums too
        assertThat(prefill.sum() + decode.sum()).isCloseTo(inference.sum(), within(1e-6));
    }

    @Test
    void vllmCounters() {
        EngineSnapshot s = normalise(EngineSamples.text("vllm.txt"));
        assertThat(s.preemptions()).isEqualTo(2);
        assertThat(s.counters()).isEqualTo(new EngineCounters(1_482_113 + 1_190_554, 83_712 + 35_840,
                98_231 + 90_112, 3 * (98_231 + 90_112), 81_012 + 60_220 + 39_903 + 70_115 + 49_870 + 30_024,
                391_245 + 350_871));
    }

    @Test
    void sglangGivesQueueAndPrefillStageOnly() {
        EngineSnapshot s = normalise(EngineSamples.text("sglang.txt"));
        assertThat(s.phases()).containsOnlyKeys(EnginePhase.QUEUE, EnginePhase.PREFILL);

        CumulativeHistogram queue = s.phase(EnginePhase.QUEUE);
        assertThat(queue.bounds()).startsWith(0.0, 0.1, 0.2, 0.5, 1.0, 2.0).endsWith(2500.0, 3000.0).hasSize(36);
        assertThat(queue.cumulativeCounts().subList(0, 7)).containsExactly(0L, 2204L, 2819L, 3701L, 4055L, 4120L,
                4120L);
        assertThat(queue.count()).isEqualTo(4120);
        assertThat(queue.sum()).isCloseTo(729.2669255575984, within(1e-9));

        // the prefill_forward stage of sglang:per_stage_req_latency_seconds, not request_process or chunked_prefill
        CumulativeHistogram prefill = s.phase(EnginePhase.PREFILL);
        assertThat(prefill.bounds()).hasSize(30);
        assertThat(prefill.bounds().get(0)).isEqualTo(0.001);
        assertThat(prefill.bounds().get(1)).isEqualTo(0.0016200000000000001);
        assertThat(prefill.bounds().get(29)).isEqualTo(1191.064887146242);
        assertThat(prefill.cumulativeCounts().subList(5, 16)).containsExactly(2L, 20L, 114L, 598L, 1671L, 2969L,
                3789L, 4060L, 4115L, 4119L, 4120L);
        assertThat(prefill.count()).isEqualTo(4120);
        assertThat(prefill.sum()).isCloseTo(434.8877704484206, within(1e-9));
    }

    @Test
    void sglangCounters() {
        EngineSnapshot s = normalise(EngineSamples.text("sglang.txt"));
        assertThat(s.preemptions()).as("sglang:num_retracted_requests_total").isEqualTo(37);
        assertThat(s.counters()).isEqualTo(new EngineCounters(2_811_467, 1_932_800, Double.NaN, Double.NaN,
                Double.NaN, 604_332));
    }

    @Test
    void tgiGivesQueueAndInferencePerRequestAndNotItsPerBatchForwards() {
        EngineSnapshot s = normalise(EngineSamples.text("tgi.txt"));
        assertThat(s.phases()).containsOnlyKeys(EnginePhase.QUEUE, EnginePhase.INFERENCE);

        CumulativeHistogram queue = s.phase(EnginePhase.QUEUE);
        // 0.0001 * 1.5^k, k = 1..35, as the router computes them
        assertThat(queue.bounds()).hasSize(35);
        double b = 0.0001;
        for (int i = 0; i < 35; i++) {
            b *= 1.5;
            assertThat(queue.bounds().get(i)).isEqualTo(b);
        }
        assertThat(queue.cumulativeCounts().subList(0, 5)).containsExactly(478L, 733L, 1104L, 1664L, 1686L);
        assertThat(queue.count()).isEqualTo(5290);
        assertThat(queue.sum()).isCloseTo(183.2025054461642, within(1e-9));

        CumulativeHistogram inference = s.phase(EnginePhase.INFERENCE);
        assertThat(inference.cumulativeCounts().subList(18, 28)).containsExactly(1L, 7L, 84L, 585L, 1996L, 3722L,
                4870L, 5222L, 5282L, 5290L);
        assertThat(inference.sum()).isCloseTo(7724.888218026427, within(1e-9));

        assertThat(s.counters().promptTokens()).as("tgi_request_input_length_sum")
                .isEqualTo(sumOf(EngineSamples.text("tgi.txt"), "tgi_request_input_length_sum"));
        assertThat(s.counters().promptTokensCached()).isNaN();
        assertThat(s.preemptions()).isNaN();
    }

    @Test
    void llamaServerHasNoPhaseHistogramsButItsTokenAndSpeculationCounters() {
        EngineSnapshot s = normalise(EngineSamples.text("llamacpp-de3ff815ea7d.txt"));
        assertThat(s.phases()).isEmpty();
        // prompt_tokens_total counts only computed tokens: all = computed + cached
        assertThat(s.counters()).isEqualTo(new EngineCounters(1298 + 21287, 21287, 0, 0, 0, 9474));
        assertThat(s.preemptions()).isNaN();

        EngineSnapshot older = normalise(EngineSamples.text("llamacpp.txt"));
        assertThat(older.counters()).as("no cached counter: all prompt tokens unknown").isEqualTo(
                new EngineCounters(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, 39080));
    }

    @Test
    void theParseKeepsThePhaseBucketsAndNoOthers() {
        assertThat(EngineNormaliser.relevant("vllm:request_queue_time_seconds_bucket")).isTrue();
        assertThat(EngineNormaliser.relevant("vllm:request_queue_time_seconds_sum")).isTrue();
        assertThat(EngineNormaliser.relevant("vllm:time_to_first_token_seconds_bucket")).isFalse();
        assertThat(EngineNormaliser.relevant("vllm:e2e_request_latency_seconds_bucket")).isFalse();
        assertThat(EngineNormaliser.relevant("sglang:per_stage_req_latency_seconds_bucket")).isTrue();
        assertThat(EngineNormaliser.relevant("tgi_batch_forward_duration_bucket")).isFalse();
        assertThat(EngineNormaliser.relevant("tgi_batch_next_size_bucket")).isFalse();
        assertThat(EngineNormaliser.relevant("tgi_request_inference_duration_bucket")).isTrue();
        assertThat(EngineNormaliser.relevant("python_gc_objects_collected_total")).isFalse();

        long kept = ExpositionParser.parse(EngineSamples.text("tgi.txt"), EngineNormaliser::relevant).samples()
                .stream().filter(x -> x.name().endsWith("_bucket")).count();
        assertThat(kept).as("35 bounds + +Inf, two histograms").isEqualTo(72);
    }

    @Test
    void labelSetsWithOtherBoundsKeepOnlyTheBoundsAllHave() {
        CumulativeHistogram h = normalise("""
                vllm:request_queue_time_seconds_bucket{engine="0",le="0.3"} 5.0
                vllm:request_queue_time_seconds_bucket{engine="0",le="0.5"} 7.0
                vllm:request_queue_time_seconds_bucket{engine="0",le="1.0"} 9.0
                vllm:request_queue_time_seconds_bucket{engine="0",le="+Inf"} 10.0
                vllm:request_queue_time_seconds_count{engine="0"} 10.0
                vllm:request_queue_time_seconds_sum{engine="0"} 4.0
                vllm:request_queue_time_seconds_bucket{engine="1",le="0.25"} 1.0
                vllm:request_queue_time_seconds_bucket{engine="1",le="0.5"} 2.0
                vllm:request_queue_time_seconds_bucket{engine="1",le="1.0"} 3.0
                vllm:request_queue_time_seconds_bucket{engine="1",le="+Inf"} 3.0
                vllm:request_queue_time_seconds_count{engine="1"} 3.0
                vllm:request_queue_time_seconds_sum{engine="1"} 1.5
                """).phase(EnginePhase.QUEUE);
        assertThat(h).isEqualTo(new CumulativeHistogram(List.of(0.5, 1.0), List.of(9L, 12L, 13L), 5.5));
    }

    @Test
    void incompleteLabelSetsAreLeftOutAndBrokenCountsEvenedOut() {
        CumulativeHistogram h = normalise("""
                vllm:request_prefill_time_seconds_bucket{engine="0",le="0.3"} 4.0
                vllm:request_prefill_time_seconds_bucket{engine="0",le="0.5"} 3.0
                vllm:request_prefill_time_seconds_bucket{engine="0",le="1.0"} 12.0
                vllm:request_prefill_time_seconds_count{engine="0"} 10.0
                vllm:request_prefill_time_seconds_sum{engine="0"} 2.0
                vllm:request_prefill_time_seconds_bucket{engine="1",le="0.3"} 1.0
                vllm:request_prefill_time_seconds_bucket{engine="1",le="+Inf"} 1.0
                vllm:request_prefill_time_seconds_bucket{engine="2",le="0.3"} 1.0
                vllm:request_prefill_time_seconds_sum{engine="2"} 0.1
                """).phase(EnginePhase.PREFILL);
        // engine 0 has no +Inf bucket (its _count stands in) and counts that fall, then pass the total;
        // engine 1 has no sum, engine 2 no total: both left out
        assertThat(h).isEqualTo(new CumulativeHistogram(List.of(0.3, 0.5, 1.0), List.of(4L, 4L, 10L, 10L), 2.0));
    }

    @Test
    void noHistogramMeansNoPhase() {
        assertThat(normalise("vllm:num_requests_running 1\n").phases()).isEmpty();
        assertThat(EngineSnapshot.unknown().phases()).isEqualTo(Map.of());
    }

    private static double sumOf(String text, String name) {
        return ExpositionParser.parse(text).samples().stream().filter(x -> x.name().equals(name))
                .mapToDouble(ExpositionParser.Sample::value).sum();
    }
}
