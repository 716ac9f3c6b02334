package dev.llmsidecar.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class EngineNormaliserTest {

    private final EngineNormaliser normaliser = new EngineNormaliser();

    @Test
    void vllmSumsCountsAndAveragesKvAcrossEngines() {
        EngineSnapshot s = normaliser.normalise(EngineSamples.samples("vllm.txt"));
        assertThat(s.kind()).isEqualTo(EngineKind.VLLM);
        assertThat(s.requestsWaiting()).isEqualTo(7.0);
        assertThat(s.requestsRunning()).isEqualTo(21.0);
        assertThat(s.kvCacheUsageRatio()).isEqualTo(0.5);
        assertThat(s.prefixCacheHitRatio()).as("first scrape has no interval").isNaN();
        assertThat(s.prefixCacheHits()).isEqualTo(120_000.0);
        assertThat(s.prefixCacheQueries()).isEqualTo(200_000.0);
    }

    @Test
    void sglang() {
        EngineSnapshot s = normaliser.normalise(EngineSamples.samples("sglang.txt"));
        assertThat(new EngineSnapshot(s.kind(), s.requestsWaiting(), s.requestsRunning(), s.kvCacheUsageRatio(),
                s.prefixCacheHitRatio(), s.prefixCacheHits(), s.prefixCacheQueries())).isEqualTo(new EngineSnapshot(
                EngineKind.SGLANG, 5, 17, 0.34375, 0.6875, Double.NaN, Double.NaN));
        assertThat(s.preemptions()).as("retractions").isEqualTo(37);
    }

    @Test
    void tgiHasNoKvOrPrefixSignals() {
        EngineSnapshot s = normaliser.normalise(EngineSamples.samples("tgi.txt"));
        assertThat(new EngineSnapshot(s.kind(), s.requestsWaiting(), s.requestsRunning(), s.kvCacheUsageRatio(),
                s.prefixCacheHitRatio(), s.prefixCacheHits(), s.prefixCacheQueries(), s.preemptions()))
                .isEqualTo(new EngineSnapshot(EngineKind.TGI, 6, 24, Double.NaN, Double.NaN, Double.NaN, Double.NaN));
    }

    @Test
    void llamacpp() {
        EngineSnapshot s = normaliser.normalise(EngineSamples.samples("llamacpp.txt"));
        assertThat(new EngineSnapshot(s.kind(), s.requestsWaiting(), s.requestsRunning(), s.kvCacheUsageRatio(),
                s.prefixCacheHitRatio(), s.prefixCacheHits(), s.prefixCacheQueries(), s.preemptions()))
                .isEqualTo(new EngineSnapshot(EngineKind.LLAMACPP, 2, 3, 0.125, Double.NaN, Double.NaN, Double.NaN));
        // an older build without the cached-prompt counter: no prompt total, but its generated tokens
        assertThat(s.counters().promptTokens()).isNaN();
        assertThat(s.counters().generationTokens()).isEqualTo(39080);
    }

    @Test
    void newerLlamacppWithoutKvRatioReportsNaN() {
        EngineSnapshot s = normalise("""
                llamacpp:requests_processing 1
                llamacpp:requests_deferred 0
                llamacpp:kv_cache_tokens 512
                """);
        assertThat(s.kind()).isEqualTo(EngineKind.LLAMACPP);
        assertThat(s.requestsRunning()).isEqualTo(1);
        assertThat(s.requestsWaiting()).isZero();
        assertThat(s.kvCacheUsageRatio()).isNaN();
    }

    @Test
    void llamaServerOfLate2025GivesItsPrefixCacheHitRatioFromItsTokenCounters() {
        // recorded from llama-server (llama.cpp de3ff815ea7d, the real-engine suite's build) after some traffic
        String recorded = EngineSamples.text("llamacpp-de3ff815ea7d.txt");
        EngineSnapshot first = normaliser.normalise(ExpositionParser.parse(recorded).samples());
        assertThat(first.kind()).isEqualTo(EngineKind.LLAMACPP);
        assertThat(first.requestsWaiting()).isZero();
        assertThat(first.requestsRunning()).isZero();
        assertThat(first.kvCacheUsageRatio()).as("this version has no KV-cache gauge").isNaN();
        assertThat(first.prefixCacheHitRatio()).as("no previous scrape").isNaN();
        // 90 more prompt tokens from the cache and 10 more computed
        String later = recorded
                .replaceAll("(?m)^llamacpp:prompt_tokens_cached_total (\\d+)",
                        "llamacpp:prompt_tokens_cached_total " + (counter(recorded, "llamacpp:prompt_tokens_cached_total") + 90))
                .replaceAll("(?m)^llamacpp:prompt_tokens_total (\\d+)",
                        "llamacpp:prompt_tokens_total " + (counter(recorded, "llamacpp:prompt_tokens_total") + 10));
        EngineSnapshot second = normaliser.normalise(ExpositionParser.parse(later).samples());
        assertThat(second.prefixCacheHitRatio()).isCloseTo(0.9, org.assertj.core.data.Offset.offset(1e-9));
    }

    static long counter(String text, String name) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + java.util.regex.Pattern.quote(name)
                + " (\\d+)").matcher(text);
        assertThat(m.find()).isTrue();
        return Long.parseLong(m.group(1));
    }

    @Test
    void unknownExpositionGivesTheUnknownSnapshot() {
        assertThat(normalise("node_load1 0.5\n")).isEqualTo(EngineSnapshot.unknown());
        assertThat(normaliser.normalise(EngineSamples.samples("malformed.txt")).kind()).isEqualTo(EngineKind.VLLM);
    }

    @Test
    void vllmPrefixHitRatioIsTheRatioOfCounterIncreasesBetweenScrapes() {
        normaliser.normalise(EngineSamples.samples("vllm.txt"));
        // engine 0: +1000 queries / +600 hits; engine 1: +1000 / +200 -> 800 / 2000
        EngineSnapshot s = normalise(vllmCounters(121_000, 84_600, 81_000, 36_200));
        assertThat(s.prefixCacheHitRatio()).isCloseTo(0.4, within(1e-12));
        assertThat(s.prefixCacheQueries()).isEqualTo(202_000);

        EngineSnapshot idle = normalise(vllmCounters(121_000, 84_600, 81_000, 36_200));
        assertThat(idle.prefixCacheHitRatio()).as("no queries in the interval").isNaN();

        EngineSnapshot again = normalise(vllmCounters(122_000, 85_600, 81_000, 36_200));
        assertThat(again.prefixCacheHitRatio()).isEqualTo(1.0);
    }

    @Test
    void vllmCounterResetCountsTheNewValueAsTheIncrease() {
        normalise(vllmCounters(120_000, 84_000, 80_000, 36_000));
        // both engines restarted: 500 queries, 100 hits since
        EngineSnapshot bothReset = normalise(vllmCounters(300, 50, 200, 50));
        assertThat(bothReset.prefixCacheHitRatio()).isCloseTo(0.2, within(1e-12));
        // only engine 1 restarts while engine 0 grows enough that the sums still grow: per-series it is
        // (7000 + 900) / (15000 + 1000), where a sum-based delta would say 2900 / 6000
        normalise(vllmCounters(10_000, 5_000, 10_000, 5_000));
        EngineSnapshot oneReset = normalise(vllmCounters(25_000, 12_000, 1_000, 900));
        assertThat(oneReset.prefixCacheHitRatio()).isCloseTo(7_900.0 / 16_000.0, within(1e-12));
    }

    @Test
    void forgetMakesTheNextScrapeAFirstOne() {
        normalise(vllmCounters(100, 50, 100, 50));
        normaliser.forget();
        assertThat(normalise(vllmCounters(200, 100, 200, 100)).prefixCacheHitRatio()).isNaN();
    }

    @Test
    void vllmFallsBackToDeprecatedNames() {
        EngineSnapshot v0 = normalise("""
                vllm:num_requests_running{model_name="m"} 2.0
                vllm:num_requests_waiting{model_name="m"} 1.0
                vllm:gpu_cache_usage_perc{model_name="m"} 0.75
                vllm:gpu_prefix_cache_hit_rate{model_name="m"} 0.25
                """);
        assertThat(v0).isEqualTo(new EngineSnapshot(EngineKind.VLLM, 1, 2, 0.75, 0.25, Double.NaN, Double.NaN));

        normalise("""
                vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5
                vllm:gpu_prefix_cache_queries_total{engine="0",model_name="m"} 100.0
                vllm:gpu_prefix_cache_hits_total{engine="0",model_name="m"} 10.0
                """);
        EngineSnapshot earlyV1 = normalise("""
                vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5
                vllm:gpu_prefix_cache_queries_total{engine="0",model_name="m"} 200.0
                vllm:gpu_prefix_cache_hits_total{engine="0",model_name="m"} 85.0
                """);
        assertThat(earlyV1.prefixCacheHitRatio()).isEqualTo(0.75);
        assertThat(earlyV1.kvCacheUsageRatio()).isEqualTo(0.5);
    }

    @Test
    void nanSamplesAreIgnoredAndRatiosClamped() {
        EngineSnapshot s = normalise("""
                sglang:num_running_reqs{tp_rank="0"} 3
                sglang:num_running_reqs{tp_rank="1"} NaN
                sglang:token_usage{tp_rank="0"} 1.5
                sglang:cache_hit_rate{tp_rank="0"} NaN
                """);
        assertThat(s.requestsRunning()).isEqualTo(3);
        assertThat(s.requestsWaiting()).isNaN();
        assertThat(s.kvCacheUsageRatio()).isEqualTo(1.0);
        assertThat(s.prefixCacheHitRatio()).isNaN();
    }

    private EngineSnapshot normalise(String text) {
        return normaliser.normalise(ExpositionParser.parse(text).samples());
    }

    static String vllmCounters(double queries0, double hits0, double queries1, double hits1) {
        // same series (labels) as vllm.txt, so it can follow that file as the next scrape
        return String.format(java.util.Locale.ROOT, """
                vllm:num_requests_running{engine="0",model_name="%1$s"} 1.0
                vllm:prefix_cache_queries_total{engine="0",model_name="%1$s"} %2$s
                vllm:prefix_cache_queries_total{engine="1",model_name="%1$s"} %3$s
                vllm:prefix_cache_hits_total{engine="0",model_name="%1$s"} %4$s
                vllm:prefix_cache_hits_total{engine="1",model_name="%1$s"} %5$s
                """, "meta-llama/Llama-3.1-8B-Instruct", queries0, queries1, hits0, hits1);
    }
}
