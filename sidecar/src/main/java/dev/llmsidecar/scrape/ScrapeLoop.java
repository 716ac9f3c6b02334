package dev.llmsidecar.scrape;

import static dev.llmsidecar.metrics.Label.RESULT;

import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.Series;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Scrapes one HTTP endpoint now and then every interval, one attempt at a time: a tick is skipped while one is in
 * flight rather than piling up. An attempt has a deadline for connect, headers and body together and a limit on the
 * body's size; a failed, non-2xx, late or oversized one is abandoned and its request reset, which closes its
 * connection, so a late body is never read as the next answer. A whole 2xx body goes to the scraper's reader, which
 * says whether it could read it. Scrapes are counted by result, every result at 0 from the start.
 *
 * <p>Everything runs on one Vert.x context, the reader and {@code down} included; nothing blocks.
 */
public final class ScrapeLoop {

    /** How one scrape ended: read, not answered as it should (connect, deadline, non-2xx, size), or not understood. */
    public enum Outcome {
        OK, ERROR, UNPARSEABLE;

        String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * What to scrape and how.
     *
     * @param what         the endpoint in words, for the error of an unusable URL (e.g. "DCGM exporter")
     * @param url          an absolute http or https URL
     * @param interval     time between scrape starts
     * @param timeout      deadline for a whole attempt: connect, headers and body
     * @param maxBodyBytes a larger body is refused
     * @param accept       the Accept header
     * @param scrapes      the counter of scrapes, labelled by result
     */
    public record Target(String what, URI url, Duration interval, Duration timeout, int maxBodyBytes, String accept,
            Series scrapes) {

        public Target {
            Objects.requireNonNull(url, "url");
            String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
            if (!(scheme.equals("http") || scheme.equals("https")) || url.getHost() == null) {
                throw new IllegalArgumentException(what + " URL must be an absolute http(s) URL: " + url);
            }
            positiveMillis(interval, "interval");
            positiveMillis(timeout, "timeout");
            if (maxBodyBytes < 1) {
                throw new IllegalArgumentException("maxBodyBytes must be positive: " + maxBodyBytes);
            }
            Objects.requireNonNull(accept, "accept");
            Objects.requireNonNull(scrapes, "scrapes");
        }
    }

    /** One scrape in flight. */
    private static final class Attempt {
        final Buffer body = Buffer.buffer();
        HttpClientRequest request;
        long deadlineTimer = -1;
    }

    private final Vertx vertx;
    private final Target target;
    private final String url;
    private final long intervalMillis;
    private final long timeoutMillis;
    private final Function<String, Outcome> reader;
    private final Runnable down;
    private final Context context;
    private final Map<Outcome, Bound> scrapes = new EnumMap<>(Outcome.class);

    // confined to `context`
    private HttpClient client;
    private long periodicTimer = -1;
    private Attempt inFlight;
    private boolean running;

    /**
     * @param reader what a whole 2xx body means: {@link Outcome#OK}, or {@link Outcome#UNPARSEABLE} (having gone down
     *     itself); one that throws counts as unparseable and is told {@code down}
     * @param down   nothing live any more: an attempt failed (counted as an error) or the loop stopped
     */
    public ScrapeLoop(Vertx vertx, Recorders recorders, Target target, Function<String, Outcome> reader,
            Runnable down) {
        this.vertx = Objects.requireNonNull(vertx, "vertx");
        this.target = Objects.requireNonNull(target, "target");
        this.url = target.url().toString();
        this.intervalMillis = target.interval().toMillis();
        this.timeoutMillis = target.timeout().toMillis();
        this.reader = Objects.requireNonNull(reader, "reader");
        this.down = Objects.requireNonNull(down, "down");
        this.context = vertx.getOrCreateContext();
        for (Outcome outcome : Outcome.values()) {
            Bound counter = recorders.bound(target.scrapes(), LabelValues.of(RESULT, outcome.tag()));
            counter.record(0);
            scrapes.put(outcome, counter);
        }
    }

