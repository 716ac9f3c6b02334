package dev.llmsidecar.sweep;

import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The sweep's options ({@code bin/sweep --help}); mutable, with the documented defaults. */
public final class SweepOptions {

    /** How load is offered. */
    public enum Mode {
        /** Poisson arrivals at a target request rate per step. */
        OPEN,
        /** A fixed number of concurrent streams per step, each sending its next request when its last one ended. */
        CLOSED,
        /** A recorded trace replayed at its own arrival times, sped up by the step's factor. */
        TRACE
    }

    /** How a recorded trace longer than a step is cut down to it ({@code --trace-sample}). */
    public enum TraceSample {
        /** A contiguous window of the trace (from --trace-offset), its arrivals as recorded. */
        WINDOW,
        /** Every record kept with the same probability, the trace's time compressed by it: the mean rate kept. */
        UNIFORM
    }

    public URI url = URI.create("http://127.0.0.1:8080");
    public String metricsUrl = "http://127.0.0.1:9000/q/metrics";
    public String model;
    public String path = "/v1/chat/completions";
    public Mode mode;
    public double[] loads;
    public double stepSeconds = 30;
    public double warmupSeconds = 5;
    public double drainSeconds = 60;
    public int maxRequests = 10_000;
    public int maxInFlight = 1024;
    public LengthDistribution inputLength = LengthDistribution.parse("256", "--input-len");
    public LengthDistribution outputLength = LengthDistribution.parse("128", "--output-len");
    public Path trace;
    public TraceSample traceSample = TraceSample.WINDOW;
    /** Where a window starts: null (the trace's start), "busiest", or seconds into the trace. */
    public String traceOffset;
    public String traceModel;
    public boolean search;
    /** The search's first load: req/s, or the speed-up for a recorded trace; NaN = 1. */
    public double searchStart = Double.NaN;
    public double searchMin = Double.NaN;
    public double searchMax = Double.NaN;
    public double resolution = 0.05;
    public int maxProbes = 12;
    public double probeSeconds = 60;
    public double probeMaxSeconds = Double.NaN;
    public long seed = 42;
    public SloSpec slo;
    public String sloObjective;
    public Map<String, String> headers = new LinkedHashMap<>();
    public boolean ignoreEos = true;
    public JsonObject extraBody = new JsonObject();
    public double requestTimeoutSeconds = 600;
    public Path out = Path.of("sweep-out");
    public String title;
    public int compareStep;
    public String sim;
    public List<String> sidecarProperties = new ArrayList<>();
    public Path sidecarJar;
    public boolean quiet;
    public boolean help;

