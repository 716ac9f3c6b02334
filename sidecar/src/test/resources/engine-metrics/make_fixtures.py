#!/usr/bin/python3
"""Writes vllm.txt, sglang.txt and tgi.txt: what each engine's /metrics answers, from its own metric definitions.

vLLM and SGLang expose their metrics with Python's prometheus_client, so their fixtures are written by that very
library (Debian 12's python3-prometheus-client, 0.16) from the definitions in the engines' source: names, help texts,
label names, bucket bounds and registration order as in vllm/v1/metrics/loggers.py and vllm/v1/spec_decode/metrics.py
(vLLM 0.11+, V1 engine) and python/sglang/srt/metrics/collector.py (SGLang, late 2025). vLLM with one API server uses
the default registry (so `_created` gauges and the python_* / process_* collectors are there); SGLang always runs
prometheus_client in multiprocess mode (no `_created`, `_sum` before the buckets; its "mostrecent" gauges are written
here with mode "max", which 0.16 has and which renders the same). TGI 3.x (router/src/server.rs, backends/v3)
exposes its metrics with the Rust crate metrics-exporter-prometheus 0.15, whose text rendering (recorder.rs,
formatting.rs) is re-done below. The llama.cpp fixtures are recorded output, not generated.

Observations are drawn from a seeded generator, so a run writes the same files (the process_* values and the vLLM
_created timestamps aside, which the tests do not read). Run: /usr/bin/python3 make_fixtures.py (writes here).
"""
import decimal
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CREATED = 1754193210.42  # the engine's start, for the _created gauges

# vLLM request_latency_buckets (loggers.py), shared by e2e, queue, inference, prefill and decode
VLLM_REQUEST_LATENCY = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
                        240.0, 480.0, 960.0, 1920.0, 7680.0]
VLLM_TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
             80.0, 160.0, 640.0, 2560.0]
VLLM_ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0]


def requests(rng, n, queue_mean, prefill_median, decode_median):
    """n finished requests: (queue, prefill, decode) seconds."""
    out = []
    for _ in range(n):
        q = rng.expovariate(1 / queue_mean) if rng.random() < 0.7 else 0.0005 * rng.random()
        p = rng.lognormvariate(0, 0.6) * prefill_median
        d = rng.lognormvariate(0, 0.5) * decode_median
        out.append((q, p, d))
    return out


