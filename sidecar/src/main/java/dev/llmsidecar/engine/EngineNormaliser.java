package dev.llmsidecar.engine;

import dev.llmsidecar.engine.ExpositionParser.Sample;
import dev.llmsidecar.metrics.CumulativeHistogram;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns one engine exposition into an {@link EngineSnapshot}. Counts are summed over every label set (several
 * models or data-parallel engines); ratios are averaged, since a sum of usage ratios means nothing. The engine's
 * per-request phase histograms are merged over its label sets (see {@link #histogram}).
 *
 * <p>Stateful only for vLLM's prefix-cache counters, whose hit ratio is the ratio of their increases since the
 * previous exposition. Not thread-safe: one instance belongs to one scrape loop.
 */
public final class EngineNormaliser {

    static final String VLLM_WAITING = "vllm:num_requests_waiting";
    static final String VLLM_RUNNING = "vllm:num_requests_running";
    static final String VLLM_KV = "vllm:kv_cache_usage_perc";
    static final String VLLM_KV_DEPRECATED = "vllm:gpu_cache_usage_perc";
    static final String VLLM_PREFIX_HITS = "vllm:prefix_cache_hits_total";
    static final String VLLM_PREFIX_QUERIES = "vllm:prefix_cache_queries_total";
    // early V1 names of the same counters, deprecated in favour of the two above
    static final String VLLM_PREFIX_HITS_DEPRECATED = "vllm:gpu_prefix_cache_hits_total";
    static final String VLLM_PREFIX_QUERIES_DEPRECATED = "vllm:gpu_prefix_cache_queries_total";
    // V0 engine: a ready-made gauge
    static final String VLLM_PREFIX_HIT_RATE_GAUGE = "vllm:gpu_prefix_cache_hit_rate";
    static final String VLLM_PREEMPTIONS = "vllm:num_preemptions_total";
    // all prompt tokens, cached included
    static final String VLLM_PROMPT_TOKENS = "vllm:prompt_tokens_total";
    static final String VLLM_PROMPT_CACHED = "vllm:prompt_tokens_cached_total"; // local + external KV, 0.11+
    static final String VLLM_SPEC_DRAFTS = "vllm:spec_decode_num_drafts_total";
    static final String VLLM_SPEC_DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens_total";
    static final String VLLM_SPEC_ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total";
    // every generated token, those of requests aborted on a client's cancel included
    static final String VLLM_GENERATION_TOKENS = "vllm:generation_tokens_total";

    static final String SGLANG_WAITING = "sglang:num_queue_reqs";
    static final String SGLANG_RUNNING = "sglang:num_running_reqs";
    static final String SGLANG_KV = "sglang:token_usage";
    static final String SGLANG_PREFIX_HIT_RATE = "sglang:cache_hit_rate";
    // a running request put back in the queue when the KV cache runs out: SGLang's preemption
    static final String SGLANG_RETRACTIONS = "sglang:num_retracted_requests_total";
    static final String SGLANG_PROMPT_TOKENS = "sglang:prompt_tokens_total"; // whole prompts of finished requests
    static final String SGLANG_PROMPT_CACHED = "sglang:cached_tokens_total";
    static final String SGLANG_GENERATION_TOKENS = "sglang:generation_tokens_total";

    static final String TGI_WAITING = "tgi_queue_size";
    static final String TGI_RUNNING = "tgi_batch_current_size";
    // the input lengths of validated requests: the histogram's sum is TGI's only prompt token count
    static final String TGI_PROMPT_TOKENS = "tgi_request_input_length_sum";
    // generated tokens of finished requests: the histogram's sum
    static final String TGI_GENERATED_TOKENS = "tgi_request_generated_tokens_sum";

    static final String LLAMACPP_WAITING = "llamacpp:requests_deferred";
    static final String LLAMACPP_RUNNING = "llamacpp:requests_processing";
    static final String LLAMACPP_KV = "llamacpp:kv_cache_usage_ratio"; // gone from newer llama-server builds
    // prompt tokens computed (cached ones excluded) and taken from the prefix cache, since start
    static final String LLAMACPP_PROMPT_TOKENS = "llamacpp:prompt_tokens_total";
    static final String LLAMACPP_PROMPT_CACHED = "llamacpp:prompt_tokens_cached_total";
    static final String LLAMACPP_SPEC_DRAFTS = "llamacpp:spec_decode_num_drafts_total";
    static final String LLAMACPP_GENERATION_TOKENS = "llamacpp:tokens_predicted_total";
    static final String LLAMACPP_SPEC_DRAFT_TOKENS = "llamacpp:spec_decode_num_draft_tokens_total";
    static final String LLAMACPP_SPEC_ACCEPTED = "llamacpp:spec_decode_num_accepted_tokens_total";

    /**
     * Where an engine's phase comes from: a histogram, and where one histogram holds several stages, the label that
     * selects the one wanted. Engines and phases without a source have none (docs/metrics.md, "Engine phases").
     */
    record PhaseSource(String name, String label, String value) {

        PhaseSource(String name) {
            this(name, null, null);
        }

        String bucket() {
            return name + "_bucket";
        }

        boolean selects(Map<String, String> labels) {
            return label == null || value.equals(labels.get(label));
        }
    }

    static final Map<EngineKind, Map<EnginePhase, PhaseSource>> PHASES = Map.of(
            EngineKind.VLLM, Map.of(
                    EnginePhase.QUEUE, new PhaseSource("vllm:request_queue_time_seconds"),
                    EnginePhase.PREFILL, new PhaseSource("vllm:request_prefill_time_seconds"),
                    EnginePhase.DECODE, new PhaseSource("vllm:request_decode_time_seconds"),
                    EnginePhase.INFERENCE, new PhaseSource("vllm:request_inference_time_seconds")),
            EngineKind.SGLANG, Map.of(
                    EnginePhase.QUEUE, new PhaseSource("sglang:queue_time_seconds"),
                    EnginePhase.PREFILL, new PhaseSource("sglang:per_stage_req_latency_seconds", "stage",
                            "prefill_forward")),
            // per request; TGI's prefill / decode histograms are per batch forward, not per request
            EngineKind.TGI, Map.of(
                    EnginePhase.QUEUE, new PhaseSource("tgi_request_queue_duration"),
                    EnginePhase.INFERENCE, new PhaseSource("tgi_request_inference_duration")),
            EngineKind.LLAMACPP, Map.of());

    /** The bucket series the parser keeps: those of the phase histograms, no others. */
    private static final Set<String> PHASE_BUCKETS = phaseBuckets();

    private record SeriesKey(String name, Map<String, String> labels) {
    }

    /** Counter values seen in the previous exposition, per series, so resets can be told apart per engine. */
    private Map<SeriesKey, Double> previousCounters = Map.of();

    /**
     * Whether a metric name can matter to normalisation or detection: one of the engines' names and not a
     * histogram bucket, but for the buckets of the phase histograms. A parse filter, so the other buckets (most of
     * an engine's exposition) never become objects.
     */
    public static boolean relevant(String metricName) {
        if (EngineKind.ofMetric(metricName) == EngineKind.UNKNOWN) {
            return false;
        }
        return !metricName.endsWith("_bucket") || PHASE_BUCKETS.contains(metricName);
    }

    /** Normalises one exposition; the kind is {@link EngineKind#UNKNOWN} when no engine metric is present. */
    public EngineSnapshot normalise(List<Sample> samples) {
        EngineKind kind = EngineKind.detect(samples);
        Map<SeriesKey, Double> counters = new HashMap<>();
        EngineSnapshot snapshot = switch (kind) {
            case VLLM -> vllm(samples, counters);
            case SGLANG -> new EngineSnapshot(kind, sum(samples, SGLANG_WAITING), sum(samples, SGLANG_RUNNING),
                    mean(samples, SGLANG_KV), mean(samples, SGLANG_PREFIX_HIT_RATE), Double.NaN, Double.NaN,
                    sum(samples, SGLANG_RETRACTIONS), new EngineCounters(sum(samples, SGLANG_PROMPT_TOKENS),
                            sum(samples, SGLANG_PROMPT_CACHED), Double.NaN, Double.NaN, Double.NaN,
                            sum(samples, SGLANG_GENERATION_TOKENS)),
                    phases(kind, samples));
            case TGI -> new EngineSnapshot(kind, sum(samples, TGI_WAITING), sum(samples, TGI_RUNNING),
                    Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                    new EngineCounters(sum(samples, TGI_PROMPT_TOKENS), Double.NaN, Double.NaN, Double.NaN,
                            Double.NaN, sum(samples, TGI_GENERATED_TOKENS)),
                    phases(kind, samples));
            case LLAMACPP -> llamaCpp(samples, counters);
            case UNKNOWN -> EngineSnapshot.unknown();
        };
        previousCounters = counters;
        return snapshot;
    }

    /** Drops counter history, e.g. after a failed scrape: the next exposition is a first one again. */
    public void forget() {
        previousCounters = Map.of();
    }

    private EngineSnapshot vllm(List<Sample> samples, Map<SeriesKey, Double> counters) {
        double kv = mean(samples, VLLM_KV);
        if (Double.isNaN(kv)) {
            kv = mean(samples, VLLM_KV_DEPRECATED);
        }
        String hitsName = VLLM_PREFIX_HITS;
        String queriesName = VLLM_PREFIX_QUERIES;
        if (!has(samples, queriesName)) {
            hitsName = VLLM_PREFIX_HITS_DEPRECATED;
            queriesName = VLLM_PREFIX_QUERIES_DEPRECATED;
        }
        double hits = sum(samples, hitsName);
        double queries = sum(samples, queriesName);
        double hitRatio;
        if (!Double.isNaN(hits) && !Double.isNaN(queries)) {
            double hitsIncrease = increase(samples, hitsName, counters);
            double queriesIncrease = increase(samples, queriesName, counters);
            // NaN when either is NaN (first scrape) or nothing was queried: an idle engine has no hit ratio
            hitRatio = queriesIncrease > 0 ? clamp01(hitsIncrease / queriesIncrease) : Double.NaN;
        } else {
            hitRatio = mean(samples, VLLM_PREFIX_HIT_RATE_GAUGE);
        }
        return new EngineSnapshot(EngineKind.VLLM, sum(samples, VLLM_WAITING), sum(samples, VLLM_RUNNING), kv,
                hitRatio, hits, queries, sum(samples, VLLM_PREEMPTIONS),
                new EngineCounters(sum(samples, VLLM_PROMPT_TOKENS), sum(samples, VLLM_PROMPT_CACHED),
                        sum(samples, VLLM_SPEC_DRAFTS), sum(samples, VLLM_SPEC_DRAFT_TOKENS),
                        sum(samples, VLLM_SPEC_ACCEPTED), sum(samples, VLLM_GENERATION_TOKENS)),
                phases(EngineKind.VLLM, samples));
    }

    /**
     * llama-server: the prefix-cache hit ratio is cached prompt tokens over all prompt tokens, from the increase of
     * its two counters (prompt_tokens_total counts only the tokens it computed), as for vLLM's. Builds of late 2025
     * export no KV-cache usage gauge: NaN there. All prompt tokens are the two counters together, so unknown in builds
     * without the cached one. No per-request phase histograms: its per-request split comes from each response's
     * {@code timings} (the engine_reported_* series).
     */
    private EngineSnapshot llamaCpp(List<Sample> samples, Map<SeriesKey, Double> counters) {
        double cached = sum(samples, LLAMACPP_PROMPT_CACHED);
        double computed = sum(samples, LLAMACPP_PROMPT_TOKENS);
        double hitRatio = Double.NaN;
        if (!Double.isNaN(cached) && !Double.isNaN(computed)) {
            double cachedIncrease = increase(samples, LLAMACPP_PROMPT_CACHED, counters);
            double total = cachedIncrease + increase(samples, LLAMACPP_PROMPT_TOKENS, counters);
            hitRatio = total > 0 ? clamp01(cachedIncrease / total) : Double.NaN;
        }
        double all = Double.isNaN(cached) ? Double.NaN : cached + computed;
        return new EngineSnapshot(EngineKind.LLAMACPP, sum(samples, LLAMACPP_WAITING), sum(samples, LLAMACPP_RUNNING),
                mean(samples, LLAMACPP_KV), hitRatio, cached, all, Double.NaN,
                new EngineCounters(all, cached, sum(samples, LLAMACPP_SPEC_DRAFTS),
                        sum(samples, LLAMACPP_SPEC_DRAFT_TOKENS), sum(samples, LLAMACPP_SPEC_ACCEPTED),
                        sum(samples, LLAMACPP_GENERATION_TOKENS)),
                Map.of());
    }

    private static Map<EnginePhase, CumulativeHistogram> phases(EngineKind kind, List<Sample> samples) {
        Map<EnginePhase, CumulativeHistogram> phases = new EnumMap<>(EnginePhase.class);
        PHASES.getOrDefault(kind, Map.of()).forEach((phase, source) -> {
            CumulativeHistogram h = histogram(samples, source);
            if (h != null) {
                phases.put(phase, h);
            }
        });
        return phases;
    }

    /**
     * The histogram {@code source} names, merged over the engine's label sets (several models, data-parallel engines)
     * as {@link CumulativeHistogram.Merge} does, evened out for export. Null when no label set is usable.
     */
    static CumulativeHistogram histogram(List<Sample> samples, PhaseSource source) {
        CumulativeHistogram.Merge merge = new CumulativeHistogram.Merge(source.name());
        for (Sample s : samples) {
            if (source.selects(s.labels())) {
                merge.add(s.name(), s.labels(), s.value());
            }
        }
        CumulativeHistogram merged = merge.result();
        return merged == null ? null : merged.evenedOut();
    }

    private static Set<String> phaseBuckets() {
        Set<String> names = new HashSet<>();
        PHASES.values().forEach(byPhase -> byPhase.values().forEach(source -> names.add(source.bucket())));
        return Set.copyOf(names);
    }

    /**
     * Sum over series of {@code name} of the increase since the previous exposition, Prometheus-style: a value
     * below the previous one means the counter restarted from zero, so its whole value is the increase. Series
     * without a previous value contribute nothing; NaN when no series had one.
     */
    private double increase(List<Sample> samples, String name, Map<SeriesKey, Double> counters) {
        double total = 0;
        boolean any = false;
        for (Sample s : samples) {
            if (!s.name().equals(name) || Double.isNaN(s.value())) {
                continue;
            }
            SeriesKey key = new SeriesKey(name, s.labels());
            counters.put(key, s.value());
            Double previous = previousCounters.get(key);
            if (previous != null) {
                total += s.value() >= previous ? s.value() - previous : s.value();
                any = true;
            }
        }
        return any ? total : Double.NaN;
    }

    private static boolean has(List<Sample> samples, String name) {
        for (Sample s : samples) {
            if (s.name().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /** Sum over label sets, ignoring NaN samples; NaN when there is no usable sample. */
    static double sum(List<Sample> samples, String name) {
        double[] totalAndCount = totalAndCount(samples, name);
        return totalAndCount[1] == 0 ? Double.NaN : totalAndCount[0];
    }

    /** Mean over label sets of a 0..1 ratio, ignoring NaN samples, clamped to 0..1; NaN when none. */
    static double mean(List<Sample> samples, String name) {
        double[] totalAndCount = totalAndCount(samples, name);
        return totalAndCount[1] == 0 ? Double.NaN : clamp01(totalAndCount[0] / totalAndCount[1]);
    }

    /** Sum and number of the non-NaN samples named {@code name}. */
    private static double[] totalAndCount(List<Sample> samples, String name) {
        double total = 0;
        int n = 0;
        for (Sample s : samples) {
            if (s.name().equals(name) && !Double.isNaN(s.value())) {
                total += s.value();
                n++;
            }
        }
        return new double[] {total, n};
    }

    private static double clamp01(double ratio) {
        return Double.isNaN(ratio) ? Double.NaN : Math.max(0, Math.min(1, ratio));
    }
}
