package dev.llmsidecar.otel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.OtlpReceiver;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The traffic never depends on telemetry: with the OTLP endpoint refusing connections, or accepting and never
 * answering, every stream is delivered whole, client-observed latency stays that of a sidecar without OTLP, the
 * span queue stays within its bound, and every lost span is counted.
 */
class OtlpOutageTest {

    static final EngineBehaviour ENGINE = EngineBehaviour.defaults()
            .withTiming(Duration.ofMillis(20), Duration.ofMillis(2)).withOutputTokens(4);
    static final String BODY = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    static final int REQUESTS = 300;
    static final int CONCURRENCY = 30;
    static final int QUEUE = 64;
    static final int BATCH = 16;

    static Map<String, String> otel(String endpoint) {
        Map<String, String> m = new HashMap<>();
        m.put("otel.exporter.otlp.endpoint", endpoint);
        m.put("otel.exporter.otlp.protocol", "http/protobuf");
        m.put("otel.exporter.otlp.timeout", "1000");
        m.put("otel.metric.export.interval", "100");
        m.put("otel.bsp.max.queue.size", Integer.toString(QUEUE));
        m.put("otel.bsp.max.export.batch.size", Integer.toString(BATCH));
        m.put("otel.bsp.schedule.delay", "20");
        m.put("otel.bsp.export.timeout", "1000");
        return m;
    }

    /** Client-observed end-to-end times (ms) of the sidecar with OTLP trouble and of one without OTLP. */
    record Latencies(double[] withOtlp, double[] withoutOtlp) {
    }

    /**
     * Runs the same waves through both sidecars, alternating, so both see the same load on the box; checks every
     * stream arrived whole.
     */
    static Latencies load(ProxyFixture otlp, ProxyFixture plain, double[] maxQueueSeen) {
        double[] with = new double[REQUESTS];
        double[] without = new double[REQUESTS];
        int done = 0;
        while (done < REQUESTS) {
            int n = Math.min(CONCURRENCY, REQUESTS - done);
            wave(plain, n, without, done);
            wave(otlp, n, with, done);
            done += n;
            if (maxQueueSeen != null) {
                maxQueueSeen[0] = Math.max(maxQueueSeen[0], otlp.scrape().sum("llm_sidecar_otlp_span_queue_size"));
            }
        }
        Arrays.sort(with);
        Arrays.sort(without);
        return new Latencies(with, without);
    }

    private static void wave(ProxyFixture f, int n, double[] e2e, int offset) {
        List<Future<ProxyFixture.Received>> wave = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            wave.add(f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", Buffer.buffer(BODY), Map.of()));
        }
        for (int i = 0; i < n; i++) {
            ProxyFixture.Received r = ProxyFixture.await(wave.get(i));
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.failure()).isNull();
            assertThat(r.text()).endsWith("data: [DONE]\n\n");
            long last = r.chunkNanos().get(r.chunkNanos().size() - 1);
            e2e[offset + i] = (last - r.sentNanos()) / 1e6;
        }
    }

    /**
     * A client has its last byte a moment before the sidecar ends the request's span (the span ends after the
     * response did): flush and scrape until every span is exported or dropped for a full queue, for at most 5 s.
     */
    static Scrape settled(ProxyFixture f, int spans) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (true) {
            f.telemetry.otel().flush();
            Scrape s = f.scrape();
            double accounted = s.sum("llm_sidecar_otlp_spans_exported_total")
                    + s.sum("llm_sidecar_otlp_spans_dropped_total", "reason", "queue_full");
            if (accounted >= spans || System.nanoTime() > deadline) {
                return s;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return s;
            }
        }
    }

    static double p(double[] sorted, double q) {
        return sorted[(int) Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    }

    static void assertUnaffected(Latencies l) {
        // interleaved waves on the same box: the medians agree within scheduling noise
        double with = p(l.withOtlp(), 0.5);
        double without = p(l.withoutOtlp(), 0.5);
        assertThat(with).as("p50 e2e with OTLP in trouble vs without OTLP: %s vs %s ms", with, without)
                .isLessThan(without * 1.25 + 10);
        assertThat(with).isGreaterThanOrEqualTo(20 + 3 * 2);
    }

    @Test
    void collectorRefusingConnections() {
        int closedPort;
        Vertx vertx = Vertx.vertx();
        try (OtlpReceiver gone = new OtlpReceiver(vertx)) {
            closedPort = gone.port;
        } finally {
            ProxyFixture.await(vertx.close());
        }
        try (ProxyFixture plain = new ProxyFixture(ENGINE, Map.of());
                ProxyFixture f = new ProxyFixture(ENGINE, Map.of(), null, otel("http://127.0.0.1:" + closedPort))) {
            load(f, plain, null);
            double[] maxQueue = {0};
            assertUnaffected(load(f, plain, maxQueue));
            f.telemetry.otel().flush();
            Scrape s = f.scrape();
            double dropped = s.sum("llm_sidecar_otlp_spans_dropped_total");
            double queued = s.sum("llm_sidecar_otlp_span_queue_size");
            // every span is accounted for: none exported, each dropped or still queued
            assertThat(s.sum("llm_sidecar_otlp_spans_exported_total")).isZero();
            assertThat(dropped + queued).isEqualTo(2.0 * REQUESTS);
            assertThat(s.sum("llm_sidecar_otlp_spans_dropped_total", "reason", "export_failed")).isPositive();
            assertThat(maxQueue[0]).as("queued plus the batch in hand").isLessThanOrEqualTo(QUEUE + BATCH);
            assertThat(s.sum("llm_sidecar_otlp_metric_points_dropped_total")).isPositive();
            assertThat(s.sum("llm_sidecar_otlp_metric_points_exported_total")).isZero();
        }
    }

    @Test
    void collectorAcceptingThenStalling() {
        Vertx vertx = Vertx.vertx();
        try (OtlpReceiver receiver = new OtlpReceiver(vertx);
                ProxyFixture plain = new ProxyFixture(ENGINE, Map.of());
                ProxyFixture f = new ProxyFixture(ENGINE, Map.of(), null, otel(receiver.endpoint()))) {
            load(f, plain, null);
            Scrape healthy = settled(f, REQUESTS);
            double exportedWhileHealthy = healthy.sum("llm_sidecar_otlp_spans_exported_total");
            // bursts of 30 into a queue of 64 may overflow on a busy box; what is not exported is counted
            assertThat(exportedWhileHealthy + healthy.sum("llm_sidecar_otlp_spans_dropped_total", "reason", "queue_full"))
                    .isEqualTo(REQUESTS);
            assertThat(exportedWhileHealthy).isPositive();
            double queueFullWhileHealthy = healthy.sum("llm_sidecar_otlp_spans_dropped_total", "reason", "queue_full");
            receiver.stall();
            double[] maxQueue = {0};
            assertUnaffected(load(f, plain, maxQueue));
            assertThat(receiver.stalledRequests()).isPositive();
            Scrape s = f.scrape();
            // the worker waits out each stalled export while new spans overflow the bounded queue
            assertThat(s.sum("llm_sidecar_otlp_spans_dropped_total", "reason", "queue_full")).isGreaterThan(queueFullWhileHealthy);
            assertThat(maxQueue[0]).as("queued plus the batch in hand").isLessThanOrEqualTo(QUEUE + BATCH);
            assertThat(s.sum("llm_sidecar_otlp_spans_exported_total")).isEqualTo(exportedWhileHealthy);
        } finally {
            ProxyFixture.await(vertx.close());
        }
    }
}