def vllm():
    time.time = lambda: CREATED
    import prometheus_client as pc

    model = "meta-llama/Llama-3.1-8B-Instruct"
    labelnames = ["model_name", "engine"]
    engines = [0, 1]
    rng = random.Random(11)

    def per_engine(metric):
        return {e: metric.labels(model, str(e)) for e in engines}

    # SpecDecodingProm is built first in PrometheusStatLogger.__init__ (3 speculative tokens here)
    drafts = per_engine(pc.Counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.",
                                   labelnames=labelnames))
    draft_tokens = per_engine(pc.Counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.",
                                         labelnames=labelnames))
    accepted = per_engine(pc.Counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.",
                                     labelnames=labelnames))
    per_pos = pc.Counter("vllm:spec_decode_num_accepted_tokens_per_pos", "Accepted tokens per draft position.",
                         labelnames=labelnames + ["position"])
    running = per_engine(pc.Gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
                                  labelnames=labelnames))
    waiting = per_engine(pc.Gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
                                  labelnames=labelnames))
    kv = per_engine(pc.Gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
                             labelnames=labelnames))
    queries = per_engine(pc.Counter("vllm:prefix_cache_queries",
                                    "Prefix cache queries, in terms of number of queried tokens.",
                                    labelnames=labelnames))
    hits = per_engine(pc.Counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
                                 labelnames=labelnames))
    preemptions = per_engine(pc.Counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.",
                                        labelnames=labelnames))
    prompt = per_engine(pc.Counter("vllm:prompt_tokens", "Number of prefill tokens processed.",
                                   labelnames=labelnames))
    by_source = pc.Counter("vllm:prompt_tokens_by_source", "Number of prompt tokens by source.",
                           labelnames=labelnames + ["source"])
    cached = per_engine(pc.Counter("vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external).",
                                   labelnames=labelnames))
    recomputed = per_engine(pc.Counter("vllm:prompt_tokens_recomputed",
                                       "Number of cached tokens recomputed for forward pass.", labelnames=labelnames))
    generation = per_engine(pc.Counter("vllm:generation_tokens", "Number of generation tokens processed.",
                                       labelnames=labelnames))
    success = pc.Counter("vllm:request_success", "Count of successfully processed requests.",
                         labelnames=labelnames + ["finished_reason"])
    ttft = per_engine(pc.Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                                   buckets=VLLM_TTFT, labelnames=labelnames))
    itl = per_engine(pc.Histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
                                  buckets=VLLM_ITL, labelnames=labelnames))
    e2e = per_engine(pc.Histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
                                  buckets=VLLM_REQUEST_LATENCY, labelnames=labelnames))
    queue = per_engine(pc.Histogram("vllm:request_queue_time_seconds",
                                    "Histogram of time spent in WAITING phase for request.",
                                    buckets=VLLM_REQUEST_LATENCY, labelnames=labelnames))
    inference = per_engine(pc.Histogram("vllm:request_inference_time_seconds",
                                        "Histogram of time spent in RUNNING phase for request.",
                                        buckets=VLLM_REQUEST_LATENCY, labelnames=labelnames))
    prefill = per_engine(pc.Histogram("vllm:request_prefill_time_seconds",
                                      "Histogram of time spent in PREFILL phase for request.",
                                      buckets=VLLM_REQUEST_LATENCY, labelnames=labelnames))
    decode = per_engine(pc.Histogram("vllm:request_decode_time_seconds",
                                     "Histogram of time spent in DECODE phase for request.",
                                     buckets=VLLM_REQUEST_LATENCY, labelnames=labelnames))
    info = pc.Gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig",
                    labelnames=["block_size", "cache_dtype", "calculate_kv_scales", "enable_prefix_caching",
                                "engine", "gpu_memory_utilization", "num_cpu_blocks", "num_gpu_blocks",
                                "prefix_caching_hash_algo", "swap_space"])

    state = {0: dict(running=12, waiting=3, kv=0.375, queries=120000, hits=84000, preempt=2, prompt=1482113,
                     cached=83712, recomputed=12, gen=391245, reasons={"stop": 1711, "length": 96, "abort": 3},
                     drafts=98231, accepted=(81012, 60220, 39903)),
             1: dict(running=9, waiting=4, kv=0.625, queries=80000, hits=36000, preempt=0, prompt=1190554,
                     cached=35840, recomputed=5, gen=350871, reasons={"stop": 1650, "length": 88, "abort": 1},
                     drafts=90112, accepted=(70115, 49870, 30024))}
    for e, s in state.items():
        running[e].set(s["running"])
        waiting[e].set(s["waiting"])
        kv[e].set(s["kv"])
        queries[e].inc(s["queries"])
        hits[e].inc(s["hits"])
        preemptions[e].inc(s["preempt"])
        prompt[e].inc(s["prompt"])
        by_source.labels(model, str(e), "local_compute").inc(s["prompt"] - s["cached"])
        by_source.labels(model, str(e), "local_cache_hit").inc(s["cached"])
        by_source.labels(model, str(e), "external_kv_transfer").inc(0)
        cached[e].inc(s["cached"])
        recomputed[e].inc(s["recomputed"])
        generation[e].inc(s["gen"])
        for reason in ["stop", "length", "abort", "error", "repetition"]:
            success.labels(model, str(e), reason).inc(s["reasons"].get(reason, 0))
        drafts[e].inc(s["drafts"])
        draft_tokens[e].inc(3 * s["drafts"])
        accepted[e].inc(sum(s["accepted"]))
        for pos, n in enumerate(s["accepted"]):
            per_pos.labels(model, str(e), str(pos)).inc(n)
        n = sum(s["reasons"].values())
        for q, p, d in requests(rng, n, queue_mean=0.4 if e == 0 else 0.6, prefill_median=0.12, decode_median=4.0):
            queue[e].observe(q)
            prefill[e].observe(p)
            decode[e].observe(d)
            inference[e].observe(p + d)
            ttft[e].observe(q + p + 0.004)
            e2e[e].observe(q + p + d + 0.006)
            itl[e].observe(d / 200)
        info.labels("16", "auto", "False", "True", str(e), "0.9", "None", "27153", "builtin", "4").set(1)
    return pc.generate_latest(pc.REGISTRY).decode()


