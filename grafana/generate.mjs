#!/usr/bin/env node
// Generates grafana/dashboards/*.json (the provisioning-ready dashboards) from the compact definitions below.
// Usage: node grafana/generate.mjs [outDir]   (default grafana/dashboards). No dependencies.
// The committed JSON must equal this script's output: OpsDashboardsTest regenerates into target/ and compares,
// validates every dashboard against @grafana/schema (tsc) and runs every query in real Prometheus (OpsEndToEndTest).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = process.argv[2] ?? join(here, 'dashboards');

const DS = { type: 'prometheus', uid: '${datasource}' };
// label matchers; every variable is multi-valued with All = ".*"
const SEL = 'namespace=~"$namespace", pod=~"$pod"';
const SELM = `${SEL}, model=~"$model"`;
const SELC = `${SELM}, slo_class=~"$slo_class"`;
const RI = '$__rate_interval';

function variable(name, label, query) {
  return {
    name, label, type: 'query', datasource: DS,
    query: { qryType: 1, query, refId: 'PrometheusVariableQueryEditor-VariableQuery' },
    refresh: 2, includeAll: true, multi: true, allValue: '.*',
    current: { text: ['All'], value: ['$__all'] }, sort: 1, hide: 0,
  };
}

const templating = {
  list: [
    { name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus', hide: 0,
      current: { text: 'default', value: 'default' } },
    { name: 'job', label: 'scrape job', type: 'constant', query: 'llm-sidecar', hide: 2,
      current: { text: 'llm-sidecar', value: 'llm-sidecar' } },
    variable('namespace', 'namespace', 'label_values(llm_sidecar_requests_in_flight, namespace)'),
    variable('pod', 'pod', 'label_values(llm_sidecar_requests_in_flight{namespace=~"$namespace"}, pod)'),
    variable('model', 'model', `label_values(llm_sidecar_requests_total{${SEL}}, model)`),
    variable('slo_class', 'SLO class', `label_values(llm_sidecar_slo_requests_total{${SELM}}, slo_class)`),
  ],
};

/** target: [expr, legend, extra] */
function t(expr, legendFormat, extra = {}) {
  return { expr, legendFormat, ...extra };
}

/**
 * A quantile of a histogram the sidecar exports classic, native or both (docs/metrics.md "Native histograms"): from
 * the classic buckets where Prometheus stored them, else from the native histogram.
 */
function hq(q, metric, matchers, by = '') {
  const classicBy = by ? `${by}, le` : 'le';
  const nativeBy = by ? ` by (${by})` : '';
  return `histogram_quantile(${q}, sum by (${classicBy}) (rate(${metric}_bucket{${matchers}}[${RI}])))\n`
    + `  or histogram_quantile(${q}, sum${nativeBy} (rate(${metric}{${matchers}}[${RI}])))`;
}

function quantiles(metric, matchers, by = 'model', qs = [0.5, 0.95, 0.99]) {
  return qs.map((q) => t(
    hq(q, metric, matchers, by),
    `p${Math.round(q * 100)} {{${by}}}`, { exemplar: true }));
}

function panel(kind, title, unit, targets, opts = {}) {
  return { kind, title, unit, targets, ...opts };
}
const ts = (title, unit, targets, opts) => panel('timeseries', title, unit, targets, opts);
const stat = (title, unit, targets, opts) => panel('stat', title, unit, targets, opts);
const heat = (title, expr, description, unit = title.includes('token') ? 'short' : 's') => panel('heatmap', title, unit,
  [t(expr, '{{le}}', { format: 'heatmap', exemplar: true })], { description });
/** Heatmap of a histogram, classic buckets or else native ({@link hq}). */
const heatOf = (title, metric, matchers, description) => heat(title,
  `sum by (le) (increase(${metric}_bucket{${matchers}}[${RI}]))\n  or sum(increase(${metric}{${matchers}}[${RI}]))`, description);

