package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.ServedRequest;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.OtlpReceiver;
import dev.llmsidecar.testkit.ReferenceReader;
import io.opentelemetry.proto.trace.v1.Span;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The engine follows a known schedule (role chunk at once, first token at 200 ms, then a token every 20 ms); the
 * sidecar's TTFT, TPOT, E2E and ITL must match what the engine really did, for 1 and for 100 concurrent streams.
 *
 * <p>Every request is paired across the three clocks that saw it (client, sidecar through its span, engine through
 * what it served), so the test compares each request with itself. Two kinds of assertion:
 * <ul>
 * <li>Causal, on every request: the sidecar's clock starts after the client sent and before the engine received,
 *     and stops after the engine wrote and before the client read, so its TTFT and E2E lie between the engine's and
 *     the client's. No scheduler delay can break that; only a wrong timestamp can.</li>
 * <li>Statistical, on the distribution: the sidecar's excess over the engine (the loopback hop both ways and the
 *     sidecar's own work) has a small median and a bounded 90th percentile beyond the delay of a reference: a separate
 *     process ({@link ReferenceReader}) reading the same engine directly at the same time, with the same raw reader
 *     as a client, whose delay is each token's arrival less the engine's write of it, less the least of them. One
 *     request can be delayed by the scheduler on a busy machine (client, sidecar and engine share one JVM and two
 *     cores), so no single sample is bounded by time; a systematic error (a wrong clock, a late stamp, a buffered
 *     chunk) moves the median. Quiet, the reference's delay is about 0.1-0.2 ms at the median, so the bounds are as
 *     strict as without it; with a core kept busy, they bound what the sidecar adds to what the scheduler does to
 *     any reader.</li>
 * </ul>
 */
class TimingAccuracyTest {

    static final int TOKENS = 10;
    static final EngineBehaviour SCHEDULE = EngineBehaviour.defaults()
            .withTiming(Duration.ofMillis(200), Duration.ofMillis(20)).withOutputTokens(TOKENS);
    static final String MODEL = "sim-llama-8b";

    static String body(String model, int marker) {
        return "{\"model\":\"" + model + "\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi "
                + marker + "\"}]}";
    }

    static String trace(int marker) {
        return HexFormat.of().formatHex(java.nio.ByteBuffer.allocate(16).putLong(0x7111e5L).putLong(marker).array());
    }

    /** One request as the client, the sidecar and the engine saw it (seconds). */
    record Seen(double clientTtft, double clientE2e, double sidecarTtft, double sidecarE2e, double sidecarTpot,
            double engineTtft, double engineE2e, double engineTpot) {
    }

    /**
     * @param concurrent streams per batch
     * @param batches batches run one after the other
     * @param medianExcessMs bound on the median of the sidecar's excess over the engine (TTFT and E2E)
     * @param p90ExcessMs bound on its 90th percentile
     */
    void runAndCheck(int concurrent, int batches, double medianExcessMs, double p90ExcessMs) throws Exception {
        int streams = concurrent * batches;
        Vertx vertx = Vertx.vertx();
        try (OtlpReceiver receiver = new OtlpReceiver(vertx);
                ProxyFixture f = new ProxyFixture(SCHEDULE, Map.of(), null, Map.of(
                        "otel.exporter.otlp.endpoint", receiver.endpoint(),
                        "otel.exporter.otlp.protocol", "http/protobuf",
                        "otel.metrics.exporter", "none",
                        "otel.bsp.schedule.delay", "100"))) {
            // warm-up under another model label: connections, JIT and class loading are not what we measure
            for (int round = 0; round < 3; round++) {
                List<Future<Received>> warm = new ArrayList<>();
                for (int i = 0; i < concurrent; i++) {
                    warm.add(f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions",
                            Buffer.buffer(body("warmup", -1)), Map.of()));
                }
                warm.forEach(ProxyFixture::await);
            }
            // the reference: a separate process reading the engine directly, at the same time, with the test
            // client's reader code; what the scheduler does to it, it does to the sidecar as well
            Map<Integer, Received> sent = new HashMap<>();
            List<ReferenceReader.Reading> readings;
            try (ReferenceReader.Started reader = ReferenceReader.start(f.enginePort, "/v1/chat/completions",
                    "{\"model\":\"reference\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":"
                            + "\"ref %d\"}]}", 3, 1000, Duration.ofSeconds(120), concurrent == 1 ? 1 : 2,
                    Duration.ZERO)) {
                f.engine.clearServed();
                // started 2 ms apart (all overlap: each lasts about 380 ms), so that a box running client, sidecar
                // and engine in one JVM is not measuring its own accept burst
                int marker = 0;
                for (int b = 0; b < batches; b++) {
                    Map<Integer, Future<Received>> batch = new HashMap<>();
                    for (int i = 0; i < concurrent; i++) {
                        batch.put(marker, f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions",
                                Buffer.buffer(body(MODEL, marker)), Map.of("traceparent", "00-" + trace(marker)
                                        + "-00f067aa0ba902b7-01")));
                        marker++;
                        sleepMillis(2);
                    }
                    batch.forEach((m, r) -> sent.put(m, ProxyFixture.await(r)));
                }
                readings = reader.stop(3);
            }
            List<ServedRequest> served = f.engine.served();
            List<Seen> seen = pair(sent, served, awaitSpans(receiver, streams));
            double[] reference = referenceDelays(readings, served);
            report(concurrent, seen, reference);

