package dev.llmsidecar.bench;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.nio.charset.StandardCharsets;

/**
 * A minimal, fast OpenAI-style SSE engine for the benchmark. Every event carries its send time as
 * {@code "t":<System.nanoTime()>} (taken just before the write), and the first event also carries the arrival time
 * of the request, {@code "a":<nanoTime>}, so a client on the same machine can split latency into request path,
 * engine schedule and response path without trusting any proxy.
 *
 * <p>POST /v1/chat/completions; headers: {@code x-bench-events} (token events, default 20),
 * {@code x-bench-interval-ms} (gap between events; 0 = send as fast as the connection drains, the saturation
 * mode), {@code x-bench-ttft-ms} (delay before the first event, default 10). A body with
 * {@code "stream":false} gets one JSON answer at once. A body asking for {@code include_usage} gets a final
 * usage-only chunk, as vLLM sends. Prints {@code PORT n} when listening.
 *
 * <p>Usage: {@code java -cp <vertx jars> BenchEngine <port|0> [eventLoops]}
 */
public final class BenchEngine extends AbstractVerticle {

    private static final byte[] HEAD = ("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
            + "\"created\":1700000000,\"model\":\"bench\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok\"},"
            + "\"logprobs\":null,\"finish_reason\":null}]").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] USAGE = ("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
            + "\"created\":1700000000,\"model\":\"bench\",\"choices\":[],\"usage\":{\"prompt_tokens\":8,"
            + "\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n").getBytes(StandardCharsets.US_ASCII);
    private static final String PLAIN = "{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion\",\"created\":1700000000,"
            + "\"model\":\"bench\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hello world\"},"
            + "\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":2,"
            + "\"total_tokens\":10}}";
    static int port;

    public static void main(String[] args) {
        port = Integer.parseInt(args[0]);
        int loops = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops).setPreferNativeTransport(false));
        // pick the port once so every instance shares it
        if (port == 0) {
            try (var s = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            } catch (java.io.IOException e) {
                throw new RuntimeException(e);
            }
        }
        vertx.deployVerticle(BenchEngine::new, new DeploymentOptions().setInstances(loops)).onComplete(ar -> {
            if (ar.failed()) {
                ar.cause().printStackTrace();
                System.exit(1);
            }
            System.out.println("PORT " + port);
            System.out.flush();
        });
    }

    @Override
    public void start(io.vertx.core.Promise<Void> started) {
        vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(port).setTcpNoDelay(true)
                        .setAcceptBacklog(8192))
                .requestHandler(this::handle).listen().<Void>mapEmpty().onComplete(started);
    }

    private void handle(HttpServerRequest req) {
        long arrival = System.nanoTime();
        if (!req.path().endsWith("/completions")) {
            req.response().setStatusCode(404).end();
            return;
        }
        req.body().onSuccess(body -> {
            String b = body.toString(StandardCharsets.UTF_8);
            HttpServerResponse res = req.response();
            if (b.contains("\"stream\":false") || !b.contains("\"stream\"")) {
                res.putHeader("content-type", "application/json").end(PLAIN);
                return;
            }
            new Stream(req, res, arrival, b.contains("\"include_usage\":true"),
                    intHeader(req, "x-bench-events", 20), intHeader(req, "x-bench-interval-ms", 20),
                    intHeader(req, "x-bench-ttft-ms", 10)).begin();
        });
    }

    private final class Stream {
        final HttpServerResponse res;
        final long arrival;
        final boolean usage;
        final int events;
        final int intervalMs;
        final int ttftMs;
        int sent;
        long timer = -1;
        boolean closed;

        Stream(HttpServerRequest req, HttpServerResponse res, long arrival, boolean usage, int events, int intervalMs,
                int ttftMs) {
            this.res = res;
            this.arrival = arrival;
            this.usage = usage;
            this.events = events;
            this.intervalMs = intervalMs;
            this.ttftMs = ttftMs;
            res.closeHandler(v -> {
                closed = true;
                if (timer >= 0) {
                    vertx.cancelTimer(timer);
                }
            });
        }

        void begin() {
            res.setChunked(true).putHeader("content-type", "text/event-stream").putHeader("cache-control", "no-cache");
            res.write(Buffer.buffer(0));
            if (ttftMs > 0) {
                timer = vertx.setTimer(ttftMs, t -> next());
            } else {
                next();
            }
        }

        void next() {
            if (closed) {
                return;
            }
            if (intervalMs == 0) {
                // saturation: write until the client side is full, continue when it drains
                while (sent < events && !res.writeQueueFull()) {
                    send();
                }
                if (sent < events) {
                    res.drainHandler(v -> next());
                    return;
                }
                end();
                return;
            }
            send();
            if (sent < events) {
                timer = vertx.setTimer(intervalMs, t -> next());
            } else {
                end();
            }
        }

        void send() {
            Buffer b = Buffer.buffer(HEAD.length + 64);
            b.appendBytes(HEAD);
            if (sent == 0) {
                b.appendString(",\"a\":").appendString(Long.toString(arrival));
            }
            sent++;
            b.appendString(",\"t\":").appendString(Long.toString(System.nanoTime())).appendString("}\n\n");
            res.write(b);
        }

        void end() {
            if (usage) {
                res.write(Buffer.buffer(String.format(new String(USAGE, StandardCharsets.US_ASCII), events, events + 8)));
            }
            res.end("data: [DONE]\n\n");
        }
    }

    private static int intHeader(HttpServerRequest req, String name, int fallback) {
        String v = req.getHeader(name);
        return v == null ? fallback : Integer.parseInt(v.trim());
    }
}