    /** Starts scraping now and then every interval. Idempotent; completes once scheduled. */
    public Future<Void> start() {
        Promise<Void> started = Promise.promise();
        context.runOnContext(v -> {
            if (!running) {
                running = true;
                // one connection for sequential scrapes; an abandoned attempt's reset closes it
                client = vertx.httpClientBuilder()
                        .with(new HttpClientOptions()
                                .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMillis)))
                        .with(new PoolOptions().setHttp1MaxSize(1).setHttp2MaxSize(1))
                        .build();
                periodicTimer = vertx.setPeriodic(intervalMillis, id -> scrape());
                scrape();
            }
            started.complete();
        });
        return started.future();
    }

    /**
     * Stops scraping, abandons an attempt in flight and tells the scraper it is down (meters stay registered).
     * Idempotent; completes once stopped, without blocking.
     */
    public Future<Void> stop() {
        Promise<Void> stopped = Promise.promise();
        context.runOnContext(v -> {
            if (running) {
                running = false;
                vertx.cancelTimer(periodicTimer);
                Attempt attempt = inFlight;
                if (attempt != null) {
                    inFlight = null;
                    abandon(attempt);
                }
                client.close();
                client = null;
                down.run();
            }
            stopped.complete();
        });
        return stopped.future();
    }

    private void scrape() {
        if (!running || inFlight != null) {
            return; // the previous attempt is still within its deadline: skip a tick rather than pile up
        }
        Attempt attempt = new Attempt();
        inFlight = attempt;
        attempt.deadlineTimer = vertx.setTimer(timeoutMillis, id -> failed(attempt));
        Future<HttpClientRequest> requested;
        try {
            requested = client.request(new RequestOptions()
                    .setMethod(HttpMethod.GET)
                    .setAbsoluteURI(url)
                    .putHeader("Accept", target.accept())
                    .putHeader("User-Agent", "llm-sidecar")
                    .setConnectTimeout(timeoutMillis)
                    .setIdleTimeout(timeoutMillis));
        } catch (RuntimeException e) { // the client closed under us: Vert.x itself is closing
            failed(attempt);
            return;
        }
        requested.onFailure(e -> failed(attempt))
                .onSuccess(request -> {
                    if (inFlight != attempt) {
                        request.reset(); // late: the deadline passed, or stopped
                        return;
                    }
                    attempt.request = request;
                    request.send()
                            .onFailure(e -> failed(attempt))
                            .onSuccess(response -> receive(attempt, response));
                });
    }

    private void receive(Attempt attempt, HttpClientResponse response) {
        // first: the reset that ends a refused answer reaches the response as an exception (else Vert.x logs it)
        response.exceptionHandler(e -> failed(attempt));
        if (inFlight != attempt) {
            return;
        }
        if (response.statusCode() / 100 != 2) {
            failed(attempt);
            return;
        }
        response.handler(data -> {
            if (inFlight != attempt) {
                return;
            }
            if ((long) attempt.body.length() + data.length() > target.maxBodyBytes()) {
                failed(attempt);
                return;
            }
            attempt.body.appendBuffer(data);
        });
        response.endHandler(v -> succeeded(attempt));
    }

    /** Connect error, non-2xx, oversized, broken or late (the deadline timer): down, and the connection reset. */
    private void failed(Attempt attempt) {
        if (inFlight != attempt) {
            return; // already finished, timed out or stopped
        }
        inFlight = null;
        abandon(attempt);
        down.run();
        scrapes.get(Outcome.ERROR).record(1);
    }

    private void abandon(Attempt attempt) {
        vertx.cancelTimer(attempt.deadlineTimer);
        if (attempt.request != null) {
            attempt.request.reset(); // HTTP/1.1: closes the connection, so a late body is never read as the next one
        }
    }

    private void succeeded(Attempt attempt) {
        if (inFlight != attempt) {
            return;
        }
        inFlight = null;
        vertx.cancelTimer(attempt.deadlineTimer);
        Outcome outcome;
        try {
            outcome = reader.apply(attempt.body.toString(StandardCharsets.UTF_8)); // malformed bytes read as U+FFFD
        } catch (RuntimeException e) {
            down.run(); // readers do not throw; if one ever does, be down
            outcome = Outcome.UNPARSEABLE;
        }
        scrapes.get(outcome).record(1);
    }

    private static void positiveMillis(Duration duration, String what) {
        if (Objects.requireNonNull(duration, what).toMillis() < 1) {
            throw new IllegalArgumentException(what + " must be at least 1 ms: " + duration);
        }
    }
}