    /** The help text: every option, its default, and what it means. */
    public static String help() {
        return """
                bin/sweep: a load sweep through the llm-sidecar, read from the sidecar's own metrics.

                Drives an OpenAI-compatible engine THROUGH the sidecar with streaming chat completions at stepped
                offered loads, scrapes the sidecar's /q/metrics before and after each step, and reports per step the
                difference of its histograms and counters: throughput, p50/p95/p99 TTFT, TPOT, ITL and E2E, errors,
                the share of requests meeting an SLO, the knee and goodput. Writes sweep.md, sweep-*.svg and
                results.json. Method and limits: docs/sweep.md.

                Usage:
                  bin/sweep --model NAME (--rates R1,R2,... | --concurrency C1,C2,...) [options]
                  bin/sweep --sim slots=8 --concurrency 1,2,4,8,16,32 --slo ttft=0.5 --out /tmp/sweep
                  bin/sweep --model NAME --trace day.jsonl [--speedup 1,2,4]     replay a recorded trace
                  bin/sweep --model NAME --search --slo ttft=0.5,tpot=0.05,target=0.99 [--trace day.jsonl]

                Target:
                  --url URL              the sidecar's proxy base URL (default http://127.0.0.1:8080)
                  --metrics-url URL      the sidecar's management /q/metrics (default http://127.0.0.1:9000/q/metrics;
                                         a URL without a path gets /q/metrics)
                  --model NAME           the served model name sent in every request, and the sidecar's model label
                                         the results are read from (required unless --sim)
                  --path PATH            /v1/chat/completions (default) or /v1/completions
                  --api-key KEY          sent as Authorization: Bearer KEY
                  --header 'NAME: VALUE' an extra request header (repeatable), e.g. x-slo-class
                  --request-timeout S    a request idle for S seconds fails as a timeout (default 600)

                Load (exactly one of):
                  --rates R1,R2,...      open loop: Poisson arrivals at R requests/s per step (requests do not wait
                                         for earlier ones; an engine past capacity builds a queue)
                  --concurrency C1,...   closed loop: C concurrent streams per step, each sending its next request
                                         as soon as its last one ended
                  --speedup S1,S2,...    a recorded --trace replayed at its own arrival times, S times as fast
                                         (2: the same requests in half the time; default 1 for a recorded trace)
                  --search               find the load the SLO allows instead (see Search below)
                Steps:
                  --step-seconds S       measured time per step (default 30)
                  --warmup-seconds S     load before the measurement starts, excluded from it (default 5)
                  --max-requests N       at most N measured requests per step (default 10000)
                  --drain-seconds S      after a step, wait up to S seconds for its requests to finish before the
                                         next step; still open then: cancelled and counted (default 60)
                  --max-in-flight N      open loop: an arrival while N requests are open is dropped and counted
                                         (default 1024)

                Request shapes (input and output lengths in tokens):
                  --input-len SPEC       prompt length (default 256)
                  --output-len SPEC      max_tokens (default 128)
                      SPEC: N | fixed:N | uniform:MIN,MAX | normal:MEAN,SD[,min=A][,max=B]
                            | lognormal:MEAN,SD[,min=A][,max=B]   (MEAN, SD of the lengths; bounds default to
                            min=1, max=MEAN+6*SD; draws outside are redrawn: a truncated distribution)
                  --trace FILE.jsonl     a length-only trace, {"input_tokens":N,"output_tokens":M} per line,
                                         replayed in order and cycled at the sweep's arrivals; or a recorded trace
                                         (the sidecar's recorder: timestamp, input_length, output_length, hash_ids,
                                         session_id ...), replayed at its arrival times (--speedup) with prompts in
                                         which equal hash ids are equal text; with --rates or --concurrency only its
                                         lengths and prompts are used (replaces --input-len/--output-len)
                  --trace-sample MODE    a recorded trace longer than a step: window (default: a contiguous window
                                         from --trace-offset) or uniform (every record kept with the same
                                         probability, the trace's time compressed by it: the mean rate kept)
                  --trace-offset WHERE   where the window starts: start (default), busiest (the window with the
                                         most requests), or seconds into the trace
                  --trace-model NAME     replay only the records of this model (default: all)
                  --seed N               seed of every random draw: lengths, prompt words, arrivals (default 42)
                  --no-ignore-eos        do not send "ignore_eos": true (sent by default so that outputs run to
                                         max_tokens on vLLM, SGLang and llama.cpp)
                  --extra-body JSON      members merged into every request body, e.g. '{"temperature":0}'
                  The prompt is N common English words that are one token each in the usual vocabularies (random,
                  so prompts share no prefix): about N tokens plus the chat template; the report shows the prompt
                  tokens the engine reported.

                Search (--search): the load the SLO allows, by bisection:
                  --search               probe at --search-start, double (or halve) until one probe's attainment
                                         is above the target and another's below, then probe the geometric middle
                                         of the two until they are --resolution apart; attainment is the share of
                                         requests meeting every --slo criterion (the sidecar's counters), judged by
                                         its 95 % Wilson interval: above the target, below it, or inconclusive
                                         (then the probe is extended, up to --probe-max-seconds; still inconclusive
                                         counts as not above). Open loop at a request rate; with a recorded --trace,
                                         on its speed-up. Needs --slo. Writes search.md, search.svg, search.json
                  --search-start X       the first probe: req/s, or the speed-up (default 1)
                  --search-min X, --search-max X   give up below / above these (default start / 1024, start x 1024)
                  --resolution F         stop when the lowest load not above the target is at most (1 + F) times
                                         the highest above it (default 0.05)
                  --max-probes N         at most N probes (default 12)
                  --probe-seconds S      measured time of a probe (default 60; --warmup-seconds before it)
                  --probe-max-seconds S  an inconclusive probe is extended by --probe-seconds at a time up to this
                                         measured time (default 3 x --probe-seconds)

                SLO and goodput:
                  --slo SPEC             ttft=0.5,tpot=0.05[,e2e=10][,target=0.99]  (seconds, or 500ms); a request is
                                         good when it completed and met every threshold
                  --slo-objective NAME   the sidecar objective configured with the same thresholds: the share is
                                         then read from its SLO counters (exact, per request); without it the share
                                         is estimated from the histograms' buckets at each threshold

                Report:
                  --out DIR              where sweep.md, sweep-latency.svg, sweep-load.svg, results.json go
                                         (default ./sweep-out)
                  --title TEXT           the report's title
                  --compare-step N       the step (1-based, in run order) compared with vllm bench serve's
                                         definitions (default: the goodput step, else the middle one)
                  --quiet                no progress lines on stderr

                Self-contained run against the simulated engine:
                  --sim SPEC             start the simulated engine (dev.llmsidecar.sim) in this process and the
                                         packaged sidecar (java -jar sidecar/target/quarkus-app/quarkus-run.jar) in front of
                                         it, both on ephemeral loopback ports; --url, --metrics-url and --model are
                                         then set for you, --slo becomes the sidecar objective "sweep", and both are
                                         stopped at the end (the sidecar's log: OUT/sidecar.log). SPEC:
                                         slots=N,ttft-ms=MS,itl-ms=MS,jitter=F (defaults: the demo engine's 10
                                         slots, 250 ms, 25 ms, 0.4)
                  --sidecar-property K=V a sidecar property for --sim (repeatable), e.g.
                                         sidecar.metrics.latency-buckets=0.01,0.02,...
                  --sidecar-jar PATH     the jar --sim runs (default sidecar/target/quarkus-app/quarkus-run.jar of the
                                         checkout bin/sweep is in)
                  --help                 this text
                """;
    }

