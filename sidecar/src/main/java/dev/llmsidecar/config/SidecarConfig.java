package dev.llmsidecar.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every setting of the sidecar, under the {@code sidecar.} prefix (env: {@code SIDECAR_...}).
 * Defaults are the documented production defaults; README.md has the same table.
 */
@ConfigMapping(prefix = "sidecar")
public interface SidecarConfig {

    Upstream upstream();

    Proxy proxy();

    Llm llm();

    Metrics metrics();

    Slo slo();

    Windows windows();

    Tenants tenants();

    Priority priority();

    Conversations conversations();

    Saturation saturation();

    Cost cost();

    Gpu gpu();

    Engine engine();

    Otel otel();

    Trace trace();

    Stall stall();

    Limits limits();

    /**
     * How long a client may hold the sidecar's resources without moving (docs/configuration.md, "Limits"): each
     * timeout is counted in llm_sidecar_client_timeouts_total{when}.
     */
    interface Limits {
        /**
         * A request head (request line and headers) not complete this long after its first byte: the connection is
         * closed. nginx's client_header_timeout is 60 s.
         */
        @WithDefault("PT60S")
        Duration requestHeadTimeout();

        /**
         * No byte of a request body for this long while the body is being read: 408 and the connection closed. An
         * inspected body never goes upstream in part; a piped body's upstream connection is closed, not pooled.
         * nginx's client_body_timeout is 60 s.
         */
        @WithDefault("PT60S")
        Duration requestBodyTimeout();

        /**
         * The client reads nothing of the response for this long while the sidecar's writes to it are blocked: the
         * stream is cut and the engine's connection released (end_reason="client_send_timeout"). nginx's
         * send_timeout is 60 s; five minutes here, since a chat UI in a background tab or a client that pauses its
         * read while it runs a tool call may take that long to read again, and the engine's stream is paused meanwhile
         * at no cost to anyone else.
         */
        @WithDefault("PT5M")
        Duration sendTimeout();

        /**
         * Bytes of request bodies held for inspection at once, all requests together, from their first byte until the
         * last copy is let go. Past it a body is piped to the engine uninspected (and measured from its response),
         * counted in llm_sidecar_body_inspection_skipped_total{reason="budget"}. Unset: 30 % of the maximum direct
         * memory (about 19 MiB with the shipped 64 MB), where inspected bodies are held.
         */
        Optional<Long> inspectBudget();

        /**
         * The heap mark: new requests get 503 while the live heap (the tenured pool after its last collection and the
         * survivor space after the last young one) holds more than this fraction of the room live data has (the
         * tenured pool and one survivor space; llm_sidecar_memory_used_bytes{budget="heap"} against
         * llm_sidecar_memory_budget_bytes). Open streams go on; readiness stays up. Lowered by tests.
         */
        @WithDefault("0.85")
        double shedHeapFraction();

        /** The direct-memory mark, as {@link #shedHeapFraction} for the maximum direct memory (Netty's buffers). */
        @WithDefault("0.85")
        double shedDirectFraction();
    }

    /**
     * When an open stream counts as stalled (docs/configuration.md, "Stalls"): silent longer than the threshold of its
     * phase. Read when the metrics are read; nothing is cut by them (that is sidecar.upstream.idle-timeout).
     */
    interface Stall {
        /**
         * Silence allowed before the first token: queueing on a busy engine and the prefill of a long prompt are not
         * stalls, so this is long.
         */
        @WithDefault("PT60S")
        Duration firstTokenThreshold();

        /** Silence allowed between two tokens once the stream generates: a decode step is tens of milliseconds. */
        @WithDefault("PT10S")
        Duration threshold();
    }

    interface Upstream {
        /**
         * Base URL of the inference server, e.g. http://127.0.0.1:8000. A path prefix is prepended to every request.
         * Parsed once, here, with the one default-port rule ({@link HttpTarget}).
         */
        HttpTarget url();