const dashboards = [
  {
    uid: 'llm-sidecar-slo', title: 'LLM sidecar / SLO overview', file: 'llm-sidecar-slo.json',
    description: 'Goodput, attainment per objective, error-budget burn and p99 drift (docs/slo.md).',
    panels: [
      stat('Attainment per objective (1h)', 'percentunit', [t(
        `sum by (objective) (rate(llm_sidecar_slo_objective_good_requests_total{${SELC}}[1h]))\n  / sum by (objective) (rate(llm_sidecar_slo_objective_requests_total{${SELC}}[1h]))`,
        '{{objective}}')], { w: 8, decimals: 3 }),
      stat('Target per objective', 'percentunit', [t(
        `max by (objective) (llm_sidecar_slo_target_ratio{${SEL}})`, '{{objective}}')], { w: 8, decimals: 3 }),
      stat('Error budget left (30d)', 'percentunit', [
        t('min by (objective) (llm_sidecar:slo_objective_error_budget_remaining:ratio30d{namespace=~"$namespace"})', '{{objective}}'),
        t('min by (objective) (llm_sidecar:slo_objective_observed:ratio30d{namespace=~"$namespace"})', '{{objective}}: share of 30 days seen'),
      ], { w: 8, decimals: 1,
        description: 'Share of the 30-day error budget not yet spent, per objective (all its models and classes), from the recording rules: 1 - burn rate over what Prometheus has seen x the share of 30 days it has seen (shown beside it). Minutes of data cannot spend more than their share (docs/slo-guide.md).' }),
      ts('Goodput (requests/s)', 'reqps', [
        t(`sum by (model, slo_class) (rate(llm_sidecar_slo_good_requests_total{${SELC}}[${RI}]))`, 'good {{model}} {{slo_class}}'),
        t(`sum by (model, slo_class) (rate(llm_sidecar_slo_requests_total{${SELC}}[${RI}]))`, 'all {{model}} {{slo_class}}'),
      ], { description: 'Good requests: completed and met every objective that applies (docs/slo.md).' }),
      ts('Goodput (output tokens/s)', 'short', [
        t(`sum by (model, slo_class) (rate(llm_sidecar_slo_good_output_tokens_total{${SELC}}[${RI}]))`, 'good {{model}} {{slo_class}}'),
        t(`sum by (model, slo_class) (rate(llm_sidecar_slo_output_tokens_total{${SELC}}[${RI}]))`, 'all {{model}} {{slo_class}}'),
      ]),
      ts('Output tokens: useful and wasted (by reason)', 'short', [
        t(`sum(rate(llm_sidecar_useful_output_tokens_total{${SELM}}[${RI}]))`, 'useful'),
        t(`sum by (reason) (rate(llm_sidecar_wasted_output_tokens_total{${SELM}}[${RI}]))`, 'wasted: {{reason}}'),
        t(`sum(rate(llm_sidecar_engine_generation_tokens_total{${SEL}}[${RI}]))`, 'engine generated (all models)'),
      ], { description: 'Every generated output token is useful (its request completed and met every objective that applies) or wasted: the client cancelled (tokens streamed before it did), the request failed, or it finished outside its SLO (docs/metrics.md). The engine\'s own count is higher by what it generated after a client went away, before its abort arrived.' }),
      ts('Token goodput ratio', 'percentunit', [t(
        `sum by (model) (rate(llm_sidecar_useful_output_tokens_total{${SELM}}[${RI}]))\n  / (sum by (model) (rate(llm_sidecar_useful_output_tokens_total{${SELM}}[${RI}]))\n     + (sum by (model) (rate(llm_sidecar_wasted_output_tokens_total{${SELM}}[${RI}])) or sum by (model) (rate(llm_sidecar_useful_output_tokens_total{${SELM}}[${RI}])) * 0))`,
        '{{model}}')], { max: 1, description: 'Useful output tokens over every output token generated: the share of the engine\'s work that served a user within its SLO.' }),
      ts('Cost per million output tokens', 'currencyUSD', [
        t(`max by (pod) (llm_sidecar_cost_per_million_output_tokens{${SEL}})`, 'all output tokens {{pod}}'),
        t(`max by (pod) (llm_sidecar_cost_per_million_useful_output_tokens{${SEL}})`, 'useful output tokens {{pod}}'),
      ], { description: 'Needs sidecar.cost (a price per GPU-hour, or per million tokens): cost over sidecar.cost.window divided by the tokens generated in it. The gap between the lines is what waste costs. The unit says USD; the price is in whatever currency it was configured in.' }),
      ts('Spend by model and tenant (per hour)', 'currencyUSD', [
        t(`sum by (model, tenant) (rate(llm_sidecar_cost_spend_total{${SELM}}[${RI}])) * 3600`, '{{model}} {{tenant}}'),
        t(`sum(rate(llm_sidecar_cost_gpu_spend_total{${SEL}}[${RI}])) * 3600`, 'GPUs (all models)'),
      ], { description: 'Per-token prices charge each finished request to its model and tenant; a GPU-hour price accrues for the pod as a whole.' }),
      ts('Share of requests good, by tenant', 'percentunit', [t(
        `sum by (tenant) (rate(llm_sidecar_slo_good_requests_total{${SELC}}[${RI}]))\n  / sum by (tenant) (rate(llm_sidecar_slo_requests_total{${SELC}}[${RI}]))`,
        '{{tenant}}')], { max: 1, description: 'Which tenant is affected: good requests over requests counted toward the SLO, per tenant (sidecar.tenants.source).' }),
      ts('Attainment per objective (5m)', 'percentunit', [t(
        `sum by (objective) (rate(llm_sidecar_slo_objective_good_requests_total{${SELC}}[5m]))\n  / sum by (objective) (rate(llm_sidecar_slo_objective_requests_total{${SELC}}[5m]))`,
        '{{objective}}')]),
      ts('Joint attainment per SLO class (5m)', 'percentunit', [t(
        `sum by (slo_class) (rate(llm_sidecar_slo_good_requests_total{${SELC}}[5m]))\n  / sum by (slo_class) (rate(llm_sidecar_slo_requests_total{${SELC}}[5m]))`,
        '{{slo_class}}')]),
      ...['5m', '1h'].map((w) => ts(`Error-budget burn rate (${w})`, 'x', [t(
        `(1 - sum by (objective) (rate(llm_sidecar_slo_objective_good_requests_total{${SELC}}[${w}]))\n   / sum by (objective) (rate(llm_sidecar_slo_objective_requests_total{${SELC}}[${w}])))\n/ on (objective) (1 - max by (objective) (llm_sidecar_slo_target_ratio{${SEL}}))`,
        '{{objective}}')], { thresholds: [1, 6, 14.4],
        description: 'Burn rate 1 spends the budget exactly over the SLO period. Pages at 14.4 (1h and 5m) and 6 (6h and 30m), tickets at 3 (1d and 2h) and 1 (3d and 6h); at targets of 0.93 and lower the page thresholds are capped at 75% and 40% of requests bad (docs/slo-guide.md).' })),
      ts('Violations by criterion', 'reqps', [t(
        `sum by (objective, criterion) (rate(llm_sidecar_slo_violations_total{${SELC}}[${RI}]))`,
        '{{objective}} {{criterion}}')]),
      ts('Declared targets: attainment per bucket (1h)', 'percentunit', [t(
        `sum by (objective) (rate(llm_sidecar_slo_objective_good_requests_total{${SELM}, slo_class="declared"}[1h]))\n  / sum by (objective) (rate(llm_sidecar_slo_objective_requests_total{${SELM}, slo_class="declared"}[1h]))`,
        '{{objective}}')], { max: 1,
        description: 'Requests that declared their own targets (x-llm-d-slo-ttft-ms, x-llm-d-slo-tpot-ms; sidecar.slo.declared): each judged against its own value, counted under the smallest bucket at or above it (docs/slo.md "Targets declared per request"). Empty while declared targets are off.' }),
      ts('Declared targets: values by handling', 'short', [t(
        `sum by (criterion, handling) (rate(llm_sidecar_slo_declared_values_total{${SEL}}[${RI}]))`,
        '{{criterion}} {{handling}}')],
        { description: 'Targets read from the headers: accepted, clamped to sidecar.slo.declared.*-min / -max, or unparseable (ignored: the request falls back to the configured objectives).' }),
      ts('Attainment by priority (5m)', 'percentunit', [t(
        `sum by (priority) (rate(llm_sidecar_slo_good_requests_total{${SELC}}[5m]))\n  / sum by (priority) (rate(llm_sidecar_slo_requests_total{${SELC}}[5m]))`,
        '{{priority}}')], { max: 1,
        description: 'By the request\'s scheduling priority (vLLM\'s priority field, or sidecar.priority.header; sidecar.priority.enabled). One line without a priority while the label is off.' }),
      ts('p99 TTFT by priority', 's', [t(
        hq(0.99, 'gen_ai_server_time_to_first_token_seconds', SELM, 'priority'), 'p99 {{priority}}', { exemplar: true })],
        { description: 'Does a higher priority get its first token sooner? vLLM schedules lower values first (--scheduling-policy priority).' }),
      ts('Requests that do not count toward the SLO', 'reqps', [t(
        `sum by (reason) (rate(llm_sidecar_slo_excluded_requests_total{${SELC}}[${RI}]))`, '{{reason}}')],
        { description: 'Client cancellations that broke no objective before they happened, and client errors (4xx but the statuses in sidecar.slo.bad-client-statuses, 429 by default): neither good nor bad (docs/slo.md).' }),
      ts('p99 drift ratio (short / baseline window)', 'x', [t(
        `max by (model, metric) (llm_sidecar_latency_p99_drift_ratio{${SELM}})`, '{{model}} {{metric}}')],
        { thresholds: [1.5], description: 'Computed in the sidecar from sidecar.windows.drift-short / drift-baseline. NaN (gap) on thin traffic.' }),
      ts('Live window p99 (sidecar HdrHistogram)', 's', [t(
        `max by (model, metric, window) (llm_sidecar_latency_window_p99_seconds{${SELM}})`,
        '{{model}} {{metric}} {{window}}')], { w: 24 }),
    ],
  },
  {
    uid: 'llm-sidecar-latency', title: 'LLM sidecar / Latency', file: 'llm-sidecar-latency.json',
    description: 'TTFT, TPOT, ITL and E2E percentiles from the sidecar histograms (docs/metrics.md), with exemplars.',
    panels: [
      ts('Time to first token (streaming)', 's', quantiles('gen_ai_server_time_to_first_token_seconds', `${SELM}, streaming="true"`)),
      ts('Time per output token', 's', quantiles('gen_ai_server_time_per_output_token_seconds', `${SELM}, outcome="ok"`)),
      ts('Inter-token latency (token-weighted)', 's', quantiles('llm_sidecar_inter_token_latency_seconds', `${SELM}, outcome="ok"`)),
      ts('End-to-end request duration', 's', quantiles('gen_ai_server_request_duration_seconds', `${SELM}, outcome="ok"`)),
      heatOf('TTFT heatmap', 'gen_ai_server_time_to_first_token_seconds', `${SELM}, streaming="true"`),
      heatOf('ITL heatmap', 'llm_sidecar_inter_token_latency_seconds', `${SELM}, outcome="ok"`),
      ts('TTFT by prefix-cache hit / miss', 's', quantiles('llm_sidecar_time_to_first_token_by_cache_seconds', `${SELM}, streaming="true"`, 'cache', [0.5, 0.99]),
        { description: 'A cache hit (cached_tokens > 0) skips most of the prefill; a TTFT flattered by hits shows here.' }),
      ts('TTFT decomposition (p50)', 's', [
        t(hq(0.5, 'llm_sidecar_time_to_upstream_headers_seconds', `${SELM}`, ''), 'upstream headers', { exemplar: true }),
        t(hq(0.5, 'llm_sidecar_engine_reported_queue_seconds', `${SELM}`, ''), 'engine queue (engine-reported)', { exemplar: true }),
        t(hq(0.5, 'llm_sidecar_engine_reported_time_to_first_token_seconds', `${SELM}`, ''), 'engine TTFT (engine-reported)', { exemplar: true }),
        t(hq(0.5, 'llm_sidecar_time_to_first_token_outside_engine_seconds', `${SELM}`, ''), 'outside the engine (streams)', { exemplar: true }),
        t(hq(0.5, 'llm_sidecar_request_duration_outside_engine_seconds', `${SELM}`, ''), 'outside the engine (responses that do not stream, whole request)', { exemplar: true }),
      ], { description: 'Engine-reported series need vLLM --enable-per-request-metrics or llama.cpp timings.' }),
      ts('First response chunk vs first token (p99)', 's', [
        t(hq(0.99, 'llm_sidecar_time_to_first_response_chunk_seconds', `${SELM}`, ''), 'first response chunk (a prelude without content counts)', { exemplar: true }),
        t(hq(0.99, 'gen_ai_server_time_to_first_token_seconds', `${SELM}, streaming="true"`, ''), 'first token', { exemplar: true }),
      ], { description: 'How soon the engine acknowledged a stream (role-only chunk, response.created, message_start) against its first generated content. A tool that stops its TTFT clock at the prelude (vllm bench serve, where the prelude comes first) sees the lower line.' }),
      ts('Chunk gap (raw, per chunk)', 's', quantiles('gen_ai_client_operation_time_per_output_chunk_seconds', SELM, 'model', [0.5, 0.99])),
      ts('Engine phases per request (engine-reported, p50 / p99)', 's', [
        ...[['queue', 'llm_sidecar_engine_reported_queue_seconds'], ['prefill / first token', 'llm_sidecar_engine_reported_time_to_first_token_seconds'],
          ['decode', 'llm_sidecar_engine_reported_decode_seconds']].flatMap(([name, metric]) => [0.5, 0.99].map((q) => t(
          hq(q, metric, `${SELM}`, ''), `${name} p${Math.round(q * 100)}`, { exemplar: true }))),
      ], { description: 'What the engine says it spent on each request: queue time, time to its first token after scheduling (prefill), decode time. vLLM with --enable-per-request-metrics, llama.cpp timings, Ollama durations, TGI headers.' }),
      ts('Engine phases (engine histograms, p50 / p99)', 's', [0.5, 0.99].map((q) => t(
        `histogram_quantile(${q}, sum by (phase, le) (rate(llm_sidecar_engine_phase_duration_seconds_bucket{${SEL}}[${RI}])))`,
        `{{phase}} p${Math.round(q * 100)}`, { exemplar: true })),
        { description: 'The engine\'s own per-request phase histograms from its /metrics (vLLM queue / prefill / decode / inference, and what SGLang and TGI give; docs/metrics.md "Engine phases"), all models together.' }),
      heatOf('Prompt length (tokens)', 'gen_ai_client_token_usage', `${SELM}, token_type="input"`,
        'Input tokens per request (usage.prompt_tokens): a shift to longer prompts costs prefill time and KV cache.'),
      heatOf('Output length (tokens)', 'gen_ai_client_token_usage', `${SELM}, token_type="output"`,
        'Output tokens per request: longer answers cost decode time and hold their KV cache longer.'),
    ],
  },
  {
    uid: 'llm-sidecar-traffic', title: 'LLM sidecar / Traffic and queue', file: 'llm-sidecar-traffic.json',
    description: 'Request rates, in-flight and waiting requests, the engine queue, KV cache and prefix cache.',
    panels: [
      ts('LLM requests by outcome', 'reqps', [t(`sum by (outcome) (rate(llm_sidecar_requests_total{${SELM}}[${RI}]))`, '{{outcome}}')]),
      ts('Error ratio per model', 'percentunit', [t(
        `sum by (model) (rate(llm_sidecar_requests_total{${SELM}, outcome=~"upstream_error|upstream_broken"}[${RI}]))\n  / sum by (model) (rate(llm_sidecar_requests_total{${SELM}}[${RI}]))`,
        '{{model}}')], { thresholds: [0.01, 0.05], max: 1,
        description: 'Requests the engine failed (errors, 5xx, 502/504 from the sidecar, broken streams) over all requests. Client cancellations are not errors.' }),
      ts('HTTP requests by route and status (all models)', 'reqps', [t(`sum by (route, status_class) (rate(llm_sidecar_http_requests_total{${SEL}}[${RI}]))`, '{{route}} {{status_class}}')],
        { description: 'Every proxied request, LLM or not. This series has no model label: the model filter does not apply.' }),
      ts('In flight and waiting for first token', 'short', [
        t(`sum(llm_sidecar_requests_in_flight{${SEL}})`, 'in flight'),
        t(`sum(llm_sidecar_requests_waiting_first_token{${SEL}})`, 'waiting first token'),
        t(`max(llm_sidecar_requests_in_flight_max{${SEL}})`, 'max in flight since start'),
      ]),
      ts('Share of time the engine queue is not empty', 'percentunit', [
        t(`avg by (pod) (avg_over_time((llm_sidecar_engine_requests_waiting{${SEL}} > bool 0)[${RI}:]))`, 'engine queue {{pod}}'),
        t(`1 - (sum(rate(llm_sidecar_requests_waiting_first_token_depth_bucket{${SEL}, le="0.5"}[${RI}]))\n  / sum(rate(llm_sidecar_requests_waiting_first_token_depth_count{${SEL}}[${RI}]))\n  or histogram_fraction(0, 0.5, sum(rate(llm_sidecar_requests_waiting_first_token_depth{${SEL}}[${RI}]))))`, 'a request before its first token (queue or prefill)'),
      ], { max: 1, description: 'Engine queue: the engine says requests wait for a slot (its scrape). "Before its first token" is the sidecar\'s view: any request not yet answered, queued or prefilling, so it is near 100% under steady load without any queueing.' }),
      ts('Engine queue: waiting and running', 'short', [
        t(`sum by (pod) (llm_sidecar_engine_requests_waiting{${SEL}})`, 'waiting {{pod}}'),
        t(`sum by (pod) (llm_sidecar_engine_requests_running{${SEL}})`, 'running {{pod}}'),
      ]),
      ts('Engine KV-cache usage', 'percentunit', [t(`max by (pod) (llm_sidecar_engine_kv_cache_usage_ratio{${SEL}})`, '{{pod}}')], { max: 1 }),
      ts('Prefix-cache hit rate', 'percentunit', [
        t(`avg by (pod) (llm_sidecar_engine_prefix_cache_hit_ratio{${SEL}})`, 'engine {{pod}}'),
        t(`sum(rate(llm_sidecar_tokens_total{${SELM}, token_type="cached_input"}[${RI}]))\n  / sum(rate(llm_sidecar_tokens_total{${SELM}, token_type="cache_reporting_input"}[${RI}]))`, 'cached prompt tokens (usage)'),
      ], { description: 'Usage line: cached input tokens over the input tokens of requests that reported cached_tokens (a backend that does not report it, e.g. vLLM without --enable-prompt-tokens-details, does not dilute it).' }),
      ts('Tokens/s', 'short', [t(`sum by (token_type) (rate(llm_sidecar_tokens_total{${SELM}, token_type=~"input|output|cached_input"}[${RI}]))`, '{{token_type}}')]),
      ts('Tokens per request (p50)', 'short', quantiles('gen_ai_client_token_usage', SELM, 'token_type', [0.5]).map((x) => ({ ...x, exemplar: false }))),
      ts('Finish reasons', 'reqps', [t(`sum by (finish_reason) (rate(llm_sidecar_finish_reasons_total{${SELM}}[${RI}]))`, '{{finish_reason}}')]),
      ts('Engine preemptions', 'ops', [t(`sum by (pod) (rate(llm_sidecar_engine_preemptions_total{${SEL}}[${RI}]))`, '{{pod}}')],
        { description: 'Requests the engine preempted (evicted from the KV cache to make room, recomputed later): vLLM num_preemptions. Sustained preemptions mean the KV cache is too small for the batch.' }),
      ts('Engine: prompt tokens from the prefix cache, draft tokens accepted', 'percentunit', [
        t(`sum by (pod) (rate(llm_sidecar_engine_prompt_tokens_cached_total{${SEL}}[${RI}]))\n  / sum by (pod) (rate(llm_sidecar_engine_prompt_tokens_total{${SEL}}[${RI}]))`, 'prompt tokens cached {{pod}}'),
        t(`sum by (pod) (rate(llm_sidecar_engine_spec_decode_accepted_tokens_total{${SEL}}[${RI}]))\n  / sum by (pod) (rate(llm_sidecar_engine_spec_decode_draft_tokens_total{${SEL}}[${RI}]))`, 'draft tokens accepted {{pod}}'),
      ], { max: 1, description: 'The engine\'s own counters: share of prompt tokens served from its prefix cache, and (speculative decoding) share of draft tokens the target model accepted. A gap: the engine does not report it (docs/metrics.md, "Engine signals").' }),
      // ---- GPU beside goodput (needs sidecar.gpu.dcgm-url; docs/metrics.md, "GPUs") ----
      ts('GPU utilisation', 'percentunit', [
        t(`max by (pod, gpu) (llm_sidecar_gpu_utilization_ratio{${SEL}})`, '{{pod}} GPU {{gpu}}'),
      ], { w: 8, max: 1, description: 'Share of time each GPU of the pod was busy (DCGM_FI_DEV_GPU_UTIL / 100, from the DCGM exporter). At 100% with output tokens/s flat (next panel) the GPU is saturated: more load becomes queueing and SLO misses, not throughput. 100% means a kernel ran all the time, not that the GPU was full. A gap: the exporter could not be read (llm_sidecar_gpu_up 0).' }),
      ts('Output tokens/s: all, good, useful', 'short', [
        t(`sum(rate(llm_sidecar_tokens_total{${SELM}, token_type="output"}[${RI}]))`, 'output tokens/s'),
        t(`sum(rate(llm_sidecar_slo_good_output_tokens_total{${SELC}}[${RI}]))`, 'good output tokens/s (goodput)'),
        t(`sum(rate(llm_sidecar_useful_output_tokens_total{${SELM}}[${RI}]))`, 'useful output tokens/s'),
      ], { w: 8, description: 'On the same time axis as GPU utilisation: good (goodput) falling below all while the GPU is pinned at 100% is saturation.' }),
      ts('Output tokens/s per GPU', 'short', [
        t(`sum(rate(llm_sidecar_tokens_total{${SELM}, token_type="output"}[${RI}]))\n  / count(llm_sidecar_gpu_utilization_ratio{${SEL}})`, 'output tokens/s per GPU'),
        t(`sum(rate(llm_sidecar_slo_good_output_tokens_total{${SELC}}[${RI}]))\n  / count(llm_sidecar_gpu_utilization_ratio{${SEL}})`, 'good output tokens/s per GPU'),
      ], { w: 8 }),
      ts('GPU memory used', 'percentunit', [
        t(`max by (pod, gpu) (llm_sidecar_gpu_memory_used_ratio{${SEL}})`, '{{pod}} GPU {{gpu}}'),
      ], { max: 1, description: 'FB_USED / (FB_USED + FB_FREE). vLLM and SGLang reserve a fixed share for the KV cache at start (vLLM --gpu-memory-utilization 0.9), so this is flat at any load; how full the cache is, is the engine KV-cache panel.' }),
      ts('GPU power', 'watt', [
        t(`max by (pod, gpu) (llm_sidecar_gpu_power_watts{${SEL}})`, '{{pod}} GPU {{gpu}}'),
      ], { description: 'DCGM_FI_DEV_POWER_USAGE. 100% utilisation with power well below the board limit is usually memory-bound decode.' }),
      ts('Saturation: TTFT p50 by load at arrival', 's', [t(
        hq(0.5, 'llm_sidecar_time_to_first_token_by_load_seconds', `${SEL}`, 'load_band'),
        '≤ {{load_band}} in flight', { exemplar: true })],
        { description: 'TTFT median of the requests that arrived with that many LLM requests in flight (itself included). Below the knee the lines lie together; past it each heavier band sits higher, by more than the load grew (docs/slo-guide.md, "The saturation knee").' }),
      ts('Approaching saturation: load ÷ knee', 'percentunit', [
        t(`max by (pod) (llm_sidecar_saturation_load_ratio{${SEL}})`, 'load ÷ knee {{pod}}'),
      ], { thresholds: [0.8, 1], description: 'Requests in flight over the knee (llm_sidecar_saturation_knee_requests: configured, or estimated live). At 100% latency grows faster than load; LLMSidecarApproachingSaturation tickets above 80% for 15 minutes. A gap: no knee seen yet.' }),
      ts('Saturation knee and load (requests in flight)', 'short', [
        t(`max by (pod) (llm_sidecar_saturation_knee_requests{${SEL}})`, 'knee {{pod}}'),
        t(`sum by (pod) (llm_sidecar_requests_in_flight{${SEL}})`, 'in flight {{pod}}'),
      ]),
      ts('Requests by tenant', 'reqps', [t(`sum by (tenant) (rate(llm_sidecar_requests_total{${SELM}}[${RI}]))`, '{{tenant}}')],
        { description: 'Needs sidecar.tenants.source (a header or the API key hash); "other" holds tenants past sidecar.tenants.max or outside the allowlist, "unknown" requests without one.' }),
      ts('Output tokens/s by tenant', 'short', [t(`sum by (tenant) (rate(llm_sidecar_tokens_total{${SELM}, token_type="output"}[${RI}]))`, '{{tenant}}')]),
    ],
  },
  {
    uid: 'llm-sidecar-health', title: 'LLM sidecar / Sidecar health', file: 'llm-sidecar-health.json',
    description: 'The sidecar itself: scrapes, engine scrape, forwarding delay, drops, JVM.',
    panels: [
      stat('Sidecars up', 'short', [t(`sum(up{job="$job", ${SEL}})`, 'up')], { w: 8 }),
      stat('Engines ready', 'short', [t(`sum(llm_sidecar_engine_ready{${SEL}})`, 'ready'),
        t(`sum(1 - llm_sidecar_engine_started{${SEL}})`, 'still loading')], { w: 8,
        description: 'Engine health checks passing, and engines that have not passed one since their sidecar started (loading a model).' }),
      stat('Failed or dropped LLM requests (1h)', 'short', [t(`sum(increase(llm_sidecar_requests_total{${SELM}, outcome!="ok"}[1h]))`, 'not ok')], { w: 8, decimals: 0 }),
      ts('Forwarding delay (upstream read to client write)', 's', quantiles('llm_sidecar_chunk_write_delay_seconds', SEL, 'pod', [0.5, 0.99]),
        { description: 'Grows only when a client reads slower than the engine writes; the proxy itself never holds bytes.' }),
      ts('Dropped, broken and failed requests', 'reqps', [t(`sum by (outcome) (rate(llm_sidecar_requests_total{${SELM}, outcome!="ok"}[${RI}]))`, '{{outcome}}')]),
      ts('Stalled streams', 'short', [
        t(`sum by (model, stream_phase) (llm_sidecar_stalled_streams{${SELM}})`, '{{model}} {{stream_phase}}'),
      ], { decimals: 0, description: 'Open streams silent past their stall threshold right now: generation = no token for sidecar.stall.threshold (10 s) after the first, first_token = no first token for sidecar.stall.first-token-threshold (60 s). Read at each scrape; LLMSidecarStreamsStalled warns after 2 minutes (docs/runbooks.md).' }),
      ts('Longest current silence of an open stream', 's', [
        t(`max by (stream_phase) (llm_sidecar_stream_longest_silence_seconds{${SELM}})`, '{{stream_phase}}'),
      ], { description: 'Since the last token (generation) or since arrival (first_token), of the open stream silent longest, stalled or not.' }),
      ts('How requests ended (all but completed)', 'reqps', [
        t(`sum by (end_reason) (rate(llm_sidecar_requests_total{${SELM}, end_reason!="completed"}[${RI}]))`, '{{end_reason}}'),
      ], { description: 'Every ending named (docs/metrics.md, "How a request ended"): truncated streams, errors before and after the head, errors inside 200 streams, clients gone before the first token or mid-stream, streams that ended stalled.' }),
      ts('Output tokens delivered to clients that left', 'short', [
        t(`sum by (end_reason) (rate(llm_sidecar_abandoned_output_tokens_total{${SELM}}[${RI}]))`, '{{end_reason}}'),
      ], { description: 'Tokens/s the clients had received before they went away (counted from the chunks forwarded to them). What the engine generated after the cancel is only in its own counters.' }),
      ts('Tokens: the sidecar\'s count beside the engine\'s own (1h)', 'short', [
        t(`sum(llm_sidecar:output_tokens:rate1h{${SEL}})`, 'output, sidecar'),
        t(`sum(llm_sidecar:engine_generation_tokens:rate1h{${SEL}})`, 'generated, engine'),
        t(`sum(llm_sidecar:input_tokens:rate1h{${SEL}})`, 'input, sidecar'),
        t(`sum(llm_sidecar:engine_prompt_tokens:rate1h{${SEL}})`, 'prompt, engine'),
      ], { description: 'Tokens/s over the last hour as the sidecar counted them (from usage or its own counts) and as the engine counted them (its generation and prompt token counters, read by the engine scrape). The engine also counts what it generated after a client left, which the sidecar never saw.' }),
      ts('Token drift: (engine - sidecar) / engine (1h)', 'percentunit', [
        t(`max by (pod, token_type) (llm_sidecar:token_drift:ratio_rate1h{${SEL}})`, '{{token_type}} {{pod}}'),
        t(`max(llm_sidecar_engine_token_drift_limit_ratio{${SEL}})`, 'limit'),
      ], { description: 'How far the two billing sources disagree, per pod. LLMSidecarTokenDrift warns past sidecar.engine.token-drift-limit (5 %) for 30 minutes with at least 10 000 tokens an hour (docs/runbooks.md).' }),
      ts('Engine metrics scrapes', 'ops', [t(`sum by (result) (rate(llm_sidecar_engine_scrapes_total{${SEL}}[${RI}]))`, '{{result}}')]),
      ts('DCGM exporter scrapes (GPUs)', 'ops', [
        t(`sum by (result) (rate(llm_sidecar_gpu_scrapes_total{${SEL}}[${RI}]))`, '{{result}}'),
        t(`sum(1 - llm_sidecar_gpu_up{${SEL}})`, 'pods without GPU data'),
      ], { description: 'Only with sidecar.gpu.dcgm-url. ok with GPU data missing: the exporter has no GPU of this pod (another node\'s exporter, or no --kubernetes).' }),
      ts('Forwarded without decoding', 'ops', [
        t(`sum by (reason) (rate(llm_sidecar_body_inspection_skipped_total{${SEL}}[${RI}]))`, 'body not inspected: {{reason}}'),
        t(`sum by (operation) (rate(llm_sidecar_undecodable_chunks_total{${SEL}}[${RI}]))`, 'undecodable events: {{operation}}'),
      ]),
      ts('include_usage injection and output-token source', 'ops', [
        t(`sum(rate(llm_sidecar_usage_injected_total{${SEL}}[${RI}]))`, 'usage injected'),
        t(`sum(rate(llm_sidecar_usage_chunks_stripped_total{${SEL}}[${RI}]))`, 'usage chunks stripped'),
        t(`sum by (source) (rate(llm_sidecar_output_token_source_total{${SEL}}[${RI}]))`, 'tokens from {{source}}'),
      ]),
      ts('OTLP export (when otlp.endpoint is set)', 'ops', [
        t(`sum(rate(llm_sidecar_otlp_spans_exported_total{${SEL}}[${RI}]))`, 'spans exported'),
        t(`sum by (reason) (rate(llm_sidecar_otlp_spans_dropped_total{${SEL}}[${RI}]))`, 'spans dropped: {{reason}}'),
        t(`sum(rate(llm_sidecar_otlp_metric_points_exported_total{${SEL}}[${RI}]))`, 'metric points exported'),
        t(`sum(rate(llm_sidecar_otlp_metric_points_dropped_total{${SEL}}[${RI}]))`, 'metric points dropped'),
      ], { description: 'Telemetry never blocks traffic: when the collector is slow or down, spans are dropped and counted here (docs/otel.md).' }),
      ts('OTLP span queue', 'short', [
        t(`max by (pod) (llm_sidecar_otlp_span_queue_size{${SEL}})`, 'queued {{pod}}'),
        t(`max by (pod) (llm_sidecar_otlp_span_queue_capacity{${SEL}})`, 'capacity {{pod}}'),
      ]),
      ts('Kept traffic flowing', 'ops', [
        t(`sum by (reason) (rate(llm_sidecar_upstream_retries_total{${SEL}}[${RI}]))`, 'sent again: {{reason}}'),
        t(`sum(rate(llm_sidecar_upstream_idle_connections_retired_total{${SEL}}[${RI}]))`, 'idle upstream connections retired'),
        t(`sum by (peer) (rate(llm_sidecar_connection_errors_total{${SEL}}[${RI}]))`, 'connection errors: {{peer}}'),
        t(`sum by (when) (rate(llm_sidecar_request_body_too_large_total{${SEL}}[${RI}]))`, '413 body too large: {{when}}'),
      ], { description: 'A request whose reused upstream connection closed before any response byte is sent once more; idle connections are retired before the engine closes them (docs/reliability.md).' }),
      ts('include_usage left alone, by reason', 'ops', [
        t(`sum by (reason) (rate(llm_sidecar_usage_injection_skipped_total{${SEL}}[${RI}]))`, '{{reason}}'),
        t(`sum by (reason) (rate(llm_sidecar_usage_not_removed_total{${SEL}}[${RI}]))`, 'could not remove: {{reason}}'),
      ], { description: 'Streams the sidecar did not ask usage for (docs/metrics.md, include_usage injection). "could not remove" should stay at 0.' }),
      ts('JVM heap used', 'bytes', [t(`sum by (pod) (jvm_memory_used_bytes{${SEL}, area="heap"})`, '{{pod}}')]),
      ts('CPU (process)', 'percentunit', [t(`max by (pod) (process_cpu_usage{${SEL}})`, '{{pod}}')]),
      ts('Share of time in GC pauses', 'percentunit', [t(`sum by (pod) (rate(jvm_gc_pause_seconds_sum{${SEL}}[${RI}]))`, '{{pod}}')],
        { description: 'Seconds of pause per second of wall time: 0.01 is 1% of the time stopped.' }),
      ts('Live threads and open files', 'short', [
        t(`max by (pod) (jvm_threads_live_threads{${SEL}})`, 'threads {{pod}}'),
        t(`max by (pod) (process_files_open_files{${SEL}})`, 'open files {{pod}}'),
      ]),
    ],
  },
  {
    uid: 'llm-sidecar-conversations', title: 'LLM sidecar / Conversations and agents', file: 'llm-sidecar-conversations.json',
    description: 'Latency and prefix-cache hits by turn, cold versus warm, the gap between turns and where an agent\'s time goes (sidecar.conversations.enabled; docs/metrics.md "Conversations").',
    panels: [
      ts('TTFT p99 by turn', 's', [t(hq(0.99, 'llm_sidecar_conversation_time_to_first_token_seconds', SELM, 'turn'),
        'p99 turn {{turn}}', { exemplar: true })],
        { description: 'Successful streaming chat requests by their turn in the conversation (1, 2, 3-4 ... 17+). Later turns carry longer histories: without prefix caching their prefill grows with the turn.' }),
      ts('Prefix-cache hit ratio by turn', 'percentunit', [t(
        `sum by (turn) (rate(llm_sidecar_conversation_prefix_cache_hit_ratio_sum{${SELM}}[${RI}]))\n  / sum by (turn) (rate(llm_sidecar_conversation_prefix_cache_hit_ratio_count{${SELM}}[${RI}]))\n  or histogram_sum(sum by (turn) (rate(llm_sidecar_conversation_prefix_cache_hit_ratio{${SELM}}[${RI}])))\n  / histogram_count(sum by (turn) (rate(llm_sidecar_conversation_prefix_cache_hit_ratio{${SELM}}[${RI}])))`,
        'turn {{turn}}')], { max: 1,
        description: 'Mean cached / input tokens per request, for engines that report cached_tokens. A warm turn\'s history was sent before: a low ratio here means the cache evicts conversations between turns.' }),
      ts('TTFT p50 / p99: cold versus warm', 's', [0.5, 0.99].map((q) => t(
        hq(q, 'llm_sidecar_conversation_time_to_first_token_seconds', SELM, 'prefix'), `p${Math.round(q * 100)} {{prefix}}`,
        { exemplar: true })), { description: 'Cold: the first request of a conversation seen here. Warm: a later one. Does prefix caching work for our conversations?' }),
      ts('Prefix-cache hit ratio: cold versus warm', 'percentunit', [t(
        `sum by (prefix) (rate(llm_sidecar_conversation_prefix_cache_hit_ratio_sum{${SELM}}[${RI}]))\n  / sum by (prefix) (rate(llm_sidecar_conversation_prefix_cache_hit_ratio_count{${SELM}}[${RI}]))\n  or histogram_sum(sum by (prefix) (rate(llm_sidecar_conversation_prefix_cache_hit_ratio{${SELM}}[${RI}])))\n  / histogram_count(sum by (prefix) (rate(llm_sidecar_conversation_prefix_cache_hit_ratio{${SELM}}[${RI}])))`,
        '{{prefix}}')], { max: 1 }),
      ts('Gap between turns (p50 / p99)', 's', [0.5, 0.99].map((q) => t(
        hq(q, 'llm_sidecar_conversation_turn_gap_seconds', SELM, 'after'), `p${Math.round(q * 100)} after {{after}}`,
        { exemplar: true })),
        { description: 'From the end of a turn\'s answer to the next turn\'s arrival: the user\'s think time (after user) or a tool\'s run (after tool).' }),
      ts('Model share of agent time', 'percentunit', [t(
        `sum by (model) (rate(llm_sidecar_conversation_agent_time_seconds_total{${SELM}, part="model"}[${RI}]))\n  / sum by (model) (rate(llm_sidecar_conversation_agent_time_seconds_total{${SELM}}[${RI}]))`,
        '{{model}}')], { max: 1,
        description: 'Of an agent loop\'s wall time, the share spent waiting for the model (the rest is its tools). A low share: the model is not the bottleneck.' }),
      ts('Agent time by part', 's', [t(
        `sum by (part) (rate(llm_sidecar_conversation_agent_time_seconds_total{${SELM}}[${RI}]))`, '{{part}}')],
        { description: 'Seconds per second spent in the model and in tools by agent loops (conversations with tool turns).' }),
      ts('Input tokens by turn (p50)', 'short', [t(
        hq(0.5, 'llm_sidecar_conversation_input_tokens', SELM, 'turn'), 'p50 turn {{turn}}')],
        { description: 'How the prompt grows as a conversation goes on.' }),
      ts('Chat requests by link', 'reqps', [t(
        `sum by (link) (rate(llm_sidecar_conversation_requests_total{${SELM}}[${RI}]))`, '{{link}}')],
        { description: 'first: a new conversation (cold); next: a later turn; next_of_unfinished: sent before the turn before ended; repeated: the same history again (a regeneration); unknown: a Responses id never seen here.' }),
      ts('Turns per conversation', 'short', [0.5, 0.9, 0.99].map((q) => t(
        hq(q, 'llm_sidecar_conversation_turns', SEL, ''), `p${Math.round(q * 100)}`))),
      ts('Table of conversations', 'short', [
        t(`sum(llm_sidecar_conversation_table_entries{${SEL}})`, 'entries'),
        t(`sum by (reason) (rate(llm_sidecar_conversation_evictions_total{${SEL}}[${RI}]))`, 'evicted/s: {{reason}}'),
      ], { w: 24, description: 'Evictions by capacity while conversations still go on: raise sidecar.conversations.max-entries (about 53 bytes each).' }),
    ],
  },
];

