package dev.llmsidecar.metrics;

import static dev.llmsidecar.metrics.Label.CACHE;
import static dev.llmsidecar.metrics.Label.CRITERION;
import static dev.llmsidecar.metrics.Label.END_REASON;
import static dev.llmsidecar.metrics.Label.ENGINE;
import static dev.llmsidecar.metrics.Label.ERROR_TYPE;
import static dev.llmsidecar.metrics.Label.FINISH_REASON;
import static dev.llmsidecar.metrics.Label.FORMAT;
import static dev.llmsidecar.metrics.Label.HANDLING;
import static dev.llmsidecar.metrics.Label.GPU;
import static dev.llmsidecar.metrics.Label.LOAD_BAND;
import static dev.llmsidecar.metrics.Label.METRIC;
import static dev.llmsidecar.metrics.Label.MODEL;
import static dev.llmsidecar.metrics.Label.OBJECTIVE;
import static dev.llmsidecar.metrics.Label.OPERATION;
import static dev.llmsidecar.metrics.Label.OUTCOME;
import static dev.llmsidecar.metrics.Label.PEER;
import static dev.llmsidecar.metrics.Label.PHASE;
import static dev.llmsidecar.metrics.Label.PRIORITY;
import static dev.llmsidecar.metrics.Label.PROVIDER;
import static dev.llmsidecar.metrics.Label.REASON;
import static dev.llmsidecar.metrics.Label.RESULT;
import static dev.llmsidecar.metrics.Label.ROUTE;
import static dev.llmsidecar.metrics.Label.SERVER_ADDRESS;
import static dev.llmsidecar.metrics.Label.SERVER_PORT;
import static dev.llmsidecar.metrics.Label.SLO_CLASS;
import static dev.llmsidecar.metrics.Label.SOURCE;
import static dev.llmsidecar.metrics.Label.STATUS_CLASS;
import static dev.llmsidecar.metrics.Label.STREAMING;
import static dev.llmsidecar.metrics.Label.STREAM_PHASE;
import static dev.llmsidecar.metrics.Label.TENANT;
import static dev.llmsidecar.metrics.Label.TOKEN_TYPE;
import static dev.llmsidecar.metrics.Label.WHEN;
import static dev.llmsidecar.metrics.Label.WINDOW;
import static dev.llmsidecar.metrics.Label.AFTER;
import static dev.llmsidecar.metrics.Label.LINK;
import static dev.llmsidecar.metrics.Label.PART;
import static dev.llmsidecar.metrics.Label.PREFIX;
import static dev.llmsidecar.metrics.Label.TURN;
import static dev.llmsidecar.metrics.Series.When.END;
import static dev.llmsidecar.metrics.Series.When.END_OK;
import static dev.llmsidecar.metrics.Series.When.LIVE;
import static dev.llmsidecar.metrics.Series.When.NEVER;

import dev.llmsidecar.metrics.Buckets.Family;
import dev.llmsidecar.metrics.Series.Kind;
import dev.llmsidecar.metrics.Series.When;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Every series the sidecar exports, declared once; the Prometheus registry and the OTLP meter are both built from
 * this list, and docs/metrics.md is its prose (a test keeps them equal, another that both backends export what is
 * declared). JVM and process series come from Micrometer's binders and are not part of the contract.
 */
public final class Contract {

    private static final List<Series> ALL = new ArrayList<>();

    /** The OTLP-only attributes of the GenAI series (required or recommended by the semantic conventions). */
    private static final Label[] GENAI = {PROVIDER, SERVER_ADDRESS, SERVER_PORT};

    // ---- LLM requests: latency ----