        /** Forward the client's Host header instead of the upstream's authority. */
        @WithDefault("false")
        boolean preserveHost();

        @WithDefault("PT5S")
        Duration connectTimeout();

        /**
         * Longest silence tolerated on an upstream response (before headers or between chunks)
         * before the request is failed. Long, because a queued request on a busy engine can wait minutes.
         */
        @WithDefault("PT10M")
        Duration idleTimeout();

        /**
         * How long an idle pooled upstream connection is kept for reuse, to the nanosecond (PT0S: no reuse, a
         * connection per request). A connection idle this long or longer is closed when it is next taken from the pool
         * (another is taken instead), and by a background sweep. It must be shorter than the engine's own keep-alive
         * timeout. Should the engine still close a reused connection before a single response byte (it never read
         * the request), the request, whatever its method, is sent once more on a new connection if the sidecar holds
         * its whole body (an inspected LLM body, or none); never after a response byte, never twice. One whose body
         * was streamed through gets a 502. 4 s is below uvicorn's 5 s default (vLLM, SGLang) and llama.cpp's 5 s.
         */
        @WithDefault("PT4S")
        Duration keepAliveTimeout();

        /** Upstream connection pool size per event loop; every open stream holds one HTTP/1.1 connection. */
        @WithDefault("4096")
        int maxConnections();
    }

    interface Proxy {
        /**
         * Largest request body forwarded, on every path (inspected or streamed). A larger declared Content-Length is
         * answered 413 before a byte is read or sent upstream; a chunked body that grows past it is cut (the upstream
         * request is reset, the client gets 413 and its connection is closed).
         */
        @WithDefault("67108864")
        long maxRequestBodyBytes();

        /**
         * Relay a chunked response body to an HTTP/1.1 client as the bytes the engine's reads held (a strict chunk
         * scanner hands the decoders the data in place; one write per read). Off: every body goes through the
         * HTTP codecs as objects, re-framed by the sidecar. HTTP/2 and HTTP/1.0 clients, bodies without a body
         * (HEAD, 204, 304) and bodies framed by Content-Length or the close always take that path
         * (llm_sidecar_relay_fallbacks_total says how often and why).
         */
        @WithDefault("true")
        boolean rawRelay();
    }

    interface Llm {
        /**
         * When a streaming client did not ask for usage, add stream_options.include_usage=true upstream
         * (exact token counts) and remove the resulting usage-only chunk from what the client receives.
         */
        @WithDefault("true")
        boolean injectIncludeUsage();

        /**
         * Largest LLM request body read to find model/stream and inject include_usage. A larger body is
         * forwarded untouched, streamed, and its request is timed without model or usage injection.
         */
        @WithDefault("16777216")
        int maxInspectedBodyBytes();

        /**
         * Largest SSE event decoded (for timing and tokens, in every SSE format); a larger one is forwarded as it
         * comes, not decoded. With include_usage turned on by the sidecar, an incomplete event up to this size is held
         * until it ends, because it may be the usage-only chunk (removed whole). A larger event cannot be one: it
         * streams on, and usage members in it are still removed, read by the usage-member finder as the event passes
         * (only the few bytes of a member name still being read wait).
         */
        @WithDefault("1048576")
        int maxHeldEventBytes();
    }

    /**
     * Sidecar-specific OpenTelemetry settings. The SDK itself (endpoint, protocol, headers, interval, sampler,
     * queue sizes) is configured by the standard OTEL_* variables or otel.* / quarkus.otel.* properties; see
     * docs/otel.md.
     */
    interface Otel {
        /** gen_ai.provider.name on spans and OTLP metrics: the API the clients speak. */
        @WithDefault("openai")
        String providerName();

        /**
         * The GenAI semantic-convention version of the OTLP names: latest (what the sidecar emits by default) or
         * v1.36 (gen_ai.system for gen_ai.provider.name); gen_ai_latest_experimental in OTEL_SEMCONV_STABILITY_OPT_IN
         * selects latest whatever this says (docs/otel.md).
         */
        @WithDefault("latest")
        String semconv();
    }

