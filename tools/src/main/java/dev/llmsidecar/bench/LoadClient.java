package dev.llmsidecar.bench;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Closed-loop load client: holds {@code conc} streams open for {@code seconds} (a finished stream is replaced at
 * once), and measures, per event, arrival nanoTime minus the engine's send stamp ({@code "t"}) — the response-path
 * delay — and per stream the request-path delay (engine arrival stamp {@code "a"} minus client send). Prints one
 * JSON object (microseconds) on stdout.
 *
 * <p>Modes: {@code stream} (paced events), {@code burst} (engine sends as fast as the path drains: throughput),
 * {@code plain} (non-streaming requests, closed loop).
 *
 * <p>Usage: {@code LoadClient host port mode conc seconds events intervalMs ttftMs model [instances]};
 * {@code -Dbench.path=/raw/completions} sends to a path the sidecar proxies without timing it (plain proxy cost).
 */
public final class LoadClient extends AbstractVerticle {
    /** A made-up key as long as a real project key ("sk-proj-" and 156 characters). */
    private static final String API_KEY = "Bearer sk-proj-" + "x".repeat(156);

    static String host;
    static int port;
    static String mode;
    static int conc;
    static int seconds;
    static int events;
    static int intervalMs;
    static int ttftMs;
    static String model;
    static long deadline;
    static long startedAt;
    /** Samples before this (the first fifth of the phase, at most 2 s) are not recorded: client JIT warm-up. */
    static long recordFrom;

    // per instance (one event loop each), merged at the end
    final Map<String, Histogram> hist = new LinkedHashMap<>();
    long streamsDone;
    long errors;
    long tokenEvents;
    long bytes;
    int share;
    int open;
    HttpClient client;
    Promise<Void> finished = Promise.promise();

    LoadClient(int share) {
        this.share = share;
        for (String n : List.of("ttftOverhead", "chunkDelay", "requestPath", "engineTtft", "engineItl", "clientItl",
                "clientTtft", "plainLatency")) {
            hist.put(n, new Histogram(60_000_000_000L, 3));
        }
    }