    public static final Series TTFT = seconds("gen_ai.server.time_to_first_token", Family.FIRST_TOKEN, LIVE, END_OK,
            "Request received to the first token-bearing chunk (content, reasoning or tool call); for a response that "
                    + "does not stream, the whole response (streaming=\"false\")",
            genai(MODEL, OPERATION, STREAMING, TENANT, PRIORITY));
    public static final Series TIME_TO_FIRST_CONTENT_CHUNK = seconds("gen_ai.client.operation.time_to_first_chunk",
            Family.FIRST_TOKEN, LIVE, LIVE, "Request received to the first chunk of generated content (streaming only)",
            genai(MODEL, OPERATION, STREAMING));
    public static final Series TIME_TO_FIRST_RESPONSE_CHUNK = seconds("llm_sidecar.time_to_first_response_chunk",
            Family.FIRST_TOKEN, LIVE, LIVE, "Request received to the first chunk of any kind, a prelude without content "
                    + "(role-only chunk, response.created, message_start) included (streaming only)",
            genai(MODEL, OPERATION, STREAMING));
    public static final Series CHUNK_GAP = seconds("gen_ai.client.operation.time_per_output_chunk", Family.PER_TOKEN,
            LIVE, LIVE, "Gap between successive token-bearing chunks (streaming only)", genai(MODEL, OPERATION, STREAMING));
    public static final Series TPOT = seconds("gen_ai.server.time_per_output_token", Family.PER_TOKEN, END, END_OK,
            "Per streaming request: (e2e - ttft) / (output_tokens - 1)",
            genai(MODEL, OPERATION, STREAMING, OUTCOME, TENANT, PRIORITY));
    public static final Series ITL = seconds("llm_sidecar.inter_token_latency", Family.PER_TOKEN, END, END,
            "Token-weighted inter-token latency: k samples of gap/k for a chunk carrying k tokens (streaming only)",
            genai(MODEL, OPERATION, STREAMING, OUTCOME, TENANT, PRIORITY));
    public static final Series REQUEST_DURATION = seconds("gen_ai.server.request.duration", Family.REQUEST, END, END,
            "Request received to the last token chunk (successful streams) or to the end of the response",
            genai(MODEL, OPERATION, STREAMING, OUTCOME, TENANT, PRIORITY, ERROR_TYPE));
    public static final Series UPSTREAM_HEADERS = seconds("llm_sidecar.time_to_upstream_headers", Family.FIRST_TOKEN,
            END, END, "Request received to the upstream's response headers (recorded when the request ends)",
            genai(MODEL, OPERATION, STREAMING));
    public static final Series FIRST_REASONING = seconds("llm_sidecar.time_to_first_reasoning_token",
            Family.FIRST_TOKEN, LIVE, LIVE, "Request received to the first reasoning (thinking) chunk (streaming only)",
            genai(MODEL, OPERATION, STREAMING));
    public static final Series FIRST_ANSWER = seconds("llm_sidecar.time_to_first_answer_token", Family.FIRST_TOKEN,
            LIVE, LIVE, "Request received to the first answer chunk: content, refusal or tool call (streaming only)",
            genai(MODEL, OPERATION, STREAMING));
    public static final Series TTFT_BY_CACHE = seconds("llm_sidecar.time_to_first_token_by_cache", Family.FIRST_TOKEN,
            END_OK, END_OK, "TTFT of successful requests by prefix-cache hit (cached_tokens > 0), miss (0) or "
                    + "unknown (not reported); streaming=\"false\": the whole response",
            genai(MODEL, OPERATION, STREAMING, CACHE));
    public static final Series ENGINE_QUEUE = seconds("llm_sidecar.engine_reported_queue", Family.REQUEST, END, END,
            "Queue time the engine reported for the request", genai(MODEL, OPERATION));
    public static final Series ENGINE_TTFT = seconds("llm_sidecar.engine_reported_time_to_first_token", Family.REQUEST,
            END, END, "Engine-reported time from its arrival to the first token (queue + prefill)",
            genai(MODEL, OPERATION));
    public static final Series ENGINE_DECODE = seconds("llm_sidecar.engine_reported_decode", Family.REQUEST, END, END,
            "Engine-reported time generating the output tokens", genai(MODEL, OPERATION));
    public static final Series TTFT_OUTSIDE_ENGINE = seconds("llm_sidecar.time_to_first_token_outside_engine",
            Family.FIRST_TOKEN, END, END, "Streaming requests: TTFT minus the engine-reported TTFT (network, proxy, "
                    + "HTTP framing, detokenizing)", genai(MODEL, OPERATION));
    public static final Series DURATION_OUTSIDE_ENGINE = seconds("llm_sidecar.request_duration_outside_engine",
            Family.REQUEST, END, END, "Requests that do not stream: E2E minus the engine-reported total (queue + first "
                    + "token + decode)", genai(MODEL, OPERATION));

    // ---- LLM requests: tokens and counts ----