    interface Metrics {
        /**
         * Histogram bounds: default (1 ms to 2 h for every latency, 4^k tokens), vllm (vLLM's own bounds per series,
         * so le lines up with a vLLM dashboard) or otel (the GenAI semantic conventions' advice). SLO thresholds are
         * added to every latency histogram either way.
         */
        @WithDefault("default")
        String bucketPreset();

        /** Explicit bounds in seconds for every latency histogram, instead of the preset's. */
        Optional<List<Double>> latencyBuckets();

        /** Explicit bounds for token-count histograms, instead of the preset's. */
        Optional<List<Double>> tokenBuckets();

        /**
         * Model names that earn a label value of their own once the engine answered a request naming them with 2xx;
         * later names, and any name before its first 2xx, are model="other" (pinned and listed names need no slot).
         */
        @WithDefault("50")
        int maxModels();

        /** Models always kept as their own label value, whatever the cap (e.g. the served model names). */
        Optional<List<String>> pinnedModels();

        /**
         * The latency histograms on /q/metrics: classic (buckets at the preset's bounds, every format), native
         * (Prometheus native histograms: one series per label set, sent only to a scraper that negotiates protobuf)
         * or both (one histogram with both: protobuf scrapers store the native one, text scrapers the classic
         * buckets).
         */
        @WithDefault("both")
        String histograms();

        /**
         * Native histograms: most buckets per label set in a scrape; past it the resolution is halved (about 2.2 %
         * bucket width at full resolution, 4.4 % after one halving).
         */
        @WithDefault("160")
        int nativeMaxBuckets();

        /**
         * OTLP histograms: explicit (the preset's bounds as bucket advice) or exponential (base-2 exponential
         * histograms, at most native-max-buckets buckets).
         */
        @WithDefault("explicit")
        String otlpHistograms();
    }

    /** Service-level objectives; see docs/slo.md. */
    interface Slo {
        /** Request header that names the request's SLO class. */
        @WithDefault("x-slo-class")
        String classHeader();

        /** Allowed SLO class values (bounded label); a missing or unknown value is the first one. */
        @WithDefault("default")
        List<String> classes();

        /**
         * Upstream 4xx statuses that burn error budget (the engine turned the client away). Other 4xx responses
         * are the client's error and do not count toward any objective; neither do client cancellations that
         * broke no objective before they happened.
         */
        @WithDefault("429")
        List<Integer> badClientStatuses();

        /** Named objectives, e.g. sidecar.slo.objectives.interactive.ttft=PT0.5S. None by default. */
        Map<String, Objective> objectives();

        /** Targets declared per request in headers (llm-d's x-llm-d-slo-ttft-ms / x-llm-d-slo-tpot-ms). */
        Declared declared();

        /**
         * Per-request SLO targets (docs/slo.md "Targets declared per request"). A request that declares one is judged
         * against its own value, clamped to [min, max], and counted under the objective of the smallest bucket at or
         * above it; the configured objectives judge the requests that declare nothing.
         */
        interface Declared {
            /** Judge requests by the targets they declare. Off: the headers are forwarded and not read. */
            @WithDefault("false")
            boolean enabled();

            /** Headers carrying the TTFT target in milliseconds, the first present wins (llm-d's, then the older). */
            @WithDefault("x-llm-d-slo-ttft-ms,x-slo-ttft-ms")
            List<String> ttftHeaders();

            /** Headers carrying the TPOT target in milliseconds, the first present wins. */
            @WithDefault("x-llm-d-slo-tpot-ms,x-slo-tpot-ms")
            List<String> tpotHeaders();

            /** TTFT buckets: each is an objective of its own (declared:ttft<=NNNms); bounded series. */
            @WithDefault("PT0.1S,PT0.25S,PT0.5S,PT1S,PT2S,PT5S,PT10S,PT30S")
            List<Duration> ttftBuckets();