def sglang():
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp()
    import prometheus_client as pc
    from prometheus_client import multiprocess

    model = "Qwen/Qwen2.5-7B-Instruct"
    rng = random.Random(23)
    sched = {"model_name": model, "engine_type": "unified", "tp_rank": 0, "pp_rank": 0, "moe_ep_rank": 0}
    names = list(sched.keys())

    def gauge(name, doc, value, mode="max"):
        pc.Gauge(name, doc, labelnames=names, multiprocess_mode=mode).labels(**sched).set(value)

    # SchedulerMetricsCollector (scheduler process), in its order
    gauge("sglang:num_running_reqs", "The number of running requests.", 17)
    gauge("sglang:num_used_tokens", "The number of used tokens.", 92311)
    gauge("sglang:token_usage", "The token usage.", 0.34375)
    gauge("sglang:gen_throughput", "The generation throughput (token/s).", 1483.62)
    gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", 5)
    gauge("sglang:num_grammar_queue_reqs", "The number of requests in the grammar waiting queue.", 0)
    gauge("sglang:cache_hit_rate", "The prefix cache hit rate.", 0.6875)
    gauge("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", 268536)
    gauge("sglang:spec_accept_length", "The average acceptance length of speculative decoding.", 0)
    gauge("sglang:spec_accept_rate", "The average acceptance rate of speculative decoding (`accepted tokens / "
          "total draft tokens` in batch).", 0)
    gauge("sglang:num_retracted_reqs", "The number of retracted requests.", 0, mode="all")
    pc.Counter("sglang:num_retracted_requests_total", "Total number of retracted requests.",
               labelnames=names).labels(**sched).inc(37)
    pc.Counter("sglang:num_retracted_input_tokens_total", "Total number of retracted input tokens.",
               labelnames=names).labels(**sched).inc(41102)
    pc.Counter("sglang:num_retracted_output_tokens_total", "Total number of retracted output tokens.",
               labelnames=names).labels(**sched).inc(9310)
    queue_time = pc.Histogram("sglang:queue_time_seconds", "Histogram of queueing time in seconds.",
                              labelnames=names,
                              buckets=[0.0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100,
                                       200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000,
                                       2500, 3000]).labels(**sched)
    per_stage = pc.Histogram("sglang:per_stage_req_latency_seconds", "The latency of each stage of requests.",
                             buckets=[0.001 * (1.62 ** i) for i in range(30)], labelnames=names + ["stage"])
    # TokenizerMetricsCollector (tokenizer manager process)
    tok = {"model_name": model}
    prompt_total = pc.Counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.",
                              labelnames=tok.keys()).labels(**tok)
    generation_total = pc.Counter("sglang:generation_tokens_total", "Number of generation tokens processed.",
                                  labelnames=tok.keys()).labels(**tok)
    cached_total = pc.Counter("sglang:cached_tokens_total", "Number of cached prompt tokens.",
                              labelnames=tok.keys()).labels(**tok)
    num_requests = pc.Counter("sglang:num_requests_total", "Number of requests processed.",
                              labelnames=tok.keys()).labels(**tok)
    ttft = pc.Histogram("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                        labelnames=tok.keys(),
                        buckets=[0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200,
                                 400]).labels(**tok)
    e2e = pc.Histogram("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds",
                       labelnames=tok.keys(),
                       buckets=[0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200,
                                1800, 2400]).labels(**tok)

    n = 4120
    for q, p, d in requests(rng, n, queue_mean=0.25, prefill_median=0.09, decode_median=3.0):
        queue_time.observe(q)
        per_stage.labels(**sched, stage="request_process").observe(0.002 + 0.001 * rng.random())
        per_stage.labels(**sched, stage="prefill_forward").observe(p)
        if p > 0.2:
            per_stage.labels(**sched, stage="chunked_prefill").observe(p / 2)
        ttft.observe(q + p + 0.01)
        e2e.observe(q + p + d + 0.02)
    prompt_total.inc(2811467)
    generation_total.inc(604332)
    cached_total.inc(1932800)
    num_requests.inc(n)

    registry = pc.CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return pc.generate_latest(registry).decode()


def rust_f64(x):
    """f64's Display in Rust: the shortest decimal that reads back to x, never in exponent form."""
    if x == int(x) and abs(x) < 1e16:
        return str(int(x))
    return format(decimal.Decimal(repr(x)), "f")


