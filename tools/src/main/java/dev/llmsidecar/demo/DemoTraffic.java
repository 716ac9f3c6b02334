package dev.llmsidecar.demo;

import dev.llmsidecar.load.LoadClient;
import dev.llmsidecar.load.OpenLoop;
import dev.llmsidecar.load.PoissonArrivals;
import dev.llmsidecar.load.ResponseReader;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Random;
import java.util.function.Consumer;

/**
 * Sends a mix of LLM requests (chat / completions, streaming or not, some asking for usage, two models, varied
 * lengths, an occasional slow prefill and client error; and a share in the other wire formats: Responses,
 * Anthropic Messages with thinking, Ollama, TGI, llama.cpp, embeddings) through the proxy, so the demo shows
 * live metrics. Requests come from three tenants ({@code x-tenant}); team-batch's are in SLO class {@code batch}
 * ({@code x-slo-class}), the others in the default class.
 *
 * <p>Healthy by default: the rate rises and falls in waves of {@link #WAVE_SECONDS}, from {@value #WAVE_LOW} to
 * {@value #WAVE_HIGH} times the configured mean, which at the demo's 2 requests/s keeps the demo engine's 10 slots
 * under the knee (about 5 requests in flight at the crest, each taking about 2 s). An <em>incident</em>, only when
 * asked for ({@link #startIncident}), is a surge: {@value #INCIDENT_FACTOR} times the mean with up to
 * {@value #INCIDENT_MAX_CONCURRENCY} requests at once, past what the slots serve, so requests queue for a slot and
 * time to first token grows to seconds; it ends after its time or at {@link #endIncident}. Arrivals are an
 * {@link OpenLoop} of Poisson arrivals at the highest rate, each kept with the share the moment's rate is of it (a
 * Poisson process whose rate follows the schedule). An arrival while the moment's maximum concurrency is open is
 * dropped. Runs until {@link #stop()}.
 */
public final class DemoTraffic {

    static final double WAVE_SECONDS = 180;
    static final double WAVE_LOW = 0.6;
    static final double WAVE_HIGH = 1.4;
    static final double INCIDENT_FACTOR = 4;
    static final int INCIDENT_MAX_CONCURRENCY = 64;
    private static final String[] TENANTS = {"team-search", "team-search", "team-chat", "team-batch"};

    private final Vertx vertx;
    private final LoadClient client;
    private final double requestsPerSecond;
    private final int maxConcurrency;
    private final Consumer<String> announce;

    /** Draws the schedule's thinning and the request mix, on the client's context. */
    private final Random random = new Random(7);
    private OpenLoop arrivals;
    private long startedAt;
    /** Guarded by this: the incident's end ({@link System#nanoTime()}), its timer, whether one runs. */
    private long incidentEndsAt;
    private long incidentTimer = -1;
    private volatile boolean incident;
    private volatile String endHint = "";

    public DemoTraffic(Vertx vertx, String host, int port, double requestsPerSecond, int maxConcurrency) {
        this(vertx, host, port, requestsPerSecond, maxConcurrency, line -> { });
    }

    /** @param announce told, in a line, when an incident starts and ends */
    public DemoTraffic(Vertx vertx, String host, int port, double requestsPerSecond, int maxConcurrency,
            Consumer<String> announce) {
        this.vertx = vertx;
        this.requestsPerSecond = requestsPerSecond;
        this.maxConcurrency = maxConcurrency;
        this.announce = announce;
        this.client = new LoadClient(vertx, vertx.getOrCreateContext(), host, port,
                Math.max(maxConcurrency, INCIDENT_MAX_CONCURRENCY));
    }

    /** Starts the traffic a second from now. */
    public void start() {
        startedAt = System.nanoTime();
        PoissonArrivals highest = new PoissonArrivals(requestsPerSecond * Math.max(WAVE_HIGH, INCIDENT_FACTOR), 7);
        arrivals = OpenLoop.start(client.context(), highest::nextNanos, startedAt + 1_000_000_000L, Long.MAX_VALUE,
                () -> {
                    if (random.nextDouble() * highest.rate() < rateNow()) {
                        sendOne();
                    }
                }, "demo-arrivals");
    }

    /** Appended to the announcement of an incident's start: how to end it early. */
    public DemoTraffic endHint(String hint) {
        this.endHint = hint;
        return this;
    }

    /** Requests per second the schedule asks for now. */
    public double rateNow() {
        if (incident) {
            return requestsPerSecond * INCIDENT_FACTOR;
        }
        double phase = (System.nanoTime() - startedAt) / 1e9 / WAVE_SECONDS * 2 * Math.PI;
        return requestsPerSecond * (WAVE_LOW + (WAVE_HIGH - WAVE_LOW) * (1 - Math.cos(phase)) / 2);
    }

    public boolean incident() {
        return incident;
    }

    /** Seconds left of the incident; 0 when none runs. */
    public synchronized long incidentSecondsLeft() {
        return incident ? Math.max(0, (incidentEndsAt - System.nanoTime()) / 1_000_000_000L) : 0;
    }