    /** Parses {@code --key value} / {@code --key=value} arguments; fails with a message naming the option. */
    public static SweepOptions parse(String... args) {
        SweepOptions o = new SweepOptions();
        String inputSpec = null;
        String outputSpec = null;
        List<String> list = new ArrayList<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 2) {
                list.add(a.substring(0, eq));
                list.add(a.substring(eq + 1));
            } else {
                list.add(a);
            }
        }
        for (int i = 0; i < list.size(); i++) {
            String key = list.get(i);
            java.util.function.Supplier<String> value = valueOf(list, i, key);
            switch (key) {
                case "--help", "-h" -> o.help = true;
                case "--quiet" -> o.quiet = true;
                case "--no-ignore-eos" -> o.ignoreEos = false;
                case "--search" -> o.search = true;
                default -> {
                    String v = value.get();
                    i++;
                    switch (key) {
                        case "--url" -> o.url = URI.create(v.replaceAll("/+$", ""));
                        case "--metrics-url" -> o.metricsUrl = metricsUrl(v);
                        case "--model" -> o.model = v;
                        case "--path" -> {
                            if (!v.equals("/v1/chat/completions") && !v.equals("/v1/completions")) {
                                throw new IllegalArgumentException("--path: /v1/chat/completions or /v1/completions");
                            }
                            o.path = v;
                        }
                        case "--api-key" -> o.headers.put("authorization", "Bearer " + v);
                        case "--header" -> {
                            int colon = v.indexOf(':');
                            if (colon <= 0) {
                                throw new IllegalArgumentException("--header: 'NAME: VALUE' expected, got " + v);
                            }
                            o.headers.put(v.substring(0, colon).strip(), v.substring(colon + 1).strip());
                        }
                        case "--request-timeout" -> o.requestTimeoutSeconds = positive(v, key);
                        case "--rates" -> setLoads(o, Mode.OPEN, v, key);
                        case "--concurrency" -> setLoads(o, Mode.CLOSED, v, key);
                        case "--speedup" -> setLoads(o, Mode.TRACE, v, key);
                        case "--trace-sample" -> o.traceSample = switch (v.strip().toLowerCase(java.util.Locale.ROOT)) {
                            case "window" -> TraceSample.WINDOW;
                            case "uniform" -> TraceSample.UNIFORM;
                            default -> throw new IllegalArgumentException("--trace-sample: window or uniform, got "
                                    + v);
                        };
                        case "--trace-offset" -> {
                            String t = v.strip().toLowerCase(java.util.Locale.ROOT);
                            if (!t.equals("start") && !t.equals("busiest")) {
                                nonNegative(t, key);
                            }
                            o.traceOffset = t.equals("start") ? null : t;
                        }
                        case "--trace-model" -> o.traceModel = v;
                        case "--search-start" -> o.searchStart = positive(v, key);
                        case "--search-min" -> o.searchMin = positive(v, key);
                        case "--search-max" -> o.searchMax = positive(v, key);
                        case "--resolution" -> o.resolution = positive(v, key);
                        case "--max-probes" -> o.maxProbes = (int) positiveWhole(v, key);
                        case "--probe-seconds" -> o.probeSeconds = positive(v, key);
                        case "--probe-max-seconds" -> o.probeMaxSeconds = positive(v, key);
                        case "--step-seconds" -> o.stepSeconds = positive(v, key);
                        case "--warmup-seconds" -> o.warmupSeconds = nonNegative(v, key);
                        case "--max-requests" -> o.maxRequests = (int) positiveWhole(v, key);
                        case "--drain-seconds" -> o.drainSeconds = nonNegative(v, key);
                        case "--max-in-flight" -> o.maxInFlight = (int) positiveWhole(v, key);
                        case "--input-len" -> inputSpec = v;
                        case "--output-len" -> outputSpec = v;
                        case "--trace" -> o.trace = Path.of(v);
                        case "--seed" -> o.seed = Long.parseLong(v.strip());
                        case "--slo" -> o.slo = SloSpec.parse(v);
                        case "--slo-objective" -> o.sloObjective = v;
                        case "--extra-body" -> {
                            try {
                                o.extraBody = new JsonObject(v);
                            } catch (RuntimeException e) {
                                throw new IllegalArgumentException("--extra-body: not a JSON object: " + v);
                            }
                        }
                        case "--out" -> o.out = Path.of(v);
                        case "--title" -> o.title = v;
                        case "--compare-step" -> o.compareStep = (int) positiveWhole(v, key);
                        case "--sim" -> o.sim = v;
                        case "--sidecar-property" -> {
                            if (v.indexOf('=') <= 0) {
                                throw new IllegalArgumentException("--sidecar-property: K=V expected, got " + v);
                            }
                            o.sidecarProperties.add(v);
                        }
                        case "--sidecar-jar" -> o.sidecarJar = Path.of(v);
                        default -> throw new IllegalArgumentException("unknown option " + key + " (bin/sweep --help)");
                    }
                }
            }
        }
        if (o.help) {
            return o;
        }
        if (inputSpec != null) {
            o.inputLength = LengthDistribution.parse(inputSpec, "--input-len");
        }
        if (outputSpec != null) {
            o.outputLength = LengthDistribution.parse(outputSpec, "--output-len");
        }
        if (o.trace != null && (inputSpec != null || outputSpec != null)) {
            throw new IllegalArgumentException("--trace replaces --input-len and --output-len: give one or the other");
        }
        if (o.search) {
            if (o.mode != null) {
                throw new IllegalArgumentException("--search finds the load itself: drop --rates, --concurrency and "
                        + "--speedup (the first probe is --search-start)");
            }
            if (o.slo == null) {
                throw new IllegalArgumentException("--search needs --slo (the criteria and the target attainment)");
            }
            // a recorded trace is searched on its speed-up, anything else on the rate (Sweep settles a length-only
            // trace, whose format is known once it is read)
            o.mode = o.trace != null ? Mode.TRACE : Mode.OPEN;
            o.loads = new double[] {Double.isNaN(o.searchStart) ? 1 : o.searchStart};
            o.stepSeconds = o.probeSeconds;
            if (Double.isNaN(o.probeMaxSeconds)) {
                o.probeMaxSeconds = 3 * o.probeSeconds;
            }
            if (o.probeMaxSeconds < o.probeSeconds) {
                throw new IllegalArgumentException("--probe-max-seconds is below --probe-seconds");
            }
        } else if (o.mode == null && o.trace != null) {
            o.mode = Mode.TRACE;
            o.loads = new double[] {1};
        }
        if (o.mode == null) {
            throw new IllegalArgumentException("give the load steps: --rates R1,R2,... (open loop), "
                    + "--concurrency C1,C2,... (closed loop), --trace FILE [--speedup S1,...] (a recorded trace at its "
                    + "arrival times) or --search");
        }
        if (o.mode == Mode.TRACE && o.trace == null) {
            throw new IllegalArgumentException("--speedup replays a recorded trace: give --trace FILE");
        }
        if (o.model == null && o.sim == null) {
            throw new IllegalArgumentException("--model is required: the served model name");
        }
        if (o.sloObjective != null && o.slo == null) {
            throw new IllegalArgumentException("--slo-objective needs --slo (the thresholds the objective has)");
        }
        if (o.compareStep > o.loads.length) {
            throw new IllegalArgumentException("--compare-step " + o.compareStep + ": there are " + o.loads.length
                    + " steps");
        }
        return o;
    }

    private static java.util.function.Supplier<String> valueOf(List<String> list, int i, String key) {
        return () -> {
            if (i + 1 >= list.size()) {
                throw new IllegalArgumentException(key + " needs a value");
            }
            return list.get(i + 1);
        };
    }

    private static void setLoads(SweepOptions o, Mode mode, String v, String key) {
        if (o.mode != null) {
            throw new IllegalArgumentException("give either --rates or --concurrency, not both");
        }
        double[] loads;
        try {
            loads = Arrays.stream(v.split(",")).map(String::strip).filter(s -> !s.isEmpty())
                    .mapToDouble(Double::parseDouble).toArray();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + ": a comma-separated list of numbers expected: " + v);
        }
        if (loads.length == 0) {
            throw new IllegalArgumentException(key + ": no steps");
        }
        for (double l : loads) {
            if (!(l > 0) || Double.isInfinite(l) || (mode == Mode.CLOSED && l != Math.rint(l))) {
                throw new IllegalArgumentException(key + ": every step must be a positive "
                        + (mode == Mode.CLOSED ? "whole number" : "number") + ": " + v);
            }
        }
        o.mode = mode;
        o.loads = loads;
    }

    static String metricsUrl(String v) {
        URI u = URI.create(v);
        if (u.getPath() == null || u.getPath().isEmpty() || u.getPath().equals("/")) {
            return v.replaceAll("/+$", "") + "/q/metrics";
        }
        return v;
    }

    private static double positive(String v, String key) {
        double d = number(v, key);
        if (!(d > 0)) {
            throw new IllegalArgumentException(key + " must be positive: " + v);
        }
        return d;
    }

    private static double nonNegative(String v, String key) {
        double d = number(v, key);
        if (!(d >= 0)) {
            throw new IllegalArgumentException(key + " must not be negative: " + v);
        }
        return d;
    }

    private static long positiveWhole(String v, String key) {
        double d = positive(v, key);
        if (d != Math.rint(d) || d > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(key + " must be a whole number: " + v);
        }
        return (long) d;
    }

    private static double number(String v, String key) {
        try {
            double d = Double.parseDouble(v.strip());
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + ": not a number: " + v);
        }
    }

    /** The operation label the sidecar gives the chosen path. */
    public String operation() {
        return path.endsWith("/chat/completions") ? "chat" : "text_completion";
    }

    /** "req/s", "streams" or "× speed-up". */
    public String loadUnit() {
        return switch (mode) {
            case OPEN -> "req/s";
            case CLOSED -> "streams";
            case TRACE -> "× speed-up";
        };
    }

    /** Arrivals that do not wait for earlier requests: open loop or a trace replay. */
    public boolean openArrivals() {
        return mode != Mode.CLOSED;
    }

    /** How load is offered, for the reports: "Open loop (Poisson arrivals)" ... */
    public String modeDescription() {
        return switch (mode) {
            case OPEN -> "Open loop (Poisson arrivals)";
            case CLOSED -> "Closed loop (fixed concurrency)";
            case TRACE -> "Trace replay (the recorded arrival times, sped up)";
        };
    }

    /** A load value as the report writes it. */
    public String formatLoad(double load) {
        return mode == Mode.CLOSED ? Long.toString(Math.round(load))
                : String.format(Locale.ROOT, load == Math.rint(load) ? "%.0f" : "%.2f", load);
    }
}