def tgi():
    """TGI 3.x (router 3.3) rendered as metrics-exporter-prometheus 0.15.1 does: HELP (first description wins),
    TYPE, per label set the buckets (cumulative, `le` after the other labels), +Inf, _sum, _count; families in a
    HashMap's order, a blank line after each."""
    rng = random.Random(5)
    duration_bounds = []
    v = 0.0001
    for _ in range(35):
        v *= 1.5
        duration_bounds.append(v)
    max_input_tokens, max_total_tokens = 8191, 8192
    out = []

    def family(name, kind, help_text):
        if help_text:
            out.append(f"# HELP {name} {help_text}\n")
        out.append(f"# TYPE {name} {kind}\n")

    def scalar(name, kind, help_text, series, fmt):
        family(name, kind, help_text)
        for labels, value in series:
            out.append(f"{name}{labels} {fmt(value)}\n")
        out.append("\n")

    def histogram(name, help_text, bounds, series):
        family(name, "histogram", help_text)
        for labels, values in series:
            inner = labels[1:-1] + "," if labels else ""
            for b in bounds:
                out.append(f'{name}_bucket{{{inner}le="{rust_f64(b)}"}} {sum(1 for x in values if x <= b)}\n')
            out.append(f'{name}_bucket{{{inner}le="+Inf"}} {len(values)}\n')
            out.append(f"{name}_sum{labels} {rust_f64(sum(values))}\n")
            out.append(f"{name}_count{labels} {len(values)}\n")
        out.append("\n")

    n = 5290
    reqs = requests(rng, n, queue_mean=0.05, prefill_median=0.08, decode_median=1.2)
    queue = [q for q, _, _ in reqs]
    inference = [p + d for _, p, d in reqs]
    validation = [0.0004 + 0.0003 * rng.random() for _ in reqs]
    total = [val + q + i for val, q, i in zip(validation, queue, inference)]
    tokens = [max(1, int(rng.lognormvariate(4.5, 0.8))) for _ in reqs]
    per_token = [i / t for i, t in zip(inference, tokens)]
    prefill_forward = [0.004 + 0.05 * rng.random() for _ in range(5120)]
    decode_forward = [0.008 + 0.004 * rng.random() for _ in range(90130)]

    scalar("tgi_request_success", "counter", "Number of successful requests", [("", n)], str)
    histogram("tgi_request_queue_duration", "Request queue duration", duration_bounds, [("", queue)])
    scalar("tgi_queue_size", "gauge", "Current queue size", [("", 6.0)], rust_f64)
    histogram("tgi_request_inference_duration", "Request inference duration", duration_bounds, [("", inference)])
    scalar("tgi_batch_inference_count", "counter", "Inference calls per method (prefill or decode)",
           [('{method="prefill"}', 5120), ('{method="decode"}', 90130)], str)
    histogram("tgi_batch_forward_duration", "Batch forward duration per method (prefill or decode)",
              duration_bounds, [('{method="prefill"}', prefill_forward), ('{method="decode"}', decode_forward)])
    scalar("tgi_request_count", "counter", "Total number of requests", [("", 5312)], str)
    histogram("tgi_request_duration", "Request duration", duration_bounds, [("", total)])
    scalar("tgi_batch_current_size", "gauge", "Current batch size", [("", 24.0)], rust_f64)
    histogram("tgi_request_generated_tokens", "Generated tokens per request",
              [(max_total_tokens / 100.0) * (x + 1) for x in range(100)], [("", tokens)])
    scalar("tgi_request_failure", "counter", None, [('{err="validation"}', 18), ('{err="overloaded"}', 4)], str)
    histogram("tgi_request_validation_duration", "Request validation duration", duration_bounds,
              [("", validation)])
    scalar("tgi_batch_current_max_tokens", "gauge", "Maximum tokens for the current batch", [("", 31744.0)],
           rust_f64)
    histogram("tgi_request_mean_time_per_token_duration", "Mean time per token per request", duration_bounds,
              [("", per_token)])
    scalar("tgi_batch_max_total_tokens", "gauge", None, [("", 262144.0)], rust_f64)
    histogram("tgi_request_input_length", "Input token length per request",
              [(max_input_tokens / 100.0) * (x + 1) for x in range(100)],
              [("", [max(1, int(rng.lognormvariate(6.2, 0.9))) for _ in range(n + 22)])])
    scalar("tgi_batch_inference_success", "counter",
           "Number of successful inference calls per method (prefill or decode)",
           [('{method="prefill"}', 5120), ('{method="decode"}', 90130)], str)
    return "".join(out)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.stdout.write({"vllm": vllm, "sglang": sglang}[sys.argv[1]]())
    else:
        # one process each: vLLM's default registry and SGLang's multiprocess mode cannot share one
        for engine in ("vllm", "sglang"):
            text = subprocess.run([sys.executable, os.path.abspath(__file__), engine], check=True,
                                  capture_output=True, text=True).stdout
            with open(os.path.join(HERE, engine + ".txt"), "w") as f:
                f.write(text)
        with open(os.path.join(HERE, "tgi.txt"), "w") as f:
            f.write(tgi())