            for (Seen s : seen) {
                // causal: the sidecar's interval lies inside the client's and contains the engine's
                assertThat(s.sidecarTtft()).isBetween(s.engineTtft(), s.clientTtft());
                assertThat(s.sidecarE2e()).isBetween(s.engineE2e(), s.clientE2e());
            }
            double[] ttftExcess = seen.stream().mapToDouble(s -> (s.sidecarTtft() - s.engineTtft()) * 1e3).toArray();
            double[] e2eExcess = seen.stream().mapToDouble(s -> (s.sidecarE2e() - s.engineE2e()) * 1e3).toArray();
            double[] tpotError = seen.stream().mapToDouble(s -> Math.abs(s.sidecarTpot() - s.engineTpot()) * 1e3)
                    .toArray();
            // the bounds hold for what the sidecar adds beyond the reference's delay at the same quantile
            assertThat(quantile(ttftExcess, 0.5) - quantile(reference, 0.5))
                    .as("median TTFT excess beyond the reference's delay, ms").isLessThan(medianExcessMs);
            assertThat(quantile(ttftExcess, 0.9) - quantile(reference, 0.9))
                    .as("p90 TTFT excess beyond the reference's delay, ms").isLessThan(p90ExcessMs);
            assertThat(quantile(e2eExcess, 0.5) - quantile(reference, 0.5))
                    .as("median E2E excess beyond the reference's delay, ms").isLessThan(medianExcessMs);
            assertThat(quantile(e2eExcess, 0.9) - quantile(reference, 0.9))
                    .as("p90 E2E excess beyond the reference's delay, ms").isLessThan(p90ExcessMs);
            // TPOT is a difference of two stamps over 9 intervals: the hop cancels, what is left is jitter / 9
            assertThat(quantile(tpotError, 0.5)).as("median |TPOT error|, ms").isLessThan(medianExcessMs / 4);
            assertThat(quantile(tpotError, 0.9)).as("p90 |TPOT error|, ms").isLessThan(p90ExcessMs / 4);

            Scrape s = f.settledScrape();
            String[] l = {"model", MODEL, "operation", "chat", "streaming", "true"};
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count", l)).isEqualTo(streams);
            // causal as well: the engine's 200 ms timer never fires early, so no TTFT is at or below 0.2 s
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_bucket", join(l, "le", "0.2"))).isZero();
            // the role-only chunk comes at once: time to the first response chunk (prelude included) is the
            // engine's first write, not its first token; time to first chunk (OTel: generated content) is TTFT
            double ttftSum = s.sum("gen_ai_server_time_to_first_token_seconds_sum", l);
            // the same values, summed in seconds by each histogram in the order the event loops added them: equal
            // up to floating-point rounding
            assertThat(s.sum("gen_ai_client_operation_time_to_first_chunk_seconds_sum", l)).isCloseTo(ttftSum,
                    org.assertj.core.api.Assertions.within(1e-9));
            assertThat(s.sum("llm_sidecar_time_to_first_response_chunk_seconds_sum", l))
                    .isLessThan(ttftSum - streams * 0.1);

