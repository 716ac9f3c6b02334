package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.ServedRequest;
import dev.llmsidecar.support.CappedReference;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.Clocks;
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
import org.assertj.core.api.SoftAssertions;
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
 * <li>Statistical, on the median: the hop from the sidecar's stamp to the client's read (of the first token and of
 *     the end), where a byte held after the stamp shows in full, and the hop from the engine's write to the stamp
 *     (sidecar minus engine), where a late stamp shows; each beyond the delay of a reference, capped at
 *     {@link CappedReference#CAP_MS}: a separate process ({@link ReferenceReader}) reading the same engine directly at the
 *     same time, with the same raw reader as a client, whose delay is each token's arrival less the engine's write of
 *     it. One request can be delayed by the scheduler on a busy machine (client, sidecar and engine share one JVM and
 *     two cores), so no single sample is bounded by time; a systematic error (a wrong clock, a late stamp, a held or
 *     buffered chunk) moves the median. RelayHoldTest runs this test with every byte held 2 ms after its stamp, and
 *     expects it to fail.</li>
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

    /**
     * One request as the client, the sidecar and the engine saw it (seconds), and the two hops from the sidecar's
     * stamp to the client's read (ms): of the first token ({@code relayFirstMs}) and of the end ({@code relayEndMs}).
     */
    record Seen(double clientTtft, double clientE2e, double sidecarTtft, double sidecarE2e, double sidecarTpot,
            double engineTtft, double engineE2e, double engineTpot, double relayFirstMs, double relayEndMs) {
    }

    /** What one run measured: every request's views, and the reference's hop of each token it read (ms). */
    record Run(List<Seen> seen, double[] reference) {
    }

    /**
     * Bounds on medians and 90th percentiles over the requests (ms), each beyond the reference's delay at the same
     * quantile, capped at {@link CappedReference#CAP_MS}; {@code NaN}: not checked at that concurrency (why: at the bounds).
     *
     * <p>The hops after the stamp are where a byte held after it shows in full ({@link #HOLD_CHECKS}: each kept one
     * fails with a 2 ms hold, RelayHoldTest): a held byte adds its hold, less a reference of at most 1 ms. Their
     * bounds are 1.5 and 1.9 ms, so a 2 ms hold fails them as long as the sidecar's own hop is at most 0.1-0.5 ms
     * shorter than the reference's, which it never was (measured: the relay hop 0.1-0.9 ms longer at one stream and
     * -0.2-0.4 at 100, the end's 0.9-1.5 longer).
     *
     * @param relayMedian the hop from the sidecar's stamp of the first token to the client's read of it: its relay and
     *     the loopback
     * @param endMedian the same hop for the response's end (the span's end to the client's end of the response)
     * @param excessMedian sidecar minus engine (TTFT and E2E): the engine's write to the stamp, where a late stamp
     *     shows (a hold after the stamp does not). A run beyond it is run again and, the third time, fails as
     *     inconclusive ({@link CappedReference#CAP_MS}); TPOT's error is bounded by a quarter of it and of the next
     * @param excessP90 the same at the 90th percentile
     */
    record Bounds(double relayMedian, double endMedian, double excessMedian, double excessP90) {
    }

    /** The checks a byte held 2 ms after its stamp must fail (where a concurrency keeps them). */
    static final List<String> HOLD_CHECKS = List.of("median relay hop of the first token",
            "median relay hop of the end");

    /**
     * Runs until nothing disturbed a run ({@link CappedReference}), then checks {@code bounds}. Disturbed: the
     * reference's median beyond {@link CappedReference#CAP_MS}, or the engine-to-stamp hop (sidecar minus engine)
     * beyond its median bound: the engine, the client and the sidecar share this JVM, and when it falls behind (a core
     * busy, 100 streams), every hop inside it grows and the reference, another process, does not see it (measured with
     * a core busy: relay hop 9.1 ms at the median with sidecar minus engine 20.8 ms, once in 23 runs of 100 streams).
     * A hold after the stamp cannot hide behind that: it does not move the engine-to-stamp hop.
     */
    void runAndCheck(int concurrent, int batches, Bounds bounds) throws Exception {
        Run run = CappedReference.firstUndisturbed(attempt -> measure(concurrent, batches), r -> {
            double referenceMedian = quantile(r.reference(), 0.5);
            double harness = CappedReference.beyond(Math.max(quantile(r.seen().stream()
                    .mapToDouble(s -> (s.sidecarTtft() - s.engineTtft()) * 1e3).toArray(), 0.5), quantile(r.seen()
                    .stream().mapToDouble(s -> (s.sidecarE2e() - s.engineE2e()) * 1e3).toArray(), 0.5)),
                    referenceMedian);
            return referenceMedian > CappedReference.CAP_MS || harness > bounds.excessMedian()
                    ? String.format("reference %.2f ms, engine to sidecar %.2f ms", referenceMedian, harness) : null;
        }, "the reference beyond the " + CappedReference.CAP_MS + " ms the bounds may subtract, or the engine's hop to"
                + " the sidecar's stamp beyond its bound of " + bounds.excessMedian() + " ms: a busy JVM, or a late"
                + " stamp");
        check(run, bounds);
    }

    /** The bounds on one run that the reference found undisturbed; every failed bound is reported, not the first. */
    static void check(Run run, Bounds b) {
        List<Seen> seen = run.seen();
        double[] reference = run.reference();
        SoftAssertions soft = new SoftAssertions();
        for (Seen s : seen) {
            // causal: the sidecar's interval lies inside the client's and contains the engine's
            soft.assertThat(s.sidecarTtft()).as("causal TTFT").isBetween(s.engineTtft(), s.clientTtft());
            soft.assertThat(s.sidecarE2e()).as("causal E2E").isBetween(s.engineE2e(), s.clientE2e());
        }
        bound(soft, "median relay hop of the first token", 0.5, seen.stream().mapToDouble(Seen::relayFirstMs),
                reference, b.relayMedian());
        bound(soft, "median relay hop of the end", 0.5, seen.stream().mapToDouble(Seen::relayEndMs), reference,
                b.endMedian());
        // sidecar minus engine at the median is judged before (runAndCheck: beyond its bound, the run is not checked
        // but run again, and fails as inconclusive the third time); its 90th percentile here
        bound(soft, "p90 sidecar minus engine, TTFT", 0.9, seen.stream()
                .mapToDouble(s -> (s.sidecarTtft() - s.engineTtft()) * 1e3), reference, b.excessP90());
        bound(soft, "p90 sidecar minus engine, E2E", 0.9, seen.stream()
                .mapToDouble(s -> (s.sidecarE2e() - s.engineE2e()) * 1e3), reference, b.excessP90());
        // TPOT is a difference of two stamps over 9 intervals: the hop cancels, what is left is jitter / 9
        for (double q : new double[] {0.5, 0.9}) {
            soft.assertThat(quantile(seen.stream().mapToDouble(s -> Math.abs(s.sidecarTpot() - s.engineTpot()) * 1e3)
                    .toArray(), q)).as("%s |TPOT error|, ms", q == 0.5 ? "median" : "p90")
                    .isLessThan((q == 0.5 ? b.excessMedian() : b.excessP90()) / 4);
        }
        soft.assertAll();
    }

    /** The quantile {@code q} of {@code values} beyond the reference's (capped) at the same quantile (NaN: none). */
    static void bound(SoftAssertions soft, String what, double q, java.util.stream.DoubleStream values,
            double[] reference, double limit) {
        if (Double.isNaN(limit)) {
            return;
        }
        soft.assertThat(CappedReference.beyond(quantile(values.toArray(), q), quantile(reference, q)))
                .as("%s beyond the reference's delay, ms", what).isLessThan(limit);
    }

    /**
     * One run: warm-up, then {@code batches} of {@code concurrent} streams beside the reference, paired across the
     * three clocks; the exported series checked against the engine's schedule.
     */
    Run measure(int concurrent, int batches) throws Exception {
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
            List<Seen> seen = pair(sent, served, awaitSpans(receiver, streams), Clocks.wallMinusMonotonicNanos());
            double[] reference = referenceDelays(readings, served);
            report(concurrent, seen, reference);

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
            return new Run(seen, reference);
        } finally {
            ProxyFixture.await(vertx.close());
        }
    }

    /** Each request's three views, matched by the marker in its body (engine) and its trace id (sidecar). */
    static List<Seen> pair(Map<Integer, Received> sent, List<ServedRequest> served, Map<String, Span> spans,
            long wallMinusMonotonic) {
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
            double sidecarTtft = (Double) a.get("llm_sidecar.time_to_first_token");
            // the sidecar's stamps in wall time, as its span states them, beside the client's reads
            double sidecarFirstWall = span.getStartTimeUnixNano() + sidecarTtft * 1e9;
            seen.add(new Seen(
                    (clientFirst - client.sentNanos()) / 1e9, (clientLast - client.sentNanos()) / 1e9,
                    sidecarTtft,
                    (span.getEndTimeUnixNano() - span.getStartTimeUnixNano()) / 1e9,
                    (Double) a.get("llm_sidecar.time_per_output_token"),
                    (engine.firstTokenSentNanos() - engine.arrivalNanos()) / 1e9,
                    (engine.lastTokenSentNanos() - engine.arrivalNanos()) / 1e9,
                    (engine.lastTokenSentNanos() - engine.firstTokenSentNanos()) / 1e9 / (TOKENS - 1),
                    (clientFirst + wallMinusMonotonic - sidecarFirstWall) / 1e6,
                    (clientLast + wallMinusMonotonic - span.getEndTimeUnixNano()) / 1e6));
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
     * The reference's hop of each token it read (ms): its arrival at the reference less when the engine wrote it, one
     * monotonic clock for every process of the machine. It is the same kind of hop as the sidecar's relay hop (a
     * write, the loopback, a reader's wake-up and read), made by a reader that does no work of the sidecar's, at the
     * same time, so what it is beyond a quiet machine's the scheduler made it.
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
        return hops.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** Prints every distribution a bound is on, so a failure (or a new machine) shows the figures. */
    static void report(int concurrent, List<Seen> seen, double[] reference) {
        print(concurrent, "relay hop of the first token", seen.stream().mapToDouble(Seen::relayFirstMs).toArray());
        print(concurrent, "relay hop of the end", seen.stream().mapToDouble(Seen::relayEndMs).toArray());
        print(concurrent, "client minus sidecar, TTFT", seen.stream()
                .mapToDouble(s -> (s.clientTtft() - s.sidecarTtft()) * 1e3).toArray());
        print(concurrent, "client minus sidecar, E2E", seen.stream()
                .mapToDouble(s -> (s.clientE2e() - s.sidecarE2e()) * 1e3).toArray());
        print(concurrent, "sidecar minus engine, TTFT", seen.stream()
                .mapToDouble(s -> (s.sidecarTtft() - s.engineTtft()) * 1e3).toArray());
        print(concurrent, "sidecar minus engine, E2E", seen.stream()
                .mapToDouble(s -> (s.sidecarE2e() - s.engineE2e()) * 1e3).toArray());
        print(concurrent, "|TPOT error|", seen.stream()
                .mapToDouble(s -> Math.abs(s.sidecarTpot() - s.engineTpot()) * 1e3).toArray());
        print(concurrent, "the reference's hop (" + reference.length + " tokens)", reference);
    }

    static void print(int concurrent, String what, double[] ms) {
        System.out.printf("timing, %d concurrent, %s (ms): p50 %.3f p90 %.3f max %.3f%n", concurrent, what,
                quantile(ms, 0.5), quantile(ms, 0.9), quantile(ms, 1));
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

    // Bounds from measurement (2026-11-29, this machine's 2 cores; medians beyond the reference, 3 runs quiet and 9
    // with a spinning process pinned to one core). One stream: relay hop 0.1-0.9 ms, end 0.9-1.5, sidecar minus engine
    // 1.4-5.3 (p90 up to 11; its median bound stays the 5 ms it was before this test's rework: 2 of those 9 runs were
    // above it and would have run again; inside the whole suite, warm, 0.5-1.2); with a 2 ms hold the relay hop was
    // 2.3 and the end 2.4. A hundred streams: relay hop
    // -0.2-0.4, sidecar minus engine 0.2-5.2 (p90 up to 16), and once in 23 runs with a core busy 20.8, with every hop
    // in the JVM grown (relay hop 9.1: run again, runAndCheck); with the hold, relay hop 2.0.
    // Not checked, because they cannot tell a 2 ms hold from a busy core here (no hold, busy, against a hold, quiet):
    // client minus sidecar at the TTFT and E2E level (one stream 1.0-2.4 against 3.2; a hundred 0.2-2.3 against
    // 2.4: the request's way in, a wake-up from idle at one stream, swings by more than 2 ms); the end's hop at a
    // hundred streams (0.0-7.0: the test's client and OTLP receiver share the JVM and the one free core with 100
    // ending streams, which the reference, another process, does not see); every 90th percentile of a hop after
    // the stamp (up to 2 ms beyond the reference at one stream, 9 ms at a hundred). The late-stamp excess keeps
    // its p90, as a bound on outliers.
    static final Bounds ONE_STREAM = new Bounds(1.5, 1.9, 5.0, 14.0);
    static final Bounds HUNDRED_STREAMS = new Bounds(1.5, Double.NaN, 8.0, 25.0);

    @Test
    void oneStreamAtATimeMatchesTheEngineWithinAFewMilliseconds() throws Exception {
        runAndCheck(1, 20, ONE_STREAM);
    }

    @Test
    void hundredConcurrentStreamsMatchTheEngine() throws Exception {
        runAndCheck(100, 1, HUNDRED_STREAMS);
    }
}