    public static final Series TOKEN_USAGE = add(new Series("gen_ai.client.token.usage", Kind.HISTOGRAM, "{token}",
            "Tokens per request by type (input, output)", genai(MODEL, OPERATION, TOKEN_TYPE, TENANT), Family.TOKENS, END, END));
    public static final Series TOKENS = counter("llm_sidecar.tokens", "{token}", "Tokens of finished LLM requests by "
            + "type; cache_reporting_input: input tokens of requests that reported cached_tokens (the hit ratio's "
            + "denominator)", MODEL, OPERATION, TOKEN_TYPE, TENANT);
    public static final Series TOKEN_SOURCE = counter("llm_sidecar.output_token_source", "{request}",
            "Finished LLM requests by where their output token count came from", SOURCE);
    public static final Series REQUESTS = counter("llm_sidecar.requests", "{request}", "Finished LLM requests, by "
            + "outcome and by how each ended (end_reason)", MODEL, OPERATION, STREAMING, OUTCOME, TENANT, END_REASON);
    public static final Series ABANDONED_TOKENS = counter("llm_sidecar.abandoned_output_tokens", "{token}",
            "Output tokens delivered to clients that then went away before the end (client_gone_mid_stream, or "
                    + "stalled when the client gave up), counted from the chunks forwarded to them", MODEL, END_REASON);
    public static final Series FINISH_REASONS = counter("llm_sidecar.finish_reasons", "{request}",
            "Finished LLM requests by finish_reason", MODEL, FINISH_REASON);
    public static final Series HTTP_REQUESTS = counter("llm_sidecar.http_requests", "{request}",
            "Proxied HTTP requests by route (llm, other) and status class", ROUTE, STATUS_CLASS);
    public static final Series IN_FLIGHT = gauge("llm_sidecar.requests_in_flight", "{request}",
            "LLM requests received and not yet finished");
    public static final Series WAITING_FIRST_TOKEN = gauge("llm_sidecar.requests_waiting_first_token", "{request}",
            "LLM requests received that have no token yet (queued or prefilling upstream)");
    public static final Series STALLED_STREAMS = gauge("llm_sidecar.stalled_streams", "{request}",
            "Open streams silent longer than their phase's stall threshold (sidecar.stall.*), read when the metrics "
                    + "are read", MODEL, STREAM_PHASE);
    public static final Series CLIENT_PAUSED_STREAMS = gauge("llm_sidecar.streams_paused_by_client", "{request}",
            "Open streams whose client is not taking bytes (the sidecar's writes to it are blocked, so it stopped "
                    + "reading the engine), read when the metrics are read; they count in no stall", MODEL);
    public static final Series LONGEST_SILENCE = gauge("llm_sidecar.stream_longest_silence", "s",
            "The longest current silence of an open stream (since its last token, or its arrival before the first), "
                    + "0 when none is open", MODEL, STREAM_PHASE);
    public static final Series STREAM_LONGEST_GAP = seconds("llm_sidecar.stream_longest_gap", Family.REQUEST, END,
            END, "Per finished stream with a token: its longest silence after the first token (between token chunks, "
                    + "or before an end that did not complete)", List.of(MODEL, OPERATION));
    public static final Series IN_FLIGHT_MAX = gauge("llm_sidecar.requests_in_flight_max", "{request}",
            "Highest number of LLM requests in flight at once since start");
    public static final Series WAITING_DEPTH = add(new Series("llm_sidecar.requests_waiting_first_token_depth",
            Kind.HISTOGRAM, "{request}", "Requests waiting for their first token, sampled at a fixed period: bucket "
                    + "share = share of time the queue was at most that deep", List.of(), Family.DEPTH, LIVE, LIVE));
    public static final Series CHUNK_WRITE_DELAY = seconds("llm_sidecar.chunk_write_delay", Family.FORWARDING, LIVE, LIVE,
            "Time from a response read's arrival from upstream until it was written to the client socket", List.of());
    public static final Series BODY_NOT_INSPECTED = counter("llm_sidecar.body_inspection_skipped", "{request}",
            "LLM request bodies forwarded without inspection (not_json, too_large)", REASON);
    public static final Series UNDECODABLE = counter("llm_sidecar.undecodable_chunks", "{event}",
            "Response chunks or bodies that could not be decoded (forwarded untouched)", OPERATION, FORMAT);
    public static final Series ENGINE_VALUES_CLAMPED = counter("llm_sidecar.engine_values_clamped", "{value}",
            "Numbers in engine responses capped before use, by field: token counts above 2^24, a chunk credited with "
                    + "more than 4096 tokens for ITL (the counts exported are the capped ones)", Label.FIELD);

    // ---- the proxy keeping traffic flowing ----