function render(d) {
  let x = 0; let y = 0; let rowH = 0; let id = 1;
  const panels = d.panels.map((p) => {
    const w = p.w ?? 12; const h = p.kind === 'stat' ? 4 : 8;
    if (x + w > 24) { x = 0; y += rowH; rowH = 0; }
    const gridPos = { x, y, w, h };
    x += w; rowH = Math.max(rowH, h);
    const defaults = { unit: p.unit };
    if (p.decimals !== undefined) defaults.decimals = p.decimals;
    if (p.max !== undefined) { defaults.min = 0; defaults.max = p.max; }
    if (p.thresholds) {
      defaults.thresholds = { mode: 'absolute', steps: [{ color: 'green', value: null },
        ...p.thresholds.map((v, i) => ({ color: ['yellow', 'orange', 'red'][Math.min(i + 3 - p.thresholds.length, 2)], value: v }))] };
      defaults.custom = { thresholdsStyle: { mode: 'line' } };
    }
    const options = p.kind === 'heatmap'
      ? { calculate: false, yAxis: { unit: p.unit }, cellGap: 1, color: { mode: 'scheme', scheme: 'Oranges', steps: 64 },
        exemplars: { color: 'rgba(255,0,255,0.7)' }, tooltip: { mode: 'single', yHistogram: true }, legend: { show: true } }
      : p.kind === 'stat'
        ? { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', graphMode: 'none', textMode: 'auto' }
        : { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } };
    const out = {
      id: id++, type: p.kind, title: p.title, datasource: DS, gridPos,
      fieldConfig: { defaults, overrides: [] }, options,
      targets: p.targets.map((tg, i) => ({ refId: String.fromCharCode(65 + i), datasource: DS, editorMode: 'code', range: true, ...tg })),
    };
    if (p.description) out.description = p.description;
    return out;
  });
  return {
    uid: d.uid, title: d.title, description: d.description, tags: ['llm-sidecar', 'llm'],
    editable: true, graphTooltip: 1, schemaVersion: 39, version: 1, refresh: '30s',
    time: { from: 'now-6h', to: 'now' }, timezone: 'browser', fiscalYearStartMonth: 0, liveNow: false,
    links: [{ title: 'LLM sidecar', type: 'dashboards', tags: ['llm-sidecar'], asDropdown: true, icon: 'external link',
      includeVars: true, keepTime: true, targetBlank: false, tooltip: '', url: '' }],
    annotations: { list: [{ name: 'Annotations & Alerts', type: 'dashboard', builtIn: 1, enable: true, hide: true,
      iconColor: 'rgba(0, 211, 255, 1)', datasource: { type: 'grafana', uid: '-- Grafana --' } }] },
    templating, panels,
  };
}

mkdirSync(outDir, { recursive: true });
for (const d of dashboards) {
  writeFileSync(join(outDir, d.file), JSON.stringify(render(d), null, 2) + '\n');
}
console.log(`wrote ${dashboards.length} dashboards to ${outDir}`);
