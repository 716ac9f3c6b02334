package dev.llmsidecar.scrape;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.scrape.ScrapeLoop.Outcome;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.support.Waits;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The scrape skeleton against a real HTTP server on loopback, with a reader that only records what it is given. */
class ScrapeLoopTest {

    private static final Duration LONG = Duration.ofSeconds(10); // never reached: what ends an attempt is the test's

    private final Vertx vertx = Vertx.vertx();
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger closedConnections = new AtomicInteger();
    private final List<String> bodies = new CopyOnWriteArrayList<>();
    private final AtomicInteger downs = new AtomicInteger();
    private volatile Handler<HttpServerRequest> endpoint = req -> req.response().end("ok");
    private HttpServer server;
    private ScrapeLoop loop;

    @BeforeEach
    void startServer() {
        server = await(vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0))
                .connectionHandler(conn -> {
                    connections.incrementAndGet();
                    conn.closeHandler(v -> closedConnections.incrementAndGet());
                })
                .requestHandler(req -> {
                    requests.incrementAndGet();
                    endpoint.handle(req);
                })
                .listen());
    }

    @AfterEach
    void stopEverything() {
        Future<Void> stopped = loop == null ? Future.succeededFuture() : loop.stop();
        await(stopped.eventually(() -> server.close()).eventually(() -> vertx.close()));
    }

    @Test
    void readsEach2xxBodyAndCountsWhatTheReaderSays() {
        endpoint = req -> req.response().end(requests.get() == 1 ? "ok" : "garbage");
        start(Duration.ofMillis(50), LONG, 1024);
        eventually("three scrapes", () -> count(Outcome.UNPARSEABLE) >= 2);
        assertThat(bodies).startsWith("ok", "garbage", "garbage");
        assertThat(connections).as("one kept-alive connection for every scrape").hasValue(1);
        assertThat(count(Outcome.OK)).isEqualTo(1);
        assertThat(count(Outcome.ERROR)).isZero();
        assertThat(downs).hasValue(0);
    }

    @Test
    void everyResultIsCountedFromTheStart() {
        loop(Duration.ofMillis(50), LONG, 1024); // not started
        for (Outcome outcome : Outcome.values()) {
            assertThat(count(outcome)).as(outcome.name()).isZero();
        }
    }

    @Test
    void aLateAttemptIsAbandonedCountedAsAnErrorAndItsConnectionClosed() throws InterruptedException {
        endpoint = req -> vertx.setTimer(600, id -> req.response().end("too late"));
        start(LONG, Duration.ofMillis(150), 1024);
        eventually("an error", () -> count(Outcome.ERROR) == 1);
        assertThat(downs).hasValue(1);
        eventually("the connection closed by the scraper", () -> closedConnections.get() == 1);
        Thread.sleep(700); // past the late answer
        assertThat(bodies).isEmpty();
        assertThat(count(Outcome.OK)).isZero();
        assertThat(count(Outcome.ERROR)).isEqualTo(1);
    }

    @Test
    void anOversizedBodyIsRefusedWithoutWaitingForItsEnd() {
        // 2 KiB against a 1 KiB limit, and never an end: only the size check can end this before the deadline
        endpoint = req -> req.response().setChunked(true).write("x".repeat(2048));
        start(LONG, LONG, 1024);
        eventually("an error", () -> count(Outcome.ERROR) == 1);
        eventually("the connection closed by the scraper", () -> closedConnections.get() == 1);
        assertThat(bodies).isEmpty();
        assertThat(downs).hasValue(1);
    }

    @Test
    void aNon2xxAnswerIsAnErrorAndIsNotRead() {
        endpoint = req -> req.response().setStatusCode(503).end("busy");
        start(LONG, LONG, 1024);
        eventually("an error", () -> count(Outcome.ERROR) == 1);
        assertThat(bodies).isEmpty();
        assertThat(downs).hasValue(1);
    }

    @Test
    void aTickIsSkippedWhileAnAttemptIsInFlight() throws InterruptedException {
        AtomicInteger held = new AtomicInteger();
        endpoint = req -> {
            if (held.incrementAndGet() == 1) {
                vertx.setTimer(1000, id -> req.response().end("slow"));
            } else {
                req.response().end("ok");
            }
        };
        start(Duration.ofMillis(20), LONG, 1024);
        eventually("the first request", () -> requests.get() == 1);
        Thread.sleep(300); // 15 intervals
        assertThat(requests).as("ticks while the first attempt is out").hasValue(1);
        eventually("the slow answer read, then the next scrapes", () -> bodies.size() >= 2);
        assertThat(bodies.get(0)).isEqualTo("slow");
        assertThat(count(Outcome.ERROR)).isZero();
    }

    @Test
    void stopIsIdempotentAndReportsDownOnce() {
        start(Duration.ofMillis(50), LONG, 1024);
        eventually("a scrape", () -> count(Outcome.OK) >= 1);
        await(loop.stop());
        assertThat(downs).hasValue(1);
        await(loop.stop());
        assertThat(downs).hasValue(1);
        assertThat(count(Outcome.ERROR)).as("stopping is no failed scrape").isZero();
    }

    @Test
    void aResultArrivingAfterStopIsIgnored() throws InterruptedException {
        endpoint = req -> vertx.setTimer(300, id -> req.response().end("after stop"));
        start(LONG, LONG, 1024);
        eventually("the request out", () -> requests.get() == 1);
        await(loop.stop());
        assertThat(downs).hasValue(1);
        Thread.sleep(500); // past the answer
        assertThat(bodies).isEmpty();
        for (Outcome outcome : Outcome.values()) {
            assertThat(count(outcome)).as(outcome.name()).isZero();
        }
        assertThat(downs).hasValue(1);
    }

    @Test
    void rejectsAnUnusableTarget() {
        assertThatThrownBy(() -> target(URI.create("/metrics"), LONG, LONG, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("test endpoint URL");
        assertThatThrownBy(() -> target(URI.create("ftp://h/metrics"), LONG, LONG, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> target(url(), Duration.ZERO, LONG, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> target(url(), LONG, Duration.ofNanos(10), 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> target(url(), LONG, LONG, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    private void start(Duration interval, Duration timeout, int maxBodyBytes) {
        await(loop(interval, timeout, maxBodyBytes).start());
    }

    private ScrapeLoop loop(Duration interval, Duration timeout, int maxBodyBytes) {
        loop = new ScrapeLoop(vertx, PrometheusRecorder.only(registry.getPrometheusRegistry()), target(url(), interval, timeout, maxBodyBytes),
                body -> {
                    bodies.add(body);
                    return body.equals("garbage") ? Outcome.UNPARSEABLE : Outcome.OK;
                }, downs::incrementAndGet);
        return loop;
    }

    private static ScrapeLoop.Target target(URI url, Duration interval, Duration timeout, int maxBodyBytes) {
        return new ScrapeLoop.Target("test endpoint", url, interval, timeout, maxBodyBytes, "text/plain",
                Contract.GPU_SCRAPES);
    }

    private URI url() {
        return URI.create("http://127.0.0.1:" + server.actualPort() + "/metrics");
    }

    private double count(Outcome outcome) {
        String result = outcome.name().toLowerCase(Locale.ROOT);
        return Scrape.has(registry.getPrometheusRegistry(), "llm_sidecar_gpu_scrapes", "result", result)
                ? Scrape.value(registry.getPrometheusRegistry(), "llm_sidecar_gpu_scrapes", "result", result) : Double.NaN;
    }

    private void eventually(String what, BooleanSupplier condition) {
        Waits.eventually(registry, "llm_sidecar_gpu_scrapes", Duration.ofSeconds(5), what, condition);
    }

    private static <T> T await(Future<T> future) {
        return Waits.await(future, Duration.ofSeconds(10));
    }
}