    public static final Series USAGE_INJECTED = counter("llm_sidecar.usage_injected", "{request}",
            "Streaming requests where the sidecar turned stream_options.include_usage on");
    public static final Series USAGE_SKIPPED = counter("llm_sidecar.usage_injection_skipped", "{request}",
            "Streaming requests without include_usage that the sidecar left as they were, by reason", REASON);
    public static final Series USAGE_NOT_REMOVED = counter("llm_sidecar.usage_not_removed", "{request}",
            "Injected streams whose usage could not be removed exactly, by reason", REASON);
    public static final Series USAGE_CHUNKS_STRIPPED = counter("llm_sidecar.usage_chunks_stripped", "{event}",
            "Injected usage-only chunks removed from the client stream");
    public static final Series USAGE_MEMBERS_REMOVED = counter("llm_sidecar.usage_members_removed", "{event}",
            "Usage members removed from chunks that reached the client (e.g. \"usage\":null)");
    public static final Series USAGE_REFRAMED = counter("llm_sidecar.usage_reframed", "{request}",
            "Content-Length-framed injected streams sent to the client chunked after removal");
    public static final Series UPSTREAM_RETRIES = counter("llm_sidecar.upstream_retries", "{request}",
            "Requests sent again on a new upstream connection, by reason", REASON);
    public static final Series IDLE_CONNECTIONS_RETIRED = counter("llm_sidecar.upstream_idle_connections_retired",
            "{connection}", "Pooled upstream connections closed once idle for the keep-alive timeout (by the pool's sweep, "
            + "or when taken)");
    public static final Series BODY_TOO_LARGE = counter("llm_sidecar.request_body_too_large", "{request}",
            "Requests refused with 413: body over sidecar.proxy.max-request-body-bytes", WHEN);
    public static final Series REQUESTS_SHED = counter("llm_sidecar.requests_shed", "{request}",
            "Requests refused with 503 (x-llm-sidecar-error: overloaded) because the sidecar's memory was past its "
                    + "mark; open streams went on");
    public static final Series MEMORY_USED = gauge("llm_sidecar.memory.used_bytes", "By",
            "Memory in use against each budget: heap (the tenured pool after its last collection and the survivor "
                    + "space after the last young one), direct (Netty's "
                    + "buffers), request_bodies (bodies held for inspection)", Label.BUDGET);
    public static final Series MEMORY_BUDGET = gauge("llm_sidecar.memory.budget_bytes", "By",
            "Each budget: heap and direct, the marks past which new requests are shed (sidecar.limits.shed-heap-fraction, shed-direct-fraction); "
                    + "request_bodies, sidecar.limits.inspect-budget (past it bodies are piped uninspected)",
            Label.BUDGET);
    public static final Series CLIENT_TIMEOUTS = counter("llm_sidecar.client_timeouts", "{request}",
            "Clients cut for not moving (sidecar.limits.*): a request head not whole within the head timeout "
                    + "(when=\"request_head\", connection closed), a request body paused past the body timeout "
                    + "(\"request_body\", 408), a response the client did not read past the send timeout (\"response\", "
                    + "stream cut)", WHEN);
    public static final Series CONNECTION_ERRORS = counter("llm_sidecar.connection_errors", "{connection}",
            "Connections that failed (reset, broken pipe) outside an exchange's own handling", PEER);
    public static final Series NOT_DECODED = counter("llm_sidecar.responses_not_decoded", "{request}",
            "Successful LLM responses forwarded without decoding, by reason", REASON);
    public static final Series RELAY_FALLBACKS = counter("llm_sidecar.relay_fallbacks", "{response}",
            "Response bodies that went through the HTTP codecs instead of the raw relay, by reason", REASON);
    public static final Series RELAY_REFRAMES = counter("llm_sidecar.relay_reframes", "{response}",
            "Raw-relayed bodies whose rest the sidecar framed itself after a rewrite cut bytes (include_usage)");
    public static final Series FRAMING_ANOMALIES = counter("llm_sidecar.upstream_framing_anomalies", "{response}",
            "Raw-relayed bodies cut at a chunked-framing anomaly or bytes after their end (both connections closed)");

    // ---- SLO ----

    public static final Series SLO_REQUESTS = counter("llm_sidecar.slo.requests", "{request}",
            "Finished LLM requests that count toward the SLO (server errors included; client errors, harmless "
                    + "cancellations and requests no objective applies to not)", MODEL, SLO_CLASS, TENANT, PRIORITY);
    public static final Series SLO_GOOD_REQUESTS = counter("llm_sidecar.slo.good_requests", "{request}",
            "Requests that completed and met every applicable objective", MODEL, SLO_CLASS, TENANT, PRIORITY);
    public static final Series SLO_OUTPUT_TOKENS = counter("llm_sidecar.slo.output_tokens", "{token}",
            "Output tokens of the requests in llm_sidecar.slo.requests", MODEL, SLO_CLASS, TENANT, PRIORITY);
    public static final Series SLO_GOOD_OUTPUT_TOKENS = counter("llm_sidecar.slo.good_output_tokens", "{token}",
            "Output tokens of good requests", MODEL, SLO_CLASS, TENANT, PRIORITY);
    public static final Series SLO_OBJECTIVE_REQUESTS = counter("llm_sidecar.slo.objective_requests", "{request}",
            "Requests an objective applied to", OBJECTIVE, MODEL, SLO_CLASS, PRIORITY);
    public static final Series SLO_OBJECTIVE_GOOD_REQUESTS = counter("llm_sidecar.slo.objective_good_requests",
            "{request}", "Requests that met the objective", OBJECTIVE, MODEL, SLO_CLASS, PRIORITY);
    public static final Series SLO_VIOLATIONS = counter("llm_sidecar.slo.violations", "{request}",
            "Requests that violated a criterion of an objective", OBJECTIVE, MODEL, SLO_CLASS, CRITERION,
            PRIORITY);
    public static final Series SLO_EXCLUDED = counter("llm_sidecar.slo.excluded_requests", "{request}",
            "Finished LLM requests that do not count toward the SLO, by reason", MODEL, SLO_CLASS, REASON);
    public static final Series SLO_DECLARED_VALUES = counter("llm_sidecar.slo.declared_values", "{value}",
            "Per-request SLO targets in the declared headers (sidecar.slo.declared), by criterion and how they were "
                    + "taken: accepted, clamped to the configured bounds, or unparseable (ignored)", CRITERION, HANDLING);
    public static final Series SLO_TARGET = gauge("llm_sidecar.slo.target_ratio", "1",
            "Configured target share of good requests per objective", OBJECTIVE);

