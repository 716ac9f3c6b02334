package dev.llmsidecar.realengine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.CappedReference;
import dev.llmsidecar.testkit.Clocks;
import dev.llmsidecar.testkit.OtlpReceiver;
import dev.llmsidecar.testkit.RawHttp;
import dev.llmsidecar.testkit.ReferenceReader;
import io.opentelemetry.proto.trace.v1.Span;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;

/**
 * The sidecar's timings against an independent client, per request, in front of llama-server: 24 streams of 48
 * tokens through the sidecar, one at a time, each paired with its span by trace id, beside a reference reading the
 * engine directly. RealEngineIT checks that the bounds hold; RealEngineHoldIT that they fail when the sidecar holds
 * every byte 2 ms after stamping it.
 *
 * <p>What is compared, per request (ms):
 * <ul>
 * <li>the relay hops: the client's read of the first token less the sidecar's stamp of it, and the client's read of
 *     the response's last byte less the span's end, both in wall time (the span's start is the sidecar's monotonic
 *     stamp turned into wall time; the client's reads are turned the same way, {@link Clocks}). A byte held after
 *     its stamp shows here in full, and nothing of the engine does;</li>
 * <li>client minus sidecar, TTFT and E2E: those hops and the request's way in (a new connection per request);</li>
 * <li>causal, on every request: the sidecar's interval lies inside the client's;</li>
 * <li>TPOT: a difference over 47 intervals, where the hops cancel.</li>
 * </ul>
 * The reference is a separate process reading llama-server directly with the same reader ({@link RawHttp}), its
 * delay per event read off the engine's own timings ({@code timings_per_token}); it explains load, so the bounds hold
 * beyond it, but it may subtract at most {@link CappedReference#CAP_MS}: a run where it is disturbed beyond that (at the
 * median) is run again, twice at most, and then fails as inconclusive.
 */
final class RealEngineTiming {

    static final int REQUESTS = 24;
    static final Pattern FIRST_CONTENT = Pattern.compile("\"content\":\"[^\"]");

    /**
     * Medians (ms) beyond the capped reference. The relay hops' bound is 1.5 ms: a 2 ms hold less at most 1 ms of
     * reference exceeds it whenever the sidecar's own hop is no more than 0.5 ms below the reference's median, which
     * it never was (figures at {@link #BOUNDS}).
     */
    record Bounds(double relayMedian, double endMedian, double tpotMedian, double tpotP90) {
    }

    /** The checks a 2 ms hold after the stamp must fail. */
    static final List<String> HOLD_CHECKS = List.of("median relay hop of the first token",
            "median relay hop of the end");

    // Measured 2026-11-29 (this machine, 2 cores; quiet and with a spinning process pinned to one core): see the
    // class's note in docs/reliability.md. Client minus sidecar (TTFT, E2E) is 1-4 ms at the median, from request to
    // request mostly the new connection's accept and first read, so it cannot tell a 2 ms hold and is reported, not
    // bounded; the p90 of the relay hop bounds outliers only.
    static final Bounds BOUNDS = new Bounds(1.5, 2.0, 0.1, 0.5);

    /** One request as the client read it and the sidecar's span of it. */
    record Seen(RawHttp.Response client, Span span) {
    }

    record Run(List<Seen> seen, List<Double> reference, long wallMinusMonotonic) {
    }

    private RealEngineTiming() {
    }

    /** Measures until the reference is undisturbed ({@link CappedReference}), then checks {@code bounds}. */
    static void runAndCheck(int enginePort, int proxyPort, OtlpReceiver otlp, Bounds bounds) throws Exception {
        Run run = CappedReference.firstUndisturbed(attempt -> measure(enginePort, proxyPort, otlp, attempt), r -> {
            double referenceMedian = quantile(r.reference(), 0.5);
            return referenceMedian > CappedReference.CAP_MS ? String.format("reference %.2f ms", referenceMedian)
                    : null;
        }, "the reference beyond the " + CappedReference.CAP_MS + " ms the bounds may subtract");
        check(run, bounds);
    }