            /** TPOT buckets, likewise (declared:tpot<=NNms). */
            @WithDefault("PT0.01S,PT0.02S,PT0.05S,PT0.1S,PT0.2S,PT0.5S")
            List<Duration> tpotBuckets();

            /** Smallest TTFT a request may declare; a smaller value is judged as this one (counted as clamped). */
            @WithDefault("PT0.05S")
            Duration ttftMin();

            /** Largest TTFT a request may declare; at most the largest bucket, which it is when unset. */
            Optional<Duration> ttftMax();

            /** Smallest TPOT a request may declare. */
            @WithDefault("PT0.005S")
            Duration tpotMin();

            /** Largest TPOT a request may declare; at most the largest bucket, which it is when unset. */
            Optional<Duration> tpotMax();

            /** Share of good requests each declared bucket's objective targets (its burn-rate alerts use it). */
            @WithDefault("0.99")
            double target();

            /**
             * Header a trusted caller (the gateway) sets to the token of {@link #trustTokenFile()}; removed from the
             * request before it goes upstream. A declaration without it is refused and counted.
             */
            @WithDefault("x-llm-sidecar-declared-trust")
            String trustHeader();

            /**
             * File holding the token of the trusted callers (a mounted Secret; read again within a second of a
             * change). Unset: no caller is trusted, every declaration is refused, unless {@link #trustAll()}.
             */
            Optional<String> trustTokenFile();

            /** Every caller may declare targets, as before 2026-11-29 (a warning at start). */
            @WithDefault("false")
            boolean trustAll();
        }

        interface Objective {
            /** Comma-separated globs on the request's model name ('*' and '?'). */
            @WithDefault("*")
            String models();

            /** SLO class this objective applies to, or '*' for every class. */
            @WithDefault("*")
            String sloClass();

            /** Largest acceptable time to first token. */
            Optional<Duration> ttft();

            /** Largest acceptable time per output token (requests with one token meet it). */
            Optional<Duration> tpot();

            /** Largest acceptable end-to-end latency. */
            Optional<Duration> e2e();

            /** Largest acceptable inter-token latency at {@link #itlQuantile()} within the request. */
            Optional<Duration> itl();

            @WithDefault("0.99")
            double itlQuantile();

            /**
             * Also judge responses that do not stream by the TTFT threshold (their TTFT is their E2E). Off: a TTFT
             * objective judges streams only, and an E2E objective is the one for whole responses.
             */
            @WithDefault("false")
            boolean ttftNonStreaming();

            /** Share of requests that must be good, e.g. 0.99; exported for burn-rate alerts. */
            @WithDefault("0.99")
            double target();
        }
    }

    /** Live local percentiles (JSON on the management port) and p99 drift. */
    interface Windows {
        /** Sliding windows kept per model; the shortest sets the rotation granularity (1/6 of it). */
        @WithDefault("PT1M,PT5M,PT1H")
        List<Duration> durations();

        /** Recent window of the p99 drift ratio. */
        @WithDefault("PT5M")
        Duration driftShort();

        /** Baseline window of the p99 drift ratio (must be one of the durations). */
        @WithDefault("PT1H")
        Duration driftBaseline();

        /** Fewer samples than this in either window: drift is NaN (no alert on thin data). */
        @WithDefault("50")
        long driftMinSamples();
    }

    /** The tenant label: who sent a request; see docs/metrics.md "Tenants". */
    /**
     * The request's scheduling priority as a label (docs/slo.md "By priority"): vLLM's {@code priority} body field,
     * else {@link #header()}. Values outside {@link #values()} are "other"; a request that names none is "none".
     */
    interface Priority {
        /** Label requests by priority. Off: no series carries the label. */
        @WithDefault("false")
        boolean enabled();

        /** Header naming the priority when the body does not (a gateway's scheduling class). Unset: the body only. */
        Optional<String> header();

        /** The priorities that get a label value of their own (integers, as vLLM's field). */
        @WithDefault("-1,0,1,2")
        List<Integer> values();