    // ---- useful and wasted work, cost ----

    public static final Series USEFUL_TOKENS = counter("llm_sidecar.useful_output_tokens", "{token}",
            "Output tokens of requests that completed and met every objective that applies to them", MODEL, TENANT);
    public static final Series WASTED_TOKENS = counter("llm_sidecar.wasted_output_tokens", "{token}",
            "Output tokens generated for requests that served no user: cancelled by the client, failed, or finished "
                    + "outside their SLO", MODEL, REASON, TENANT);
    public static final Series COST_SPEND = counter("llm_sidecar.cost.spend", "{currency}",
            "Serving cost of finished requests at the configured price per million input and output tokens",
            MODEL, TENANT);
    public static final Series COST_GPU_SPEND = counter("llm_sidecar.cost.gpu_spend", "{currency}",
            "Serving cost accrued since start at the configured price per GPU-hour and GPU count");
    public static final Series COST_PER_MILLION_OUTPUT = gauge("llm_sidecar.cost.per_million_output_tokens",
            "{currency}", "Cost over sidecar.cost.window / output tokens generated in it x 10^6 (NaN without tokens)");
    public static final Series COST_PER_MILLION_GOOD = gauge("llm_sidecar.cost.per_million_useful_output_tokens",
            "{currency}", "Cost over sidecar.cost.window / useful output tokens in it x 10^6 (NaN without them)");

    // ---- live windows ----

    public static final Series WINDOW_P99 = add(new Series("llm_sidecar.latency_window_p99", Kind.GAUGE, "s",
            "p99 over a sliding window (HdrHistogram), successful requests; TTFT of streaming requests only",
            List.of(MODEL, METRIC, WINDOW), Family.NONE, LIVE, LIVE));
    public static final Series DRIFT = gauge("llm_sidecar.latency_p99_drift_ratio", "1",
            "p99 over the short window / p99 over the baseline window; NaN on thin data", MODEL, METRIC);

    // ---- saturation: latency by the load a request met, and the knee ----

    public static final Series TTFT_BY_LOAD = seconds("llm_sidecar.time_to_first_token_by_load", Family.FIRST_TOKEN,
            END_OK, END_OK, "Successful streaming requests: TTFT by the LLM requests in flight when the request "
                    + "arrived (itself included), in fixed load bands", List.of(LOAD_BAND));
    public static final Series TPOT_BY_LOAD = seconds("llm_sidecar.time_per_output_token_by_load", Family.PER_TOKEN,
            END_OK, END_OK, "Successful streaming requests: TPOT by the LLM requests in flight when the request "
                    + "arrived (itself included), in fixed load bands", List.of(LOAD_BAND));
    public static final Series SATURATION_KNEE = gauge("llm_sidecar.saturation.knee_requests", "{request}",
            "Requests in flight at which latency starts to rise faster than load: configured, else estimated from "
                    + "the load bands (NaN until seen)");
    public static final Series SATURATION_LOAD = gauge("llm_sidecar.saturation.load_ratio", "1",
            "Requests in flight now / the knee (NaN while the knee is unknown)");

    // ---- the engine ----