    static Run measure(int enginePort, int proxyPort, OtlpReceiver otlp, int attempt) throws Exception {
        Map<String, RawHttp.Response> seen = new HashMap<>();
        // short reference requests with pauses between them, so that it does not keep the engine's one thread
        // computing (which cost the sidecar's figures 1 ms at the median when it streamed 48 tokens back to back)
        List<ReferenceReader.Reading> readings;
        try (ReferenceReader.Started reference = ReferenceReader.start(enginePort, "/v1/chat/completions",
                RealEngineIT.chat("Reference %d", 16, ",\"timings_per_token\":true", true), 2, 1000,
                Duration.ofSeconds(120), 1, Duration.ofMillis(50))) {
            for (int i = 0; i < REQUESTS; i++) {
                String trace = HexFormat.of().formatHex(java.nio.ByteBuffer.allocate(16).putLong(0x5ca1ab1eL + attempt)
                        .putLong(i + 1).array());
                RawHttp.Response r = RawHttp.post(proxyPort, "/v1/chat/completions",
                        RealEngineIT.chat("Count to " + i, 48, "", true),
                        Map.of("traceparent", "00-" + trace + "-00f067aa0ba902b7-01"));
                assertThat(r.status()).isEqualTo(200);
                seen.put(trace, r);
            }
            readings = reference.stop(8);
        }
        assertThat(readings).as("reference requests read during the run").hasSizeGreaterThanOrEqualTo(5);
        List<Double> reference = readings.stream().flatMapToDouble(r -> java.util.Arrays.stream(r.llamaDelaysMs()))
                .boxed().toList();
        Map<String, Span> spans = awaitSpans(otlp, seen.keySet());
        List<Seen> paired = new ArrayList<>();
        seen.forEach((trace, r) -> paired.add(new Seen(r, spans.get(trace))));
        Run run = new Run(paired, reference, Clocks.wallMinusMonotonicNanos());
        report(run);
        return run;
    }

    static double sidecarTtftMs(Seen s) {
        return (Double) OtlpReceiver.attributes(s.span().getAttributesList()).get("llm_sidecar.time_to_first_token")
                * 1000;
    }

    static double sidecarE2eMs(Seen s) {
        return (s.span().getEndTimeUnixNano() - s.span().getStartTimeUnixNano()) / 1e6;
    }

    static double clientTtftMs(Seen s) {
        return (s.client().firstArrival(FIRST_CONTENT) - s.client().sentNanos()) / 1e6;
    }

    static double clientE2eMs(Seen s) {
        return (s.client().lastByteNanos() - s.client().sentNanos()) / 1e6;
    }

    /** The client's read of the first token less the sidecar's stamp of it, both in wall time (ms). */
    static double relayFirstMs(Seen s, long wallMinusMonotonic) {
        double stamp = s.span().getStartTimeUnixNano() + sidecarTtftMs(s) * 1e6;
        return (s.client().firstArrival(FIRST_CONTENT) + wallMinusMonotonic - stamp) / 1e6;
    }

    /** The client's read of the response's last byte less the span's end, both in wall time (ms). */
    static double relayEndMs(Seen s, long wallMinusMonotonic) {
        return (s.client().lastByteNanos() + wallMinusMonotonic - s.span().getEndTimeUnixNano()) / 1e6;
    }

    static double tpotDifferenceMs(Seen s) {
        Map<String, Object> a = OtlpReceiver.attributes(s.span().getAttributesList());
        long tokens = (Long) a.get("gen_ai.usage.output_tokens");
        double clientTpot = (clientE2eAtLastTokenMs(s) - clientTtftMs(s)) / (tokens - 1);
        return Math.abs(clientTpot - (Double) a.get("llm_sidecar.time_per_output_token") * 1000);
    }

    /** The client's time to the last content token (TPOT's end, as the sidecar's). */
    static double clientE2eAtLastTokenMs(Seen s) {
        String text = s.client().latin1();
        Matcher m = FIRST_CONTENT.matcher(text);
        int last = -1;
        while (m.find(Math.max(s.client().bodyStart(), last + 1))) {
            last = m.end() - 1;
        }
        return (s.client().arrivalOf(last) - s.client().sentNanos()) / 1e6;
    }

