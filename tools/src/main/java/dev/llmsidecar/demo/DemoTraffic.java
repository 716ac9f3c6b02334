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
import java.util.Random;

/**
 * Sends a mix of LLM requests (chat / completions, streaming or not, some asking for usage, two models, varied
 * lengths, an occasional slow prefill and client error; and a share in the other wire formats: Responses,
 * Anthropic Messages with thinking, Ollama, TGI, llama.cpp, embeddings) through the proxy, so the demo shows
 * live metrics. Requests come from three tenants ({@code x-tenant}). The rate rises and falls in waves of
 * {@link #WAVE_SECONDS}, from a quarter of the peak to the peak ({@value #PEAK_FACTOR} times the configured rate), so
 * the load crosses the demo engine's slots and the saturation knee shows: an {@link OpenLoop} of Poisson arrivals at
 * the peak rate, each kept with the wave's share (a Poisson process whose rate follows the wave). An arrival while
 * the maximum concurrency is open is dropped. Runs until {@link #stop()}.
 */
public final class DemoTraffic {

    private final LoadClient client;
    private final double requestsPerSecond;
    private final int maxConcurrency;
    static final double WAVE_SECONDS = 180;
    static final double PEAK_FACTOR = 2.5;
    private static final String[] TENANTS = {"team-search", "team-search", "team-chat", "team-batch"};

    /** Draws the wave and the request mix, on the client's context. */
    private final Random random = new Random(7);
    private OpenLoop arrivals;
    private long startedAt;

    public DemoTraffic(Vertx vertx, String host, int port, double requestsPerSecond, int maxConcurrency) {
        this.requestsPerSecond = requestsPerSecond;
        this.maxConcurrency = maxConcurrency;
        this.client = new LoadClient(vertx, vertx.getOrCreateContext(), host, port, maxConcurrency);
    }

    /** Starts the traffic a second from now. */
    public void start() {
        startedAt = System.nanoTime();
        PoissonArrivals peak = new PoissonArrivals(requestsPerSecond * PEAK_FACTOR, 7);
        arrivals = OpenLoop.start(client.context(), peak::nextNanos, startedAt + 1_000_000_000L, Long.MAX_VALUE, () -> {
            if (random.nextDouble() < waveShare()) {
                sendOne();
            }
        }, "demo-arrivals");
    }

    /** Share of the peak rate now: 1/4 at the start of a wave, 1 in its middle. */
    private double waveShare() {
        double phase = (System.nanoTime() - startedAt) / 1e9 / WAVE_SECONDS * 2 * Math.PI;
        return 0.25 + 0.75 * (1 - Math.cos(phase)) / 2;
    }

    public void stop() {
        if (arrivals != null) {
            arrivals.stop();
        }
        client.close();
    }

    private void sendOne() {
        if (client.inFlight() >= maxConcurrency) {
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
        if (r < 0.05) {
            options.putHeader("x-sim-ttft-ms", Integer.toString(800 + random.nextInt(1500))); // slow prefill
        } else if (r < 0.07) {
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
        options.putHeader("x-tenant", TENANTS[random.nextInt(TENANTS.length)]);
        client.send(options, body.toBuffer(), ResponseReader.discarding());
    }
}