        /**
         * The series that carry the priority label (OpenTelemetry names, as in docs/metrics.md). Default: the SLO
         * counters and the TTFT, TPOT and request-duration histograms.
         */
        @WithDefault("gen_ai.server.time_to_first_token,gen_ai.server.time_per_output_token,"
                + "gen_ai.server.request.duration,llm_sidecar.slo.requests,llm_sidecar.slo.good_requests,"
                + "llm_sidecar.slo.output_tokens,llm_sidecar.slo.good_output_tokens,llm_sidecar.slo.objective_requests,"
                + "llm_sidecar.slo.objective_good_requests,llm_sidecar.slo.violations")
        List<String> series();
    }

    /**
     * Conversations and agent loops (docs/metrics.md "Conversations"): each chat request's turn, what it answers, the
     * gap since the turn before and cold/warm, on series of their own. Off: no request body is read for it and no
     * series exists.
     */
    interface Conversations {
        /** Read where each chat request sits in its conversation, link its turns, and export the turn series. */
        @WithDefault("false")
        boolean enabled();

        /**
         * Turns the table of conversations holds (allocated at start, whatever the traffic: 16384 take 848 KiB); past it the
         * oldest leaves (llm_sidecar_conversation_evictions_total{reason="capacity"}).
         */
        @WithDefault("16384")
        int maxEntries();

        /**
         * How long a turn is held for the next one to find: a later turn reads as a new (cold) conversation
         * (llm_sidecar_conversation_evictions_total{reason="age"}).
         */
        @WithDefault("PT1H")
        Duration maxAge();
    }

    interface Tenants {
        /**
         * Where the tenant comes from: none (no tenant label anywhere), header (the value of {@link #header()}), or
         * api-key-hash ("key-" + 12 hex digits of the SHA-256 of the bearer token or x-api-key; never the key).
         */
        @WithDefault("none")
        String source();

        /** The header naming the tenant when source=header (e.g. x-tenant, OpenAI-Organization, OpenAI-Project). */
        @WithDefault("x-tenant")
        String header();

        /**
         * With source=api-key-hash: hash keys with HMAC-SHA256 under this secret instead of plain SHA-256, so a label
         * cannot be matched against guessed keys (set it where keys are short or shared; the same on every pod keeps
         * tenants equal across pods). Unset: SHA-256.
         */
        Optional<String> keyHashSecret();

        /**
         * Only these tenants get their own label value; any other is "other". Unset: the first {@link #max()} whose
         * requests the engine answered with a 2xx.
         */
        Optional<List<String>> allowed();

        /** Distinct tenant label values kept when there is no allowlist; later tenants are "other". */
        @WithDefault("20")
        int max();

        /**
         * The series that carry the tenant label (OpenTelemetry names, as in docs/metrics.md). Default: the request
         * and token counters and the SLO counters; the latency histograms (many buckets each) only when named.
         */
        @WithDefault("llm_sidecar.requests,llm_sidecar.tokens,llm_sidecar.slo.requests,llm_sidecar.slo.good_requests,"
                + "llm_sidecar.slo.output_tokens,llm_sidecar.slo.good_output_tokens,llm_sidecar.useful_output_tokens,"
                + "llm_sidecar.wasted_output_tokens,llm_sidecar.cost.spend")
        List<String> series();
    }

    /** Latency by load band and the saturation knee; see docs/slo-guide.md "The saturation knee". */
    interface Saturation {
        /** A knee known from a load test (requests in flight): exported as is instead of the live estimate. */
        Optional<Integer> knee();

        /** Sliding window of the per-band latencies the live estimate reads. */
        @WithDefault("PT10M")
        Duration window();

        /** Requests a load band needs in the window before it takes part in the estimate. */
        @WithDefault("20")
        int minSamples();

        /**
         * How long an estimated knee is kept after the window last showed it, so a pod that runs just below its knee
         * still has one; a window that shows flat latency past it drops it sooner.
         */
        @WithDefault("PT24H")
        Duration hold();
    }