    public static final Series ENGINE_UP = gauge("llm_sidecar.engine.up", "1",
            "1 when the last scrape of the engine's metrics endpoint succeeded and was recognised, else 0");
    public static final Series ENGINE_INFO = gauge("llm_sidecar.engine.info", "1", "Detected engine = 1", ENGINE);
    public static final Series ENGINE_WAITING = gauge("llm_sidecar.engine.requests_waiting", "{request}",
            "Requests queued inside the engine, as the engine reports it (NaN when unknown)");
    public static final Series ENGINE_RUNNING = gauge("llm_sidecar.engine.requests_running", "{request}",
            "Requests in the engine's running batch, as the engine reports it (NaN when unknown)");
    public static final Series ENGINE_KV = gauge("llm_sidecar.engine.kv_cache_usage_ratio", "1",
            "Engine KV-cache usage 0..1 (NaN when unknown)");
    public static final Series ENGINE_PREFIX_HIT = gauge("llm_sidecar.engine.prefix_cache_hit_ratio", "1",
            "Engine prefix-cache hit ratio 0..1 over the last scrape interval (NaN when unknown)");
    public static final Series ENGINE_PREEMPTIONS = engineCounter("llm_sidecar.engine.preemptions", "{request}",
            "Requests the engine preempted since it started (vLLM preemptions, SGLang retractions; NaN when unknown)");
    // LIVE: read at collection time like the gauges; no point while the engine's metrics cannot be read
    public static final Series ENGINE_PHASE = add(new Series("llm_sidecar.engine.phase_duration", Kind.HISTOGRAM, "s",
            "The engine's own per-request phase durations (queue, prefill, decode, inference), re-exported with the "
                    + "engine's bucket bounds", List.of(PHASE), Family.ENGINE, LIVE, LIVE));
    public static final Series ENGINE_PROMPT_TOKENS = engineCounter("llm_sidecar.engine.prompt_tokens", "{token}",
            "Prompt tokens the engine processed since it started, computed and taken from the prefix cache");
    public static final Series ENGINE_PROMPT_CACHED = engineCounter("llm_sidecar.engine.prompt_tokens_cached",
            "{token}", "Prompt tokens the engine took from its prefix cache since it started");
    public static final Series ENGINE_GENERATION_TOKENS = engineCounter("llm_sidecar.engine.generation_tokens",
            "{token}", "Output tokens the engine generated since it started, for every request, cancelled ones too");
    public static final Series ENGINE_TOKEN_DRIFT_LIMIT = gauge("llm_sidecar.engine.token_drift_limit_ratio", "1",
            "How far the sidecar's token totals may drift from the engine's own counters before the reconciliation "
                    + "alert fires, as a share of the engine's count (sidecar.engine.token-drift-limit)");
    public static final Series ENGINE_SPEC_DRAFTS = engineCounter("llm_sidecar.engine.spec_decode_drafts", "{draft}",
            "Speculative-decoding draft steps since the engine started");
    public static final Series ENGINE_SPEC_DRAFT_TOKENS = engineCounter("llm_sidecar.engine.spec_decode_draft_tokens",
            "{token}", "Tokens proposed by the draft model since the engine started");
    public static final Series ENGINE_SPEC_ACCEPTED = engineCounter("llm_sidecar.engine.spec_decode_accepted_tokens",
            "{token}", "Draft tokens the target model accepted since the engine started");
    public static final Series ENGINE_SCRAPES = counter("llm_sidecar.engine.scrapes", "{scrape}",
            "Scrapes of the engine's metrics endpoint by result", RESULT);
    public static final Series ENGINE_SCRAPE_AGE = gauge("llm_sidecar.engine.scrape_age", "s",
            "Time since the engine's metrics were last read successfully: the age of the engine gauges (NaN before "
                    + "the first)");
    public static final Series ENGINE_MODEL_PROBES = counter("llm_sidecar.engine.model_probes", "{probe}",
            "Requests for the engine's served models (sidecar.engine.models-url) by result", RESULT);
    public static final Series ENGINE_READY = gauge("llm_sidecar.engine.ready", "1",
            "1 when the engine's health endpoint answered 2xx at the last probe, else 0");
    public static final Series ENGINE_STARTED = gauge("llm_sidecar.engine.started", "1",
            "1 once the engine has been ready at least once since the sidecar started, else 0 (still loading)");

    // ---- GPUs (NVIDIA DCGM exporter, optional) ----
    // Registered only with sidecar.gpu.dcgm-url (gpu/GpuScrapeLifecycle); a GPU's gauges once it was first seen, NaN
    // while the exporter cannot be read or no longer lists it. Names: dcgm-exporter's etc/default-counters.csv.

