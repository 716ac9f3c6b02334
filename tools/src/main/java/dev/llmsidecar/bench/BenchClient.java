package dev.llmsidecar.bench;

import dev.llmsidecar.load.AbstractResponseReader;
import dev.llmsidecar.load.ClosedLoop;
import dev.llmsidecar.load.Latencies;
import dev.llmsidecar.load.LoadClient;
import dev.llmsidecar.load.ResponseReader;
import dev.llmsidecar.load.SseFramer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The benchmark's load client, a fresh JVM per phase ({@link Bench} starts it and reads the JSON it prints): the tools'
 * {@link LoadClient} in a {@link ClosedLoop} of {@code conc} streams for {@code seconds} (a finished stream is
 * replaced at once), one client per event loop. Against the simulated engine's stamps ({@code x-sim-stamps}) it
 * measures per event the arrival nanoTime minus the engine's send stamp {@code "t"} (the response path) and per stream
 * the engine's arrival stamp {@code "a"} minus the client's send (the request path). Stamps are read from the bytes,
 * not parsed as JSON: thousands of streams on few threads stay CPU-cheap. Prints one JSON object (microseconds).
 *
 * <p>Modes: {@code stream} (paced events), {@code burst} (the engine sends as fast as the path drains: throughput),
 * {@code plain} (non-streaming requests), {@code conv} (paced streams that are turns of conversations: each request
 * resends its conversation's whole history, which grows by a user message or a tool's result and the answer before
 * it until it passes {@value #CONVERSATION_BYTES} bytes; then a new conversation starts).
 *
 * <p>Usage: {@code BenchClient host port mode conc seconds events intervalMs ttftMs model [instances]};
 * {@code -Dbench.path=/raw/completions} sends to a path the sidecar proxies without timing it (plain proxy cost).
 */
public final class BenchClient {

    static final List<String> METRICS = List.of("ttftOverhead", "chunkDelay", "requestPath", "engineTtft", "engineItl",
            "clientItl", "clientTtft", "plainLatency");
    /** A made-up key as long as a real project key ("sk-proj-" and 156 characters). */
    static final String API_KEY = "Bearer sk-proj-" + "x".repeat(156);
    private static final String CHAT = "/v1/chat/completions";
    /** A conversation's history is at most about this long (bytes of its messages) before a new one starts. */
    static final int CONVERSATION_BYTES = 200_000;
    /** Bytes a turn adds: the new input (a user's message, or a tool's result) and the answer before it. */
    static final int TURN_INPUT_BYTES = 8_000;
    static final int ANSWER_BYTES = 1_200;

    private BenchClient() {
    }

    /** One phase's settings and clock. */
    record Phase(String host, int port, String mode, int conc, int seconds, int events, int intervalMs, int ttftMs,
            String model, String path, long startedAt) {

        long deadline() {
            return startedAt + seconds * 1_000_000_000L;
        }

        /** Samples before this (the first fifth of the phase, at most 2 s) are not recorded: client JIT warm-up. */
        long recordFrom() {
            return startedAt + Math.min(2_000_000_000L, seconds * 200_000_000L);
        }

        /** How long to wait for the last streams after the deadline. */
        long budgetSeconds() {
            return seconds + 30L + (long) events * Math.max(intervalMs, 1) / 1000;
        }
    }

    public static void main(String[] a) throws Exception {
        int instances = a.length > 9 ? Integer.parseInt(a[9]) : 2;
        Phase phase = new Phase(a[0], Integer.parseInt(a[1]), a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4]),
                Integer.parseInt(a[5]), Integer.parseInt(a[6]), Integer.parseInt(a[7]), a[8],
                System.getProperty("bench.path", CHAT), System.nanoTime());
        System.out.println(run(phase, instances));
        System.out.flush();
        System.exit(0);
    }

    /** Runs the phase on {@code instances} event loops; returns the JSON line. */
    static String run(Phase phase, int instances) throws Exception {
        int n = Math.max(1, Math.min(instances, phase.conc()));
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(n));
        try {
            List<Share> shares = new ArrayList<>();
            List<CompletableFuture<Void>> done = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                // a context per share, each on its own event loop
                Share s = new Share(vertx, vertx.getOrCreateContext(), phase, phase.conc() / n + (i < phase.conc() % n ? 1 : 0));
                shares.add(s);
                done.add(onContext(s.context, s::start));
            }
            try {
                CompletableFuture.allOf(done.toArray(new CompletableFuture[0])).get(phase.budgetSeconds(), TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                System.err.println("load client: streams still open after " + phase.budgetSeconds()
                        + " s; reporting what we have");
            }
            long elapsed = System.nanoTime() - phase.startedAt();
            Share total = new Share(vertx, null, phase, 0);
            for (Share s : shares) {
                // read each share on its own context: streams still open after the budget keep recording
                onContext(s.context, () -> {
                    total.add(s);
                    return Future.succeededFuture();
                }).get(10, TimeUnit.SECONDS);
            }
            return total.json(elapsed);
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private static <T> CompletableFuture<T> onContext(Context context, java.util.function.Supplier<Future<T>> action) {
        CompletableFuture<T> f = new CompletableFuture<>();
        context.runOnContext(v -> action.get().onComplete(ar -> {
            if (ar.succeeded()) {
                f.complete(ar.result());
            } else {
                f.completeExceptionally(ar.cause());
            }
        }));
        return f;
    }

    /** One event loop's streams and what they recorded; confined to its context. */
    static final class Share {
        final Vertx vertx;
        final Context context;
        final Phase phase;
        final int streams;
        final Map<String, Latencies> hist = new LinkedHashMap<>();
        long streamsDone;
        long errors;
        long tokenEvents;
        long bytes;
        private LoadClient client;
        /** Conversations not in a request now: one per stream at most (conv mode). */
        private final java.util.ArrayDeque<Conversation> idle = new java.util.ArrayDeque<>();
        private long conversations;

        Share(Vertx vertx, Context context, Phase phase, int streams) {
            this.vertx = vertx;
            this.context = context;
            this.phase = phase;
            this.streams = streams;
            METRICS.forEach(m -> hist.put(m, new Latencies()));
        }

        /** Starts the streams, the first requests spread over up to 1 s; completes when every stream stopped. */
        Future<Void> start() {
            client = new LoadClient(vertx, context, phase.host(), phase.port(), streams);
            return ClosedLoop.start(vertx, streams, Math.min(1000, phase.seconds() * 250L), 0, this::next).finished();
        }

        private Future<Boolean> next() {
            long now = System.nanoTime();
            if (now - phase.deadline() >= 0) {
                return null;
            }
            boolean measured = now - phase.recordFrom() >= 0;
            boolean stream = !phase.mode().equals("plain");
            ResponseReader<Boolean> reader = stream ? new StampReader(measured) : new PlainReader();
            if (phase.mode().equals("conv")) {
                Conversation c = idle.isEmpty() ? new Conversation(phase.startedAt() + "-" + conversations++)
                        : idle.poll();
                return client.send(options(), c.next(measured ? phase.model() : "bench-warmup"), reader).map(ok -> {
                    if (ok) {
                        streamsDone++;
                        c.answered();
                    } else {
                        errors++;
                    }
                    idle.add(c.full() ? new Conversation(phase.startedAt() + "-" + conversations++) : c);
                    return ok;
                });
            }
            return client.send(options(), body(stream, measured), reader).map(ok -> {
                if (ok) {
                    streamsDone++;
                } else {
                    errors++;
                }
                return ok;
            });
        }

        private RequestOptions options() {
            // the headers the OpenAI Python SDK 1.x sends (16 with host and length): a proxy holds them per open stream
            RequestOptions o = new RequestOptions().setMethod(HttpMethod.POST).setURI(phase.path())
                    .putHeader("accept-encoding", "gzip, deflate")
                    .putHeader("accept", "application/json")
                    .putHeader("content-type", "application/json")
                    .putHeader("user-agent", "OpenAI/Python 1.54.4")
                    .putHeader("x-stainless-lang", "python")
                    .putHeader("x-stainless-package-version", "1.54.4")
                    .putHeader("x-stainless-os", "Linux")
                    .putHeader("x-stainless-arch", "x64")
                    .putHeader("x-stainless-runtime", "CPython")
                    .putHeader("x-stainless-runtime-version", "3.12.7")
                    .putHeader("authorization", API_KEY)
                    .putHeader("x-stainless-async", "false")
                    .putHeader("x-stainless-retry-count", "0")
                    .putHeader("x-stainless-read-timeout", "600")
                    // the simulated engine's per-request schedule
                    .putHeader("x-sim-stamps", "1")
                    .putHeader("x-sim-inter-chunk-ms", Integer.toString(phase.mode().equals("burst") ? 0 : phase.intervalMs()))
                    .putHeader("x-sim-ttft-ms", Integer.toString(phase.ttftMs()))
                    .setTimeout(phase.seconds() * 1000L + (long) phase.events() * Math.max(phase.intervalMs(), 1) + 60_000L);
            if (phase.events() > 0) {
                o.putHeader("x-sim-output-tokens", Integer.toString(phase.events()));
            }
            if (!phase.path().equals(CHAT)) {
                o.putHeader("x-sim-format", CHAT); // the engine answers the untimed path as chat
            }
            return o;
        }

        /**
         * Streams started before the phase's record time (ramp-up, the client's own JIT warm-up) name the bench's
         * warm-up model, so the sidecar's windows for the phase's model hold exactly the streams whose engine-side TTFT
         * and ITL this client records (and no model is added per phase: each costs the sidecar about 200 KB).
         */
        private Buffer body(boolean stream, boolean measured) {
            // -Dbench.continuousUsage: vLLM's cumulative usage on every chunk (the sidecar weights ITL per chunk by it)
            String usage = stream && Boolean.getBoolean("bench.continuousUsage")
                    ? ",\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}" : "";
            return Buffer.buffer("{\"model\":\"" + (measured ? phase.model() : "bench-warmup") + "\",\"stream\":"
                    + stream + usage + ",\"messages\":[{\"role\":\"user\",\"content\":\"benchmark\"}]}");
        }

        /**
         * One conversation of the {@code conv} mode: a system prompt, then turns that alternate a user's message and
         * an agent's tool round (the answer calls a tool, the next turn brings its result). The text is made up and
         * unique per conversation, so no two conversations share a history.
         */
        static final class Conversation {
            final String id;
            final StringBuilder history = new StringBuilder();
            int turns;

            Conversation(String id) {
                this.id = id;
                history.append("{\"role\":\"system\",\"content\":\"You are a helpful assistant. ")
                        .append("Answer briefly. ".repeat(40)).append("\"}");
            }

            /** The next turn's body: the history so far and a new user message or tool result. */
            Buffer next(String model) {
                String words = ("conversation " + id + " turn " + turns + " says something new. ")
                        .repeat(TURN_INPUT_BYTES / 50);
                if (turns % 2 == 1) {
                    history.append(",{\"role\":\"tool\",\"tool_call_id\":\"call-").append(turns)
                            .append("\",\"content\":\"").append(words).append("\"}");
                } else {
                    history.append(",{\"role\":\"user\",\"content\":\"").append(words).append("\"}");
                }
                return Buffer.buffer("{\"model\":\"" + model + "\",\"stream\":true,\"messages\":[" + history
                        + "]}");
            }

            /** The answer to the last turn joins the history (a tool call after a user's turn). */
            void answered() {
                String words = ("answer " + turns + " of " + id + ". ").repeat(ANSWER_BYTES / 30);
                history.append(",{\"role\":\"assistant\",\"content\":\"").append(words).append('"');
                if (turns % 2 == 0) {
                    history.append(",\"tool_calls\":[{\"id\":\"call-").append(turns + 1)
                            .append("\",\"type\":\"function\",\"function\":{\"name\":\"search\","
                                    + "\"arguments\":\"{}\"}}]");
                }
                history.append('}');
                turns++;
            }

            boolean full() {
                return history.length() >= CONVERSATION_BYTES;
            }
        }

        /** A stream's events: each stamped by the engine ({@code "t"}, first also {@code "a"}) and by its read. */
        private final class StampReader extends AbstractResponseReader<Boolean> {
            /** Started after the record time: counted in the engine's TTFT and ITL (see {@link #body}). */
            final boolean measured;
            final SseFramer framer = new SseFramer(this::onEvent);
            long prevT = -1;
            long prevNow = -1;

            StampReader(boolean measured) {
                this.measured = measured;
            }

            @Override
            public void data(Buffer chunk, long nanos) {
                bytes += chunk.length();
                if (statusCode() == 200) {
                    framer.feed(chunk, nanos);
                }
            }

            private void onEvent(byte[] b, int from, int to, long now) {
                long t = field(b, from, to, (byte) 't');
                if (t < 0) {
                    return;
                }
                tokenEvents++;
                if (now - phase.recordFrom() >= 0) {
                    hist.get("chunkDelay").record(now - t);
                    if (prevT < 0) {
                        long a = field(b, from, to, (byte) 'a');
                        if (a > 0) {
                            hist.get("requestPath").record(a - sentNanos());
                            hist.get("ttftOverhead").record((a - sentNanos()) + (now - t));
                            if (measured) {
                                hist.get("engineTtft").record(t - a);
                            }
                        }
                        if (measured) {
                            hist.get("clientTtft").record(now - sentNanos());
                        }
                    } else if (measured) {
                        // the client's own view of the same streams as the engine's: a directly connected client's
                        // timing error is its percentile minus the engine's
                        hist.get("engineItl").record(t - prevT);
                        hist.get("clientItl").record(now - prevNow);
                    }
                }
                prevT = t;
                prevNow = now;
            }

            @Override
            public Boolean end(String failure, long nanos) {
                return failure == null && statusCode() == 200;
            }
        }

        /** A non-streaming answer: its latency. */
        private final class PlainReader extends AbstractResponseReader<Boolean> {
            @Override
            public void data(Buffer chunk, long nanos) {
                bytes += chunk.length();
            }

            @Override
            public Boolean end(String failure, long nanos) {
                boolean ok = failure == null && statusCode() == 200;
                if (ok && nanos - phase.recordFrom() >= 0) {
                    hist.get("plainLatency").record(nanos - sentNanos());
                }
                return ok;
            }
        }

        void add(Share other) {
            other.hist.forEach((k, h) -> hist.get(k).add(h));
            streamsDone += other.streamsDone;
            errors += other.errors;
            tokenEvents += other.tokenEvents;
            bytes += other.bytes;
        }

        String json(long elapsedNanos) {
            double secs = elapsedNanos / 1e9;
            StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
                    "{\"mode\":\"%s\",\"conc\":%d,\"seconds\":%.3f,\"streams\":%d,\"errors\":%d,\"tokenEvents\":%d,"
                            + "\"bytes\":%d,\"eventsPerSec\":%.1f,\"requestsPerSec\":%.1f",
                    phase.mode(), phase.conc(), secs, streamsDone, errors, tokenEvents, bytes, tokenEvents / secs,
                    streamsDone / secs));
            hist.forEach((k, h) -> sb.append(String.format(Locale.ROOT,
                    ",\"%s\":{\"count\":%d,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f,\"mean\":%.1f}",
                    k, h.count(), us(h.percentile(50)), us(h.percentile(90)), us(h.percentile(99)),
                    us(h.percentile(99.9)), us(h.max()), us(h.mean()))));
            return sb.append('}').toString();
        }
    }

    /** Nanoseconds as microseconds; 0 for an empty histogram (the report reads JSON numbers). */
    static double us(double nanos) {
        return Double.isNaN(nanos) ? 0 : nanos / 1000;
    }

    /** Value of the last {@code "x":digits} member (after ',' or '{') in {@code b[from, to)}, or -1. */
    static long field(byte[] b, int from, int to, byte name) {
        for (int i = to - 4; i > from; i--) {
            if (b[i] == '"' && b[i + 1] == name && b[i + 2] == '"' && b[i + 3] == ':'
                    && (b[i - 1] == ',' || b[i - 1] == '{')) {
                int j = i + 4;
                if (j >= to || b[j] < '0' || b[j] > '9') {
                    return -1;
                }
                long v = 0;
                while (j < to && b[j] >= '0' && b[j] <= '9') {
                    v = v * 10 + (b[j++] - '0');
                }
                return v;
            }
        }
        return -1;
    }
}