    /**
     * What serving costs (docs/metrics.md, "Cost"): a price per GPU-hour, or per million input and output tokens.
     * Nothing about cost is exported while neither is set.
     */
    interface Cost {
        /** Price of one GPU-hour (any currency; the series say "{currency}"). */
        Optional<Double> gpuHourPrice();

        /** GPUs behind this engine, at gpu-hour-price each. */
        @WithDefault("1")
        int gpus();

        /** Price per million input (prompt) tokens, for a per-token price instead of GPU-hours. */
        Optional<Double> inputPricePerMillion();

        /** Price per million output tokens, for a per-token price instead of GPU-hours. */
        Optional<Double> outputPricePerMillion();

        /**
         * Price per million input tokens read from the prefix cache (the usage's cached tokens), when they are priced
         * apart; unset: the input price.
         */
        Optional<Double> cachedInputPricePerMillion();

        /**
         * Price per million output tokens spent on reasoning (the usage's reasoning tokens), when they are priced
         * apart; unset: the output price.
         */
        Optional<Double> reasoningOutputPricePerMillion();

        /** Window of the live cost-per-million-tokens gauges. */
        @WithDefault("PT5M")
        Duration window();
    }

    /** Scraping NVIDIA's DCGM exporter for this pod's GPUs (docs/metrics.md, "GPUs"); off unless a URL is set. */
    interface Gpu {
        /**
         * The metrics URL of the DCGM exporter on this pod's node, e.g.
         * http://nvidia-dcgm-exporter.gpu-operator.svc:9400/metrics (the GPU Operator's Service, with
         * internalTrafficPolicy Local so it stays on the node). Unset: no GPU scrape, no GPU series.
         */
        Optional<URI> dcgmUrl();

        /**
         * Keep only the GPUs whose series carry exactly this pod label (dcgm-exporter's --kubernetes mapping; no GPU
         * matches an exporter without it); unset: the HOSTNAME environment variable (the pod name on Kubernetes);
         * "*": every GPU of the exporter.
         */
        Optional<String> pod();

        @WithDefault("PT10S")
        Duration scrapeInterval();

        @WithDefault("PT2S")
        Duration scrapeTimeout();
    }

    /** Scraping the inference server's own Prometheus endpoint (the neighbour in the pod). */
    interface Engine {
        /** Scrape the engine's metrics and re-export normalised gauges (llm_sidecar_engine_*). */
        @WithDefault("true")
        boolean scrapeEnabled();

        /** Engine metrics URL; default: the upstream URL + /metrics (vLLM, SGLang, TGI, llama.cpp --metrics). */
        Optional<URI> metricsUrl();

        @WithDefault("PT5S")
        Duration scrapeInterval();

        @WithDefault("PT2S")
        Duration scrapeTimeout();

        /**
         * Probe the engine's health endpoint (llm_sidecar_engine_ready / _started). vLLM, SGLang, TGI and llama.cpp
         * answer /health; for Ollama set health-path=/ .
         */
        @WithDefault("true")
        boolean healthEnabled();

        /** Health endpoint path, relative to the upstream URL. */
        @WithDefault("/health")
        String healthPath();

        @WithDefault("PT2S")
        Duration healthInterval();

        /**
         * Ask the engine which model it serves (models-url, every models-interval), so requests that name no model
         * (TGI, llama.cpp native) are labelled with it; unknown while it does not say or serves several.
         */
        @WithDefault("true")
        boolean modelDiscovery();

        /**
         * Where the engine lists its models; default: the upstream URL + /v1/models (vLLM, SGLang, TGI, llama.cpp,
         * Ollama). TGI's /info, llama.cpp's /props and Ollama's /api/tags are understood too.
         */
        Optional<URI> modelsUrl();

        @WithDefault("PT10S")
        Duration modelsInterval();