    public static final Series GPU_UP = gauge("llm_sidecar.gpu.up", "1",
            "1 when the last scrape of the DCGM exporter succeeded and had GPUs of this pod, else 0");
    public static final Series GPU_UTILIZATION = gauge("llm_sidecar.gpu.utilization_ratio", "1",
            "Share of time the GPU was busy 0..1 (DCGM_FI_DEV_GPU_UTIL / 100; without it, e.g. a MIG instance, "
                    + "DCGM_FI_PROF_GR_ENGINE_ACTIVE)", GPU);
    public static final Series GPU_MEMORY_USED = gauge("llm_sidecar.gpu.memory_used_bytes", "By",
            "GPU framebuffer memory used (DCGM_FI_DEV_FB_USED, MiB x 2^20)", GPU);
    public static final Series GPU_MEMORY_RATIO = gauge("llm_sidecar.gpu.memory_used_ratio", "1",
            "GPU framebuffer memory used / (used + free) 0..1 (DCGM_FI_DEV_FB_USED, DCGM_FI_DEV_FB_FREE)", GPU);
    public static final Series GPU_POWER = gauge("llm_sidecar.gpu.power_watts", "W",
            "GPU power draw (DCGM_FI_DEV_POWER_USAGE)", GPU);
    public static final Series GPU_SCRAPES = counter("llm_sidecar.gpu.scrapes", "{scrape}",
            "Scrapes of the DCGM exporter by result", RESULT);

    // ---- conversations (sidecar.conversations.enabled, docs/metrics.md "Conversations"): chat requests only ----

    public static final Series CONVERSATION_TTFT = seconds("llm_sidecar.conversation.time_to_first_token",
            Family.FIRST_TOKEN, END_OK, END_OK, "Successful streaming chat requests: TTFT by the request's turn in its "
                    + "conversation, what it answers, and whether its conversation was seen before (warm) or not (cold)",
            List.of(MODEL, TURN, AFTER, PREFIX));
    public static final Series CONVERSATION_INPUT_TOKENS = add(new Series("llm_sidecar.conversation.input_tokens",
            Kind.HISTOGRAM, "{token}", "Input (prompt) tokens per chat request whose engine reported them, by turn, "
                    + "what it answers and cold/warm", List.of(MODEL, TURN, AFTER, PREFIX), Family.TOKENS, END, END));
    public static final Series CONVERSATION_CACHE_HIT = add(new Series(
            "llm_sidecar.conversation.prefix_cache_hit_ratio", Kind.HISTOGRAM, "1", "Cached / input tokens per chat "
                    + "request whose engine reported cached_tokens, by turn, what it answers and cold/warm",
            List.of(MODEL, TURN, AFTER, PREFIX), Family.RATIO, END, END));
    public static final Series CONVERSATION_TURN_GAP = seconds("llm_sidecar.conversation.turn_gap", Family.REQUEST,
            END, END, "From the end of a turn's answer to the arrival of the next turn of its conversation: the user's "
                    + "time (after=\"user\") or a tool's (after=\"tool\")", List.of(MODEL, TURN, AFTER));
    public static final Series CONVERSATION_TURNS = add(new Series("llm_sidecar.conversation.turns", Kind.HISTOGRAM,
            "{turn}", "Turns per conversation seen here, observed when its last turn leaves the table", List.of(),
            Family.DEPTH, END, END));
    public static final Series CONVERSATION_REQUESTS = counter("llm_sidecar.conversation.requests", "{request}",
            "Chat requests by how they link to the turn before: first (cold), next, next_of_unfinished (the turn "
                    + "before had not ended: no gap), repeated (the same history again: a regeneration), unknown (an id "
                    + "this sidecar never saw)", MODEL, LINK);
    public static final Series CONVERSATION_AGENT_TIME = counter("llm_sidecar.conversation.agent_time_seconds", "s",
            "Time of agent loops (conversations with tool turns): in the model (part=\"model\", arrival to end of the "
                    + "requests that called a tool or answer one) and in its tools (part=\"tool\", the gaps before "
                    + "the requests that answer a tool)", MODEL, PART);
    public static final Series CONVERSATION_EVICTIONS = counter("llm_sidecar.conversation.evictions", "{entry}",
            "Turns that left the table of conversations, by reason: capacity (sidecar.conversations.max-entries), age "
                    + "(sidecar.conversations.max-age)", REASON);
    public static final Series CONVERSATION_ENTRIES = gauge("llm_sidecar.conversation.table_entries", "{entry}",
            "Turns held in the table of conversations");

    // ---- the trace recorder (sidecar.trace.*, docs/capacity-guide.md): present while it records ----

