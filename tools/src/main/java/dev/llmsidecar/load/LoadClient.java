package dev.llmsidecar.load;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * The tools' one HTTP load client (the sweep, the benchmark's per-phase client, the demo traffic): sends requests to
 * one host:port and hands each response to a {@link ResponseReader}, every read stamped with one
 * {@link System#nanoTime()} as the sidecar and {@code vllm bench serve} stamp theirs. Everything runs on one Vert.x
 * context (one event loop), so per-request state needs no locks: call {@link #send} and {@link #cancelAll} on
 * {@link #context()}. When to send is {@link OpenLoop}'s or {@link ClosedLoop}'s business; a process wanting more than
 * one event loop runs one client per loop.
 */
public final class LoadClient {

    private final Context context;
    private final HttpClient client;
    /** Requests sent and not finished, with a connection or still waiting for one. */
    private final Set<Exchange<?>> open = new LinkedHashSet<>();

    /** @param maxConnections pooled keep-alive connections; requests beyond them wait for one */
    public LoadClient(Vertx vertx, Context context, String host, int port, int maxConnections) {
        this.context = context;
        this.client = vertx.createHttpClient(new HttpClientOptions().setDefaultHost(host).setDefaultPort(port)
                .setTcpNoDelay(true).setKeepAlive(true).setIdleTimeout(0).setConnectTimeout(10_000),
                new PoolOptions().setHttp1MaxSize(Math.max(1, maxConnections)).setMaxWaitQueueSize(-1));
    }

    public Context context() {
        return context;
    }

    /** Requests sent and not finished. */
    public int inFlight() {
        return open.size();
    }

    /** Resets every open request; their readers end with {@code cancelled}. */
    public void cancelAll() {
        for (Exchange<?> x : List.copyOf(open)) {
            x.cancelled = true;
            if (x.request != null) {
                x.request.reset();
            }
            x.end("cancelled");
        }
    }

    public Future<Void> close() {
        return client.close();
    }

    /**
     * Sends one request (host and port are the client's; method, URI, headers and timeouts are {@code options}');
     * completes, never fails, with what {@code reader} makes of the response.
     */
    public <R> Future<R> send(RequestOptions options, Buffer body, ResponseReader<R> reader) {
        Exchange<R> x = new Exchange<>(reader);
        open.add(x);
        client.request(options).onFailure(x::fail).onSuccess(req -> {
            x.request = req;
            if (x.cancelled) {
                req.reset(); // cancelled while waiting for a connection
                return;
            }
            req.exceptionHandler(x::fail);
            reader.sent(System.nanoTime());
            req.send(body).onFailure(x::fail).onSuccess(res -> {
                reader.status(res.statusCode());
                res.exceptionHandler(x::fail);
                res.handler(b -> reader.data(b, System.nanoTime()));
                res.endHandler(v -> x.end(null));
            });
        });
        return x.done.future();
    }

    /** One request in flight. */
    private final class Exchange<R> {
        final ResponseReader<R> reader;
        final Promise<R> done = Promise.promise();
        HttpClientRequest request;
        boolean cancelled;
        boolean ended;

        Exchange(ResponseReader<R> reader) {
            this.reader = reader;
        }

        void fail(Throwable t) {
            end(cancelled ? "cancelled" : t instanceof TimeoutException
                    || String.valueOf(t.getMessage()).contains("timeout") ? "timeout" : "connection");
        }

        void end(String failure) {
            if (ended) {
                return;
            }
            ended = true;
            open.remove(this);
            done.complete(reader.end(failure, System.nanoTime()));
        }
    }
}