    static void check(Run run, Bounds b) {
        SoftAssertions soft = new SoftAssertions();
        long offset = run.wallMinusMonotonic();
        for (Seen s : run.seen()) {
            // the engine names its model in the stream: the span carries it
            Matcher named = Pattern.compile("\"model\":\"([^\"]+)\"").matcher(s.client().entity());
            soft.assertThat(named.find()).as("the engine names its model in the stream").isTrue();
            soft.assertThat(OtlpReceiver.attributes(s.span().getAttributesList()))
                    .containsEntry("gen_ai.response.model", named.group(1));
            // causal: the sidecar's interval lies inside the client's (0.5 ms for two processes' clock reads)
            soft.assertThat(clientTtftMs(s) - sidecarTtftMs(s)).as("causal TTFT").isGreaterThan(-0.5);
            soft.assertThat(clientE2eMs(s) - sidecarE2eMs(s)).as("causal E2E").isGreaterThan(-0.5);
            soft.assertThat(relayFirstMs(s, offset)).as("causal relay hop").isGreaterThan(-0.5);
        }
        List<Double> reference = run.reference();
        bound(soft, "median relay hop of the first token", 0.5, run.seen().stream()
                .map(s -> relayFirstMs(s, offset)).toList(), reference, b.relayMedian());
        bound(soft, "median relay hop of the end", 0.5, run.seen().stream().map(s -> relayEndMs(s, offset)).toList(),
                reference, b.endMedian());
        List<Double> tpot = run.seen().stream().map(RealEngineTiming::tpotDifferenceMs).toList();
        // TPOT is a difference over 47 intervals: the hops cancel, a delayed request moves it by its delay / 47
        soft.assertThat(quantile(tpot, 0.5)).as("median |TPOT difference|, ms").isLessThan(b.tpotMedian());
        soft.assertThat(quantile(tpot, 0.9)).as("p90 |TPOT difference|, ms").isLessThan(b.tpotP90());
        soft.assertAll();
    }

    static void bound(SoftAssertions soft, String what, double q, List<Double> values, List<Double> reference,
            double limit) {
        soft.assertThat(CappedReference.beyond(quantile(values, q), quantile(reference, q)))
                .as("%s beyond the reference's delay, ms", what).isLessThan(limit);
    }

    static void report(Run run) {
        long offset = run.wallMinusMonotonic();
        print("relay hop of the first token", run.seen().stream().map(s -> relayFirstMs(s, offset)).toList());
        print("relay hop of the end", run.seen().stream().map(s -> relayEndMs(s, offset)).toList());
        print("client minus sidecar, TTFT", run.seen().stream().map(s -> clientTtftMs(s) - sidecarTtftMs(s)).toList());
        print("client minus sidecar, E2E", run.seen().stream().map(s -> clientE2eMs(s) - sidecarE2eMs(s)).toList());
        print("|TPOT difference|", run.seen().stream().map(RealEngineTiming::tpotDifferenceMs).toList());
        print("the reference's delay (" + run.reference().size() + " events)", run.reference());
    }

    static void print(String what, List<Double> ms) {
        System.out.printf("real engine timing, %s (ms): p50 %.3f p90 %.3f max %.3f%n", what, quantile(ms, 0.5),
                quantile(ms, 0.9), quantile(ms, 1));
    }

    /** The nearest-rank quantile (the value at rank ceil(q * n)). */
    static double quantile(List<Double> values, double q) {
        List<Double> sorted = values.stream().sorted().toList();
        return sorted.get(Math.max(0, (int) Math.ceil(q * sorted.size()) - 1));
    }

    static Map<String, Span> awaitSpans(OtlpReceiver otlp, Set<String> traces) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            Map<String, Span> found = new HashMap<>();
            for (Span s : otlp.spans()) {
                String trace = HexFormat.of().formatHex(s.getTraceId().toByteArray());
                if (traces.contains(trace)) {
                    found.put(trace, s);
                }
            }
            if (found.size() == traces.size() || System.nanoTime() > deadline) {
                assertThat(found.keySet()).containsExactlyInAnyOrderElementsOf(traces);
                return found;
            }
            Thread.sleep(50);
        }
    }
}