        /**
         * /q/health/ready is DOWN while the engine's health check fails (loading its model, or down), so the pod
         * takes no traffic the engine cannot serve. Off by default for a bare sidecar; on in the Helm chart.
         */
        @WithDefault("false")
        boolean readinessFollowsEngine();

        /**
         * How far the sidecar's token totals may drift from the engine's own counters (output against generated,
         * input against prompt tokens, over an hour) before the alert LLMSidecarTokenDrift fires, as a share of the
         * engine's count. Exported as llm_sidecar_engine_token_drift_limit_ratio, which the rule reads.
         */
        @WithDefault("0.05")
        double tokenDriftLimit();
    }

    /**
     * The trace recorder (package trace, docs/capacity-guide.md): one JSONL record per LLM request, Mooncake's fields
     * as AIPerf reads them, in a bounded set of rotating files. Off by default.
     */
    interface Trace {
        /** Record a trace; needs {@code secret}. */
        @WithDefault("false")
        boolean enabled();

        /** Directory of the trace files (created if missing): the open file and the closed ones. */
        @WithDefault("/var/lib/llm-sidecar/traces")
        String dir();

        /**
         * Key of the keyed hashes (HMAC-SHA256) that make the prompt's block ids and the session ids: hex or base64 of
         * at least 32 random bytes, the same on every replica. Required when enabled (else the recorder stays off);
         * never logged. A new secret starts new ids.
         */
        Optional<String> secret();

        /**
         * File holding the bearer token that {@code /q/traces} requires (a mounted Secret; read again within a second
         * of a change, so it can be rotated). Unset: the trace files are not served (404), the recorder still records.
         */
        Optional<String> tokenFile();

        /** Request header whose value names the conversation (recorded as its keyed hash); unset: no sessions. */
        Optional<String> sessionHeader();

        /** The open file is closed (renamed to its final name) once it holds this many bytes. */
        @WithDefault("67108864")
        long maxFileBytes();

        /** ... or once its first record is this old, so a quiet pod still closes a file every hour. */
        @WithDefault("PT1H")
        Duration maxFileAge();

        /** Closed files kept; the oldest beyond this are deleted. */
        @WithDefault("24")
        int maxFiles();

        /**
         * The directory that holds every pod's trace directory (the chart: its volume, each pod writing
         * {@code <shared-dir>/<pod name>}). Set, retention covers all of them: {@link #maxTotalBytes()} across them,
         * and the directories of pods that are gone are reclaimed ({@link #reclaimAfter()}). Unset: this pod's
         * directory only.
         */
        Optional<String> sharedDir();

        /**
         * Bytes of closed trace files kept in all (across {@link #sharedDir()} when set): the oldest beyond are
         * deleted, whichever pod wrote them. 0: no cap but {@link #maxFiles()} per directory.
         */
        @WithDefault("0")
        long maxTotalBytes();

        /**
         * A directory of {@link #sharedDir()} other than this pod's, with no open file and no file newer than this, is
         * a gone pod's and is reclaimed (its trace files deleted, then it). Longer than max-files × max-file-age.
         */
        @WithDefault("PT48H")
        Duration reclaimAfter();

        /** Requests waiting for the recorder's thread (bodies to hash, records to write); past it, dropped. */
        @WithDefault("4096")
        int queueCapacity();

        /** Request body bytes waiting for the recorder's thread; past it, the request's record is dropped. */
        @WithDefault("4194304")
        long queueBytes();

        /** Of a request body, the first this many bytes are hashed; a prompt past them gets ids of its own. */
        @WithDefault("1048576")
        int maxBodyBytes();

        /**
         * Bytes of canonical prompt per hash-id block: 512 tokens' worth (4 bytes a token for English with a large
         * BPE vocabulary). Your traffic's: 512 × rate(llm_sidecar_trace_prompt_bytes_total) ÷
         * rate(llm_sidecar_trace_prompt_tokens_total).
         */
        @WithDefault("2048")
        int blockBytes();
    }
}