            String[] e = {"model", MODEL, "operation", "chat", "outcome", "ok"};
            double itlCount = s.sum("llm_sidecar_inter_token_latency_seconds_count", e);
            assertThat(itlCount).isEqualTo((TOKENS - 1.0) * streams);
            // the ITL distribution matches the gaps the engine really produced. Boundaries at half and double the
            // schedule: a wrong definition (role chunk, per-chunk weighting, missed chunks) moves whole shares of
            // samples across them (1 in 9 at least, 11.1 %), while jitter of client, sidecar and engine sharing 2 cores
            // moves only a few (up to 3.3 % seen with a load average of 10 on 2 cores, 6.1 % once with a load average
            // of 7 to 11 from parallel builds: two chunks read at once are one gap of 0): 8 % tells the two apart
            long[] engineGaps = served.stream().filter(x -> x.body().contains("\"hi ")).flatMapToLong(x -> {
                long[] t = x.tokenChunkSentNanos();
                return IntStream.range(1, t.length).mapToLong(i -> t[i] - t[i - 1]);
            }).toArray();
            assertThat(engineGaps).hasSize((int) itlCount);
            for (String le : new String[] {"0.01", "0.04"}) {
                long engineCount = Arrays.stream(engineGaps).filter(g -> g <= Double.parseDouble(le) * 1e9).count();
                double sidecarCount = s.sum("llm_sidecar_inter_token_latency_seconds_bucket", join(e, "le", le));
                assertThat(Math.abs(sidecarCount - engineCount) / itlCount).as("le=%s", le).isLessThanOrEqualTo(0.08);
            }
            assertThat(s.sum("llm_sidecar_requests_in_flight")).isZero();
            assertThat(s.sum("llm_sidecar_requests_total")).isEqualTo(3.0 * concurrent + streams);
            assertThat(s.sum("llm_sidecar_requests_waiting_first_token")).isZero();
        } finally {
            ProxyFixture.await(vertx.close());
        }
    }

    /** Each request's three views, matched by the marker in its body (engine) and its trace id (sidecar). */
    static List<Seen> pair(Map<Integer, Received> sent, List<ServedRequest> served, Map<String, Span> spans) {
        Map<Integer, ServedRequest> byMarker = new HashMap<>();
        for (ServedRequest r : served) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"hi (-?\\d+)\"").matcher(r.body());
            if (m.find()) { // the reference's requests say "ref"
                byMarker.put(Integer.parseInt(m.group(1)), r);
            }
        }
        List<Seen> seen = new ArrayList<>();
        sent.forEach((marker, client) -> {
            assertThat(client.failure()).isNull();
            assertThat(client.status()).isEqualTo(200);
            ServedRequest engine = byMarker.get(marker);
            Span span = spans.get(trace(marker));
            assertThat(engine).as("engine saw %s", marker).isNotNull();
            assertThat(span).as("span of %s", marker).isNotNull();
            Map<String, Object> a = OtlpReceiver.attributes(span.getAttributesList());
            long clientFirst = client.firstReadContaining("\"content\":\"The\"");
            // the end of the response as the client saw it, the same event the sidecar's span ends on (the stream's
            // end, which may come in a read after the last data)
            long clientLast = client.endedNanos();
            seen.add(new Seen(
                    (clientFirst - client.sentNanos()) / 1e9, (clientLast - client.sentNanos()) / 1e9,
                    (Double) a.get("llm_sidecar.time_to_first_token"),
                    (span.getEndTimeUnixNano() - span.getStartTimeUnixNano()) / 1e9,
                    (Double) a.get("llm_sidecar.time_per_output_token"),
                    (engine.firstTokenSentNanos() - engine.arrivalNanos()) / 1e9,
                    (engine.lastTokenSentNanos() - engine.arrivalNanos()) / 1e9,
                    (engine.lastTokenSentNanos() - engine.firstTokenSentNanos()) / 1e9 / (TOKENS - 1)));
        });
        return seen;
    }

    static Map<String, Span> awaitSpans(OtlpReceiver receiver, int expected) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            Map<String, Span> byTrace = new HashMap<>();
            for (Span s : receiver.spans()) {
                String model = (String) OtlpReceiver.attributes(s.getAttributesList()).get("gen_ai.request.model");
                if (MODEL.equals(model)) {
                    byTrace.put(HexFormat.of().formatHex(s.getTraceId().toByteArray()), s);
                }
            }
            if (byTrace.size() >= expected || System.nanoTime() > deadline) {
                assertThat(byTrace).as("spans exported").hasSize(expected);
                return byTrace;
            }
            sleepMillis(50);
        }
    }

    /**
     * The reference's delay of each read of a token beyond its best one (ms): a token's arrival at the reference less
     * when the engine wrote it (one monotonic clock for every process of the machine), less the least of them. On a
     * quiet machine it is about 0; what it is beyond that, the scheduler made it.
     */
    static double[] referenceDelays(List<ReferenceReader.Reading> readings, List<ServedRequest> served) {
        Map<Integer, ServedRequest> byMarker = new HashMap<>();
        for (ServedRequest r : served) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"ref (\\d+)\"").matcher(r.body());
            if (m.find()) {
                byMarker.put(Integer.parseInt(m.group(1)), r);
            }
        }
        List<Double> hops = new ArrayList<>();
        for (ReferenceReader.Reading r : readings) {
            ServedRequest engine = byMarker.get(r.n());
            if (engine == null) {
                continue; // begun before the engine's record was cleared
            }
            long[] written = engine.tokenChunkSentNanos();
            assertThat(r.contentArrivals()).as("reference request %d's tokens", r.n()).hasSize(written.length);
            for (int i = 0; i < written.length; i++) {
                hops.add((r.contentArrivals()[i] - written[i]) / 1e6);
            }
        }
        assertThat(hops).as("tokens the reference read during the run").hasSizeGreaterThanOrEqualTo(20);
        double least = hops.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        return hops.stream().mapToDouble(h -> h - least).toArray();
    }

    /** Prints the excess distributions, so a failure (or a new machine) shows the figures the bounds came from. */
    static void report(int concurrent, List<Seen> seen, double[] reference) {
        double[] ttft = seen.stream().mapToDouble(s -> (s.sidecarTtft() - s.engineTtft()) * 1e3).toArray();
        double[] e2e = seen.stream().mapToDouble(s -> (s.sidecarE2e() - s.engineE2e()) * 1e3).toArray();
        double[] tpot = seen.stream().mapToDouble(s -> Math.abs(s.sidecarTpot() - s.engineTpot()) * 1e3).toArray();
        System.out.printf("timing, %d concurrent, sidecar minus engine (ms): TTFT p50 %.2f p90 %.2f max %.2f; "
                + "E2E p50 %.2f p90 %.2f max %.2f; |TPOT error| p50 %.3f p90 %.3f%n", concurrent,
                quantile(ttft, 0.5), quantile(ttft, 0.9), quantile(ttft, 1), quantile(e2e, 0.5), quantile(e2e, 0.9),
                quantile(e2e, 1), quantile(tpot, 0.5), quantile(tpot, 0.9));
        System.out.printf("timing, %d concurrent, the reference's delay (ms, %d tokens): p50 %.2f p90 %.2f max %.2f%n",
                concurrent, reference.length, quantile(reference, 0.5), quantile(reference, 0.9),
                quantile(reference, 1));
    }

    /** The nearest-rank quantile (the value at rank ceil(q * n)). */
    static double quantile(double[] values, double q) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String[] join(String[] a, String k, String v) {
        String[] r = Arrays.copyOf(a, a.length + 2);
        r[a.length] = k;
        r[a.length + 1] = v;
        return r;
    }

    // Bounds from measurement (docs/reliability.md): quiet, one stream's excess is about 1-2 ms at the median and
    // 3-4 ms at p90; with one core kept busy and more load besides, up to 2 ms and 7 ms for one stream, 6 ms and
    // 12 ms for 100 at once. The bounds leave that much again. With the raw relay (28 Nov 2026, three runs with a
    // shell loop keeping one core busy): one stream 1.4-1.8 ms TTFT and 2.0-2.6 ms E2E at the median, p90 under
    // 4.5 ms; 100 streams 0.2-0.3 ms and p90 under 2.2 ms; the reference's delay 0.1-0.2 ms at the median.

    @Test
    void oneStreamAtATimeMatchesTheEngineWithinAFewMilliseconds() throws Exception {
        runAndCheck(1, 20, 5, 15);
    }

    @Test
    void hundredConcurrentStreamsMatchTheEngine() throws Exception {
        runAndCheck(100, 1, 12, 25);
    }
}