    public static void main(String[] a) throws Exception {
        host = a[0];
        port = Integer.parseInt(a[1]);
        mode = a[2];
        conc = Integer.parseInt(a[3]);
        seconds = Integer.parseInt(a[4]);
        events = Integer.parseInt(a[5]);
        intervalMs = Integer.parseInt(a[6]);
        ttftMs = Integer.parseInt(a[7]);
        model = a[8];
        int instances = a.length > 9 ? Integer.parseInt(a[9]) : 2;
        instances = Math.max(1, Math.min(instances, conc));
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(instances));
        List<LoadClient> clients = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            clients.add(new LoadClient(conc / instances + (i < conc % instances ? 1 : 0)));
        }
        startedAt = System.nanoTime();
        deadline = startedAt + seconds * 1_000_000_000L;
        recordFrom = startedAt + Math.min(2_000_000_000L, seconds * 200_000_000L);
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (LoadClient c : clients) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            vertx.deployVerticle(c, new DeploymentOptions()).onFailure(f::completeExceptionally);
            c.finished.future().onComplete(ar -> f.complete(null));
            done.add(f);
        }
        long budget = seconds + 30L + (long) events * Math.max(intervalMs, 1) / 1000;
        try {
            CompletableFuture.allOf(done.toArray(new CompletableFuture[0])).get(budget, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            System.err.println("load client: streams still open after " + budget + " s; reporting what we have");
        }
        long elapsed = System.nanoTime() - startedAt;
        // merge on this thread after every instance stopped (or timed out)
        Map<String, Histogram> merged = new LinkedHashMap<>();
        long streams = 0, errs = 0, toks = 0, byt = 0;
        for (LoadClient c : clients) {
            synchronized (c) {
                c.hist.forEach((k, h) -> merged.computeIfAbsent(k, x -> new Histogram(60_000_000_000L, 3)).add(h));
                streams += c.streamsDone;
                errs += c.errors;
                toks += c.tokenEvents;
                byt += c.bytes;
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT,
                "{\"mode\":\"%s\",\"conc\":%d,\"seconds\":%.3f,\"streams\":%d,\"errors\":%d,\"tokenEvents\":%d,"
                        + "\"bytes\":%d,\"eventsPerSec\":%.1f,\"requestsPerSec\":%.1f",
                mode, conc, elapsed / 1e9, streams, errs, toks, byt, toks / (elapsed / 1e9), streams / (elapsed / 1e9)));
        merged.forEach((k, h) -> sb.append(String.format(Locale.ROOT,
                ",\"%s\":{\"count\":%d,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f,\"mean\":%.1f}",
                k, h.getTotalCount(), us(h.getValueAtPercentile(50)), us(h.getValueAtPercentile(90)),
                us(h.getValueAtPercentile(99)), us(h.getValueAtPercentile(99.9)), us(h.getMaxValue()),
                h.getMean() / 1000)));
        sb.append('}');
        System.out.println(sb);
        System.out.flush();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        System.exit(0);
    }

    static double us(long nanos) {
        return nanos / 1000.0;
    }

    @Override
    public void start() {
        client = vertx.createHttpClient(new HttpClientOptions().setDefaultHost(host).setDefaultPort(port)
                        .setTcpNoDelay(true).setKeepAlive(true).setIdleTimeout(0).setConnectTimeout(10_000),
                new PoolOptions().setHttp1MaxSize(Math.max(1, share)).setMaxWaitQueueSize(-1));
        if (share == 0) {
            finished.tryComplete();
            return;
        }
        // stagger the first requests over up to 1 s so thousands of connects do not arrive in one burst
        long spread = Math.min(1000, seconds * 250L);
        for (int i = 0; i < share; i++) {
            long delay = share == 1 ? 0 : spread * i / share;
            if (delay <= 0) {
                startOne();
            } else {
                vertx.setTimer(delay, t -> startOne());
            }
        }
    }

    private void startOne() {
        if (System.nanoTime() - deadline >= 0) {
            if (open == 0) {
                finished.tryComplete();
            }
            return;
        }
        open++;
        if (mode.equals("plain")) {
            plain();
        } else {
            stream();
        }
    }

    private void ended(boolean ok) {
        synchronized (this) {
            if (ok) {
                streamsDone++;
            } else {
                errors++;
            }
        }
        open--;
        startOne();
    }

    private RequestOptions options(boolean stream) {
        // the headers the OpenAI Python SDK 1.x sends (16 with host and length): a proxy holds them per open stream
        return new RequestOptions().setMethod(HttpMethod.POST).setURI(System.getProperty("bench.path", "/v1/chat/completions"))
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
                .putHeader("x-bench-events", Integer.toString(events))
                .putHeader("x-bench-interval-ms", Integer.toString(mode.equals("burst") ? 0 : intervalMs))
                .putHeader("x-bench-ttft-ms", Integer.toString(ttftMs))
                .setTimeout(seconds * 1000L + (long) events * Math.max(intervalMs, 1) + 60_000L);
    }

    /**
     * Streams started before {@link #recordFrom} (ramp-up, the client's own JIT warm-up) name the bench's warm-up
     * model, so the sidecar's windows for {@link #model} hold exactly the streams whose engine-side TTFT and ITL this
     * client records (and no model is added per phase: each costs the sidecar about 200 KB of windows).
     */
    private String body(boolean stream, long sent) {
        String name = sent - recordFrom < 0 ? "bench-warmup" : model;
        return "{\"model\":\"" + name + "\",\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"benchmark\"}]}";
    }

    private void plain() {
        long sent = System.nanoTime();
        client.request(options(false)).compose(r -> r.send(body(false, sent))).compose(r -> r.body()).onComplete(ar -> {
            if (ar.succeeded() && System.nanoTime() - recordFrom >= 0) {
                synchronized (this) {
                    hist.get("plainLatency").recordValue(System.nanoTime() - sent);
                    bytes += ar.result().length();
                }
            }
            ended(ar.succeeded());
        });
    }

    private void stream() {
        long sent = System.nanoTime();
        StreamState s = new StreamState(sent);
        client.request(options(true)).compose(r -> r.send(body(true, sent))).onComplete(ar -> {
            if (ar.failed()) {
                ended(false);
                return;
            }
            var res = ar.result();
            if (res.statusCode() != 200) {
                res.body().onComplete(x -> ended(false));
                return;
            }
            res.handler(buf -> {
                long now = System.nanoTime();
                synchronized (this) {
                    s.feed(buf, now);
                }
            });
            res.exceptionHandler(t -> s.fail());
            res.endHandler(v -> s.end());
        });
    }

    /** Splits SSE events ("\n\n"-terminated) across reads; every completed event is stamped with its read's time. */
    private final class StreamState {
        final long sent;
        /** Started after {@link #recordFrom}: counted in the engine's TTFT and ITL (see {@link #body}). */
        final boolean measured;
        byte[] carry = new byte[512];
        int carryLength;
        long prevT = -1;
        long prevNow = -1;
        boolean closed;

        StreamState(long sent) {
            this.sent = sent;
            this.measured = sent - recordFrom >= 0;
        }

        void feed(Buffer buf, long now) {
            bytes += buf.length();
            int n = buf.length();
            for (int i = 0; i < n; i++) {
                byte b = buf.getByte(i);
                if (carryLength == carry.length) {
                    carry = java.util.Arrays.copyOf(carry, carry.length * 2);
                }
                carry[carryLength++] = b;
                if (b == '\n' && carryLength >= 2 && carry[carryLength - 2] == '\n') {
                    onEvent(now);
                    carryLength = 0;
                }
            }
        }

        void onEvent(long now) {
            long t = field(carry, carryLength, (byte) 't');
            if (t < 0) {
                return;
            }
            tokenEvents++;
            if (now - recordFrom < 0) {
                prevT = t;
                prevNow = now;
                return;
            }
            hist.get("chunkDelay").recordValue(Math.max(0, now - t));
            if (prevT < 0) {
                long a = field(carry, carryLength, (byte) 'a');
                if (a > 0) {
                    hist.get("requestPath").recordValue(Math.max(0, a - sent));
                    hist.get("ttftOverhead").recordValue(Math.max(0, (a - sent) + (now - t)));
                    if (measured) {
                        hist.get("engineTtft").recordValue(Math.max(0, t - a));
                    }
                }
                hist.get("clientTtft").recordValue(Math.max(0, now - sent));
            } else {
                if (measured) {
                    hist.get("engineItl").recordValue(Math.max(0, t - prevT));
                }
                hist.get("clientItl").recordValue(Math.max(0, now - prevNow));
            }
            prevT = t;
            prevNow = now;
        }

        void end() {
            if (!closed) {
                closed = true;
                ended(true);
            }
        }

        void fail() {
            if (!closed) {
                closed = true;
                ended(false);
            }
        }
    }

    /** Value of the last {@code ,"x":digits} member in the event, or -1. */
    static long field(byte[] b, int len, byte name) {
        for (int i = len - 4; i >= 0; i--) {
            if (b[i] == '"' && b[i + 1] == name && b[i + 2] == '"' && b[i + 3] == ':'
                    && i > 0 && (b[i - 1] == ',' || b[i - 1] == '{')) {
                long v = 0;
                int j = i + 4;
                if (j >= len || b[j] < '0' || b[j] > '9') {
                    return -1;
                }
                while (j < len && b[j] >= '0' && b[j] <= '9') {
                    v = v * 10 + (b[j++] - '0');
                }
                return v;
            }
        }
        return -1;
    }
}
