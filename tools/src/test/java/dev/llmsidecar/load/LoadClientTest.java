package dev.llmsidecar.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.SimulatedEngine;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The load client in both loops against the simulated engine on a known schedule: 50 ms to the first token, then one
 * token every 10 ms, 5 tokens, so a request takes 90 ms; no slot limit.
 */
class LoadClientTest {

    static final long REQUEST_MS = 50 + 4 * 10;

    Vertx vertx;
    SimulatedEngine engine;
    LoadClient client;

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx();
        engine = new SimulatedEngine(vertx, EngineBehaviour.defaults().withSlots(10_000).withRoleFirstChunk(false)
                .withTiming(Duration.ofMillis(50), Duration.ofMillis(10)).withOutputTokens(5));
        int port = get(engine.start("127.0.0.1", 0));
        Context context = vertx.getOrCreateContext();
        client = new LoadClient(vertx, context, "127.0.0.1", port, 64);
    }

    @AfterEach
    void stop() throws Exception {
        get(onContext(() -> client.close()));
        get(engine.close());
        get(vertx.close());
    }

    /** The times of each SSE event (by the engine's stamp and by the read) of one stream, and its outcome. */
    static final class Timed extends AbstractResponseReader<Timed> {
        String failure;
        final List<Long> reads = new ArrayList<>();
        final SseFramer framer = new SseFramer((b, from, to, nanos) -> {
            if (SseFramer.data(b, from, to).startsWith("{")) {
                reads.add(nanos);
            }
        });

        @Override
        public void data(Buffer chunk, long nanos) {
            framer.feed(chunk, nanos);
        }

        @Override
        public Timed end(String why, long nanos) {
            failure = why;
            return this;
        }
    }

    Future<Timed> send() {
        RequestOptions o = new RequestOptions().setMethod(HttpMethod.POST).setURI("/v1/chat/completions")
                .putHeader("content-type", "application/json");
        return client.send(o, Buffer.buffer("{\"model\":\"m\",\"stream\":true,\"messages\":[]}"), new Timed());
    }

    @Test
    void closedLoopKeepsItsStreamsBusyAndNoMore() throws Exception {
        int streams = 4;
        long end = System.nanoTime() + 2_000_000_000L;
        List<Timed> done = new ArrayList<>();
        int[] maxInFlight = new int[1];
        ClosedLoop loop = get(onContext(() -> Future.succeededFuture(ClosedLoop.start(vertx, streams, 0, 0, () -> {
            if (System.nanoTime() - end >= 0) {
                return null;
            }
            Future<Timed> f = send();
            maxInFlight[0] = Math.max(maxInFlight[0], client.inFlight());
            return f.map(t -> {
                done.add(t);
                return t.failure == null && t.statusCode() == 200;
            });
        }))));
        get(loop.finished());
        List<Timed> all = get(onContext(() -> Future.succeededFuture(List.copyOf(done))));
        assertThat(maxInFlight[0]).isEqualTo(streams);
        assertThat(all).allSatisfy(t -> {
            assertThat(t.failure).isNull();
            assertThat(t.reads).hasSize(5);
        });
        // each stream runs back to back: 2 s / 90 ms = 22 requests at most, a few fewer for the client's own time
        assertThat(all.size()).isBetween(streams * 14, streams * 23);
        // every token after the first 10 ms after the one before, as the engine scheduled them
        double[] gaps = all.stream().flatMapToDouble(t -> {
            double[] g = new double[t.reads.size() - 1];
            for (int i = 1; i < t.reads.size(); i++) {
                g[i - 1] = (t.reads.get(i) - t.reads.get(i - 1)) / 1e6;
            }
            return Arrays.stream(g);
        }).sorted().toArray();
        assertThat(gaps[gaps.length / 2]).isBetween(8.0, 14.0);
        double[] firsts = all.stream().mapToDouble(t -> (t.reads.get(0) - t.sentNanos()) / 1e6).sorted().toArray();
        assertThat(firsts[firsts.length / 2]).isBetween(48.0, 70.0);
    }

    @Test
    void openLoopSendsAtThePoissonTimesWhateverIsOpen() throws Exception {
        double rate = 40;
        long seed = 11;
        long duration = 1_500_000_000L;
        long[] schedule = PoissonArrivals.schedule(rate, seed, duration, 10_000);
        List<Future<Timed>> sent = new ArrayList<>();
        PoissonArrivals arrivals = new PoissonArrivals(rate, seed);
        long t0 = System.nanoTime() + 100_000_000L;
        OpenLoop loop = OpenLoop.start(client.context(), arrivals::nextNanos, t0, duration,
                () -> sent.add(send()), "test-arrivals");
        loop.join(10_000);
        // the last arrivals were handed to the context before the thread ended
        List<Future<Timed>> futures = get(onContext(() -> Future.succeededFuture(List.copyOf(sent))));
        List<Timed> results = new ArrayList<>();
        for (Future<Timed> f : futures) {
            results.add(get(f));
        }
        assertThat(results).hasSize(schedule.length);
        assertThat(results).allSatisfy(t -> assertThat(t.failure).isNull());
        // requests overlap (90 ms each at 40/s): an open loop does not wait for them
        double[] lateMs = new double[schedule.length];
        for (int i = 0; i < schedule.length; i++) {
            lateMs[i] = (results.get(i).sentNanos() - (t0 + schedule[i])) / 1e6;
        }
        Arrays.sort(lateMs);
        assertThat(lateMs[0]).isGreaterThan(-1.0);
        assertThat(lateMs[lateMs.length / 2]).isLessThan(5.0);
        assertThat(engine.served().stream().mapToLong(s -> s.lastTokenSentNanos()).count())
                .isEqualTo(schedule.length);
    }

    @Test
    void cancelAllEndsEveryOpenRequest() throws Exception {
        List<Future<Timed>> open = get(onContext(() -> {
            List<Future<Timed>> fs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                fs.add(send());
            }
            return Future.succeededFuture(fs);
        }));
        Thread.sleep(20);
        get(onContext(() -> {
            assertThat(client.inFlight()).isEqualTo(3);
            client.cancelAll();
            return Future.succeededFuture();
        }));
        for (Future<Timed> f : open) {
            assertThat(get(f).failure).isEqualTo("cancelled");
        }
        assertThat(get(onContext(() -> Future.succeededFuture(client.inFlight())))).isZero();
    }

    <T> Future<T> onContext(Supplier<Future<T>> action) {
        Promise<T> p = Promise.promise();
        client.context().runOnContext(v -> action.get().onComplete(p));
        return p.future();
    }

    static <T> T get(Future<T> f) throws Exception {
        CompletableFuture<T> c = f.toCompletionStage().toCompletableFuture();
        return c.get(30, TimeUnit.SECONDS);
    }
}