    public static final Series TRACE_RECORDS = counter("llm_sidecar.trace.records", "{record}",
            "Records the trace recorder wrote (one per LLM request)");
    public static final Series TRACE_RECORDS_DROPPED = counter("llm_sidecar.trace.records_dropped", "{record}",
            "LLM requests the trace recorder did not record, by reason", REASON);
    public static final Series TRACE_WRITING = gauge("llm_sidecar.trace.writing", "1",
            "1 while the trace recorder's records reach its files, 0 from a failed attempt to the next that succeeds");
    public static final Series TRACE_WRITE_FAILURES = counter("llm_sidecar.trace.write_failures", "{failure}",
            "Failed attempts to prepare the trace directory, open a trace file or write to one, by reason", REASON);
    public static final Series TRACE_FILES_CLOSED = counter("llm_sidecar.trace.files_closed", "{file}",
            "Trace files closed (renamed to their final name), at the size or age limit or at shutdown");
    public static final Series TRACE_FILES_DELETED = counter("llm_sidecar.trace.files_deleted", "{file}",
            "Closed trace files deleted: the oldest beyond sidecar.trace.max-files or max-total-bytes, and those of "
                    + "reclaimed directories");
    public static final Series TRACE_DIRECTORIES_RECLAIMED = counter("llm_sidecar.trace.directories_reclaimed",
            "{directory}", "Trace directories of gone pods reclaimed from sidecar.trace.shared-dir (no open file, "
                    + "nothing newer than sidecar.trace.reclaim-after)");
    public static final Series TRACE_OPEN_FILE_BYTES = gauge("llm_sidecar.trace.open_file_bytes", "By",
            "Bytes of the trace files still open");
    public static final Series TRACE_CLOSED_FILE_BYTES = gauge("llm_sidecar.trace.closed_file_bytes", "By",
            "Bytes of the closed trace files kept");
    public static final Series TRACE_PROMPT_BYTES = counter("llm_sidecar.trace.prompt_bytes", "By",
            "Canonical prompt bytes of recorded requests whose prompt tokens the engine reported");
    public static final Series TRACE_PROMPT_TOKENS = counter("llm_sidecar.trace.prompt_tokens", "{token}",
            "Prompt tokens the engine reported for those requests");

    // ---- OTLP export (Prometheus only: telemetry about losing telemetry is read where it is not lost) ----

    public static final Series OTLP_SPANS_EXPORTED = promOnly("llm_sidecar.otlp.spans_exported", Kind.COUNTER,
            "{span}", "Spans the OTLP endpoint accepted");
    public static final Series OTLP_SPANS_DROPPED = promOnly("llm_sidecar.otlp.spans_dropped", Kind.COUNTER, "{span}",
            "Spans lost: the export queue was full, or the endpoint failed", REASON);
    public static final Series OTLP_SPAN_QUEUE = promOnly("llm_sidecar.otlp.span_queue_size", Kind.GAUGE, "{span}",
            "Spans accepted for export and not yet exported or dropped");
    public static final Series OTLP_SPAN_QUEUE_CAPACITY = promOnly("llm_sidecar.otlp.span_queue_capacity", Kind.GAUGE,
            "{span}", "otel.bsp.max.queue.size");
    public static final Series OTLP_POINTS_EXPORTED = promOnly("llm_sidecar.otlp.metric_points_exported",
            Kind.COUNTER, "{point}", "Metric data points the OTLP endpoint accepted");
    public static final Series OTLP_POINTS_DROPPED = promOnly("llm_sidecar.otlp.metric_points_dropped", Kind.COUNTER,
            "{point}", "Metric data points in exports that failed or timed out");

    private Contract() {
    }

    /** Every declared series, in declaration order. */
    public static List<Series> all() {
        return Collections.unmodifiableList(ALL);
    }

    private static List<Label> genai(Label... labels) {
        List<Label> all = new ArrayList<>(List.of(labels));
        all.addAll(List.of(GENAI));
        return all;
    }

    private static Series add(Series s) {
        ALL.add(s);
        return s;
    }

    private static Series seconds(String name, Family family, When prometheus, When otlp, String description,
            List<Label> labels) {
        return add(new Series(name, Kind.HISTOGRAM, "s", description, labels, family, prometheus, otlp));
    }

    private static Series counter(String name, String unit, String description, Label... labels) {
        return add(new Series(name, Kind.COUNTER, unit, description, List.of(labels), Family.NONE, END, END));
    }

    private static Series gauge(String name, String unit, String description, Label... labels) {
        return add(new Series(name, Kind.GAUGE, unit, description, List.of(labels), Family.NONE, LIVE, LIVE));
    }

    /** The engine's own cumulative count, passed through (NaN when the engine does not report it). */
    private static Series engineCounter(String name, String unit, String description) {
        return add(new Series(name, Kind.COUNTER, unit, description, List.of(), Family.NONE, LIVE, LIVE));
    }

    private static Series promOnly(String name, Kind kind, String unit, String description, Label... labels) {
        return add(new Series(name, kind, unit, description, List.of(labels), Family.NONE, LIVE, NEVER));
    }
}
