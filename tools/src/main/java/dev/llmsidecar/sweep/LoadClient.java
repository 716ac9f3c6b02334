package dev.llmsidecar.sweep;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * Sends streaming chat completions and records what arrives when ({@link RequestRecord}). Every call and callback
 * runs on one Vert.x context (one event loop), so its state needs no locks; {@link #send} must be called on it.
 */
final class LoadClient {

    private final Context context;
    private final HttpClient client;
    private final String host;
    private final int port;
    private final String path;
    private final Map<String, String> headers;
    private final long idleTimeoutMs;
    /** Requests sent and not finished, a connection or not yet. */
    private final Set<Stream> open = new LinkedHashSet<>();

    LoadClient(Vertx vertx, Context context, URI base, String path, Map<String, String> headers, int maxConnections,
            long idleTimeoutMs) {
        if (!"http".equals(base.getScheme())) {
            throw new IllegalArgumentException("--url must be http://host:port (the sidecar's proxy port): " + base);
        }
        this.context = context;
        this.host = base.getHost();
        this.port = base.getPort() > 0 ? base.getPort() : 80;
        String prefix = base.getRawPath() == null ? "" : base.getRawPath().replaceAll("/+$", "");
        this.path = prefix + path;
        this.headers = headers;
        this.idleTimeoutMs = idleTimeoutMs;
        this.client = vertx.createHttpClient(new HttpClientOptions().setTcpNoDelay(true).setKeepAlive(true)
                .setConnectTimeout(10_000), new PoolOptions().setHttp1MaxSize(maxConnections)
                .setMaxWaitQueueSize(-1));
    }

    Context context() {
        return context;
    }

    /** Requests sent and not finished. */
    int inFlight() {
        return open.size();
    }

    /** Resets every open request (the drain bound was reached); their records end as {@code cancelled}. */
    void cancelAll() {
        for (Stream s : List.copyOf(open)) {
            s.cancelled = true;
            if (s.request != null) {
                s.request.reset();
            }
            s.finish("cancelled");
        }
    }

    Future<Void> close() {
        return client.close();
    }

    /** Sends one request; completes (never fails) with its record. */
    Future<RequestRecord> send(Buffer body, boolean measured) {
        Promise<RequestRecord> done = Promise.promise();
        Stream s = new Stream(measured, done);
        open.add(s);
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost(host).setPort(port)
                .setURI(path).setIdleTimeout(idleTimeoutMs).putHeader("content-type", "application/json")
                .putHeader("accept", "text/event-stream");
        headers.forEach(options::putHeader);
        client.request(options).onFailure(t -> s.fail(t)).onSuccess(req -> {
            s.request = req;
            if (s.cancelled) {
                req.reset(); // cancelled while waiting for a connection
                return;
            }
            req.exceptionHandler(s::fail);
            s.sent = System.nanoTime();
            req.send(body).onFailure(s::fail).onSuccess(res -> {
                s.status = res.statusCode();
                res.exceptionHandler(s::fail);
                res.handler(s::onData);
                res.endHandler(v -> s.onEnd());
            });
        });
        return done.future();
    }

    /** One response being read: SSE framing, vllm bench serve's and the sidecar's stamps. */
    private final class Stream {
        final boolean measured;
        final Promise<RequestRecord> done;
        HttpClientRequest request;
        long sent = -1;
        int status;
        Buffer pending = Buffer.buffer();
        long firstChoices = -1;
        long firstToken = -1;
        long lastToken = -1;
        long lastMessage = -1;
        long mostRecent = -1;
        DoubleList benchItl = new DoubleList();
        DoubleList chunkGaps = new DoubleList();
        int tokenChunks;
        int completionTokens = -1;
        int promptTokens = -1;
        boolean sawDone;
        String streamError;
        boolean finished;
        boolean cancelled;

        Stream(boolean measured, Promise<RequestRecord> done) {
            this.measured = measured;
            this.done = done;
        }

        void onData(Buffer b) {
            long now = System.nanoTime();
            if (status != 200) {
                return; // an error body: its content is not timed
            }
            pending.appendBuffer(b);
            int start = 0;
            byte[] bytes = pending.getBytes();
            for (int i = 0; i < bytes.length - 1; i++) {
                int end = -1;
                if (bytes[i] == '\n' && bytes[i + 1] == '\n') {
                    end = i + 2;
                } else if (bytes[i] == '\n' && bytes[i + 1] == '\r' && i + 2 < bytes.length && bytes[i + 2] == '\n') {
                    end = i + 3;
                }
                if (end > 0) {
                    onEvent(new String(bytes, start, i - start, StandardCharsets.UTF_8), now);
                    start = end;
                    i = end - 1;
                }
            }
            pending = start == 0 ? pending : Buffer.buffer(bytes).getBuffer(start, bytes.length);
        }

        void onEvent(String event, long now) {
            StringBuilder data = null;
            for (String line : event.split("\r?\n")) {
                if (line.startsWith("data:")) {
                    String d = line.substring(5);
                    d = d.startsWith(" ") ? d.substring(1) : d;
                    if (data == null) {
                        data = new StringBuilder(d);
                    } else {
                        data.append('\n').append(d);
                    }
                }
            }
            if (data == null) {
                return; // a comment or an event without data
            }
            String d = data.toString().strip();
            if (d.equals("[DONE]")) {
                sawDone = true;
                return;
            }
            JsonObject o;
            try {
                o = new JsonObject(d);
            } catch (RuntimeException e) {
                return; // not JSON: vllm bench serve would fail on it; we just do not time it
            }
            if (o.getValue("error") != null) {
                streamError = "stream_error";
            }
            JsonArray choices = o.getValue("choices") instanceof JsonArray a ? a : null;
            if (choices != null && !choices.isEmpty()) {
                // vllm bench serve: TTFT at the first message with choices, then one ITL sample per such message
                if (firstChoices < 0) {
                    firstChoices = now;
                } else {
                    benchItl.add((now - mostRecent) / 1e9);
                }
                if (tokenBearing(choices)) {
                    if (firstToken < 0) {
                        firstToken = now;
                    } else {
                        chunkGaps.add((now - lastToken) / 1e9);
                    }
                    lastToken = now;
                    tokenChunks++;
                }
            }
            JsonObject usage = o.getValue("usage") instanceof JsonObject u ? u : null;
            if (usage != null) {
                if (usage.getValue("completion_tokens") instanceof Number n) {
                    completionTokens = n.intValue();
                }
                if (usage.getValue("prompt_tokens") instanceof Number n) {
                    promptTokens = n.intValue();
                }
            }
            mostRecent = now;
            lastMessage = now;
        }

        void onEnd() {
            String error = null;
            if (status != 200) {
                error = "http_" + status;
            } else if (streamError != null) {
                error = streamError;
            } else if (!sawDone) {
                error = "incomplete";
            }
            finish(error);
        }

        void fail(Throwable t) {
            finish(cancelled ? "cancelled" : t instanceof TimeoutException
                    || String.valueOf(t.getMessage()).contains("timeout") ? "timeout" : "connection");
        }

        void finish(String error) {
            if (finished) {
                return;
            }
            finished = true;
            open.remove(this);
            done.complete(new RequestRecord(sent < 0 ? System.nanoTime() : sent, firstChoices, firstToken, lastToken,
                    lastMessage, benchItl.toArray(), chunkGaps.toArray(), tokenChunks, completionTokens,
                    promptTokens, System.nanoTime(), error, measured));
        }
    }

    /** A chunk carrying content, reasoning, a refusal, text or a tool call (the sidecar's first-token predicate). */
    static boolean tokenBearing(JsonArray choices) {
        for (int i = 0; i < choices.size(); i++) {
            if (!(choices.getValue(i) instanceof JsonObject c)) {
                continue;
            }
            if (nonEmpty(c.getValue("text"))) {
                return true;
            }
            if (c.getValue("delta") instanceof JsonObject delta) {
                for (String key : new String[] {"content", "reasoning_content", "reasoning", "refusal"}) {
                    if (nonEmpty(delta.getValue(key))) {
                        return true;
                    }
                }
                if (delta.getValue("tool_calls") instanceof JsonArray calls && !calls.isEmpty()) {
                    return true;
                }
                if (delta.getValue("function_call") instanceof JsonObject) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean nonEmpty(Object v) {
        return v instanceof String s && !s.isEmpty();
    }

    /** A growable array of doubles. */
    static final class DoubleList {
        private double[] values = new double[16];
        private int size;

        void add(double v) {
            if (size == values.length) {
                values = java.util.Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }

        double[] toArray() {
            return java.util.Arrays.copyOf(values, size);
        }
    }
}