    /**
     * Starts an incident that lasts {@code length} (one already running is extended or shortened to that); announces
     * it.
     */
    public synchronized void startIncident(Duration length) {
        if (length.isNegative() || length.isZero()) {
            throw new IllegalArgumentException("an incident lasts a positive time: " + length);
        }
        if (incidentTimer >= 0) {
            vertx.cancelTimer(incidentTimer);
        }
        incidentEndsAt = System.nanoTime() + length.toNanos();
        incidentTimer = vertx.setTimer(Math.max(1, length.toMillis()), id -> endIncident("its " + length.toSeconds()
                + " s are over"));
        boolean already = incident;
        incident = true;
        announce.accept(String.format(java.util.Locale.ROOT, "INCIDENT %s for %d s: traffic surges to %.1f requests/s"
                + " (%.0fx the demo's mean), up to %d at once, past what the engine's slots serve; requests queue and"
                + " time to first token grows to seconds. Expect LLMSidecarSLOOutage (objective interactive) to fire"
                + " within about 2 minutes.%s", already ? "extended" : "started", length.toSeconds(),
                requestsPerSecond * INCIDENT_FACTOR, INCIDENT_FACTOR, INCIDENT_MAX_CONCURRENCY,
                endHint.isEmpty() ? "" : " " + endHint));
    }

    /** Ends the incident now, if one runs; announces it. */
    public synchronized boolean endIncident(String why) {
        if (!incident) {
            return false;
        }
        if (incidentTimer >= 0) {
            vertx.cancelTimer(incidentTimer);
            incidentTimer = -1;
        }
        incident = false;
        announce.accept("INCIDENT over (" + why + "): traffic back to the healthy waves; the queue drains in seconds,"
                + " and the alerts clear as their windows move past the incident (the 5-minute outage page within"
                + " about 4 minutes)");
        return true;
    }

    public void stop() {
        synchronized (this) {
            if (incidentTimer >= 0) {
                vertx.cancelTimer(incidentTimer);
            }
        }
        if (arrivals != null) {
            arrivals.stop();
        }
        client.close();
    }

    private void sendOne() {
        if (client.inFlight() >= (incident ? INCIDENT_MAX_CONCURRENCY : maxConcurrency)) {
            return;
        }
        if (random.nextDouble() < 0.3) {
            sendOtherFormat();
            return;
        }
        double kind = random.nextDouble();
        boolean chat = kind < 0.75;
        boolean stream = kind < 0.6 || (kind >= 0.75 && kind < 0.9);
        String model = random.nextDouble() < 0.7 ? "sim-llama-8b" : "sim-qwen-7b";
        JsonObject body = new JsonObject().put("model", model).put("max_tokens", 8 + random.nextInt(120));
        if (chat) {
            body.put("messages", new JsonArray().add(new JsonObject().put("role", "user")
                    .put("content", "Tell me about observability, part " + random.nextInt(1000))));
        } else {
            body.put("prompt", "Once upon a time " + random.nextInt(1000));
        }
        if (stream) {
            body.put("stream", true);
            if (random.nextDouble() < 0.3) {
                body.put("stream_options", new JsonObject().put("include_usage", true));
            }
        }
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST)
                .setURI(chat ? "/v1/chat/completions" : "/v1/completions")
                .putHeader("content-type", "application/json");
        double r = random.nextDouble();
        if (r < 0.01) {
            // a rare slow prefill: the TTFT tail has something in it (and misses the objective's 0.5 s)
            options.putHeader("x-sim-ttft-ms", Integer.toString(800 + random.nextInt(1500)));
        } else if (r < 0.03) {
            options.putHeader("x-sim-status", "400");
        }
        send(options, body);
    }

    /** One request in a non-OpenAI-chat format; reasoning formats think for a while first. */
    private void sendOtherFormat() {
        String model = random.nextDouble() < 0.7 ? "sim-llama-8b" : "sim-qwen-7b";
        int tokens = 8 + random.nextInt(120);
        JsonArray messages = new JsonArray().add(new JsonObject().put("role", "user")
                .put("content", "Explain tail latency, part " + random.nextInt(1000)));
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST)
                .putHeader("content-type", "application/json")
                .putHeader("x-sim-reasoning-tokens", Integer.toString(random.nextInt(tokens / 2 + 1)));
        JsonObject body = switch (random.nextInt(6)) {
            case 0 -> {
                options.setURI("/v1/responses");
                yield new JsonObject().put("model", model).put("input", "Why?").put("stream", true)
                        .put("max_output_tokens", tokens);
            }
            case 1 -> {
                options.setURI("/v1/messages");
                yield new JsonObject().put("model", model).put("max_tokens", tokens).put("messages", messages)
                        .put("stream", random.nextDouble() < 0.8);
            }
            case 2 -> {
                options.setURI("/api/chat");
                yield new JsonObject().put("model", model).put("messages", messages).put("think", true)
                        .put("options", new JsonObject().put("num_predict", tokens));
            }
            case 3 -> {
                options.setURI(random.nextDouble() < 0.8 ? "/generate_stream" : "/generate");
                yield new JsonObject().put("inputs", "What is deep learning?")
                        .put("parameters", new JsonObject().put("max_new_tokens", tokens));
            }
            case 4 -> {
                options.setURI("/completion");
                yield new JsonObject().put("prompt", "Once upon a time").put("n_predict", tokens).put("stream", true);
            }
            default -> {
                options.setURI("/v1/embeddings");
                yield new JsonObject().put("model", "sim-embed").put("input", "observability " + random.nextInt(1000));
            }
        };
        send(options, body);
    }

    private void send(RequestOptions options, JsonObject body) {
        String tenant = TENANTS[random.nextInt(TENANTS.length)];
        options.putHeader("x-tenant", tenant);
        if (tenant.equals("team-batch")) {
            options.putHeader("x-slo-class", "batch");
        }
        client.send(options, body.toBuffer(), ResponseReader.discarding());
    }
}
