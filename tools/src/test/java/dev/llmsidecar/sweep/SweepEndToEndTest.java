package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.llmsidecar.load.PoissonArrivals;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import org.junit.jupiter.api.Test;

/**
 * The sweep end to end: the simulated engine with {@value #SLOTS} slots, the sidecar's real proxy in front of it
 * ({@link ProxyFixture}), its Prometheus registry served as {@code /q/metrics} on a loopback Vert.x server (what the
 * management port serves: {@code registry.scrape()}; the packaged app is not built yet when surefire runs), and the
 * sweep driving it through the proxy with its own client and reading every result from that endpoint.
 *
 * <p><b>The engine's known saturation point.</b> Up to {@value #SLOTS} requests generate at once; later ones queue
 * for a slot (vLLM's max-num-seqs). A request holds its slot from its start to its last token: service time
 * T = prefill + (N - 1) x inter-token = 50 ms + 15 x 10 ms = 200 ms for N = 16 output tokens. So the engine
 * completes at most S / T = 8 / 0.2 s = 40 requests/s, and its TTFT is the prefill (50 ms) while fewer than S
 * requests are open, and prefill + the wait for a slot beyond.
 *
 * <p><b>Closed loop</b>, 1, 2, 4 ... 4S streams: up to S streams nobody waits (TTFT = 50 ms, throughput c / T); at 2S
 * every request waits a whole service time (TTFT = 50 + 200 ms, throughput still S / T). So the TTFT median is flat
 * to S and rises with elasticity ln(250/50) / ln 2 = 2.3 from S to 2S: the knee is S. With a TTFT SLO of 150 ms
 * (prefill + half a service time of waiting), every step up to S meets it and none beyond: goodput = the
 * throughput at S = S / T = 40 good requests/s.
 *
 * <p><b>Open loop</b>, Poisson arrivals: the engine is an M/D/S queue. Below S / T it keeps up (with some waiting
 * from bursts); above it the queue grows by (rate - S / T) requests every second, so the wait grows without bound and
 * throughput stays S / T. The share of requests meeting the TTFT SLO at each rate is derived by running the same
 * queue (S servers, FIFO, deterministic T, first token at start + prefill) over the very arrival times the sweep
 * draws (same seed); goodput is the highest rate whose derived share meets the target.
 */
class SweepEndToEndTest {

    static final int SLOTS = 8;
    static final long PREFILL_MS = 50;
    static final long ITL_MS = 10;
    static final int OUTPUT_TOKENS = 16;
    /** T: a request holds its slot from its start to its last token. */
    static final double SERVICE_SECONDS = (PREFILL_MS + (OUTPUT_TOKENS - 1) * ITL_MS) / 1000.0;
    /** S / T: the most requests per second the engine can complete. */
    static final double SATURATION_RPS = SLOTS / SERVICE_SECONDS;
    static final double TTFT_SLO = 0.150;

    /** The proxy fixture plus /q/metrics over HTTP, and a separate Vert.x for the sweep's client. */
    static final class Harness implements AutoCloseable {
        final ProxyFixture fixture;
        final HttpServer metrics;
        final Vertx clientVertx = Vertx.vertx();
        final String metricsUrl;

        Harness(EngineBehaviour engine, double target) {
            this(engine, TTFT_SLO, target);
        }

        /** With the sidecar objective {@code sweep}: TTFT at most {@code ttft} seconds for {@code target}. */
        Harness(EngineBehaviour engine, double ttft, double target) {
            fixture = new ProxyFixture(engine, Map.of(
                    "sidecar.slo.objectives.sweep.ttft", "PT" + ttft + "S",
                    "sidecar.slo.objectives.sweep.target", Double.toString(target),
                    "sidecar.saturation.min-samples", "20"));
            metrics = ProxyFixture.await(fixture.vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1"))
                    .requestHandler(req -> req.response().putHeader("content-type", "text/plain; version=0.0.4")
                            .end(fixture.registry.scrape()))
                    .listen(0));
            metricsUrl = "http://127.0.0.1:" + metrics.actualPort() + "/q/metrics";
        }

        SweepOptions options(String... loadArgs) {
            List<String> args = new ArrayList<>(List.of("--url", "http://127.0.0.1:" + fixture.proxyPort,
                    "--metrics-url", metricsUrl, "--model", "sim-llama-8b", "--input-len", "32", "--output-len",
                    Integer.toString(OUTPUT_TOKENS), "--slo-objective", "sweep", "--seed", "7"));
            args.addAll(List.of(loadArgs));
            return SweepOptions.parse(args.toArray(String[]::new));
        }

        @Override
        public void close() {
            ProxyFixture.await(metrics.close());
            ProxyFixture.await(clientVertx.close());
            fixture.close();
        }
    }

    static EngineBehaviour engine(double jitter) {
        return EngineBehaviour.defaults().withSlots(SLOTS)
                .withTiming(Duration.ofMillis(PREFILL_MS), Duration.ofMillis(ITL_MS)).withJitter(jitter);
    }

    @Test
    void closedLoopFindsTheKneeAtTheSlotsAndGoodputAtSlotsOverServiceTime() throws Exception {
        // jitter spreads the streams' completions, so that a short step does not count whole batches of 8 at once
        try (Harness h = new Harness(engine(0.3), 0.95)) {
            SweepOptions o = h.options("--concurrency", "1,2,4,8,16,32", "--step-seconds", "3", "--warmup-seconds",
                    "1", "--slo", "ttft=" + TTFT_SLO + ",target=0.95", "--out", "target/sweep-e2e/closed");
            long started = System.nanoTime();
            SweepResult r = Sweep.run(o, h.clientVertx, System.err);
            Path dir = Path.of("target/sweep-e2e/closed");
            Report.write(r, dir, "SweepEndToEndTest closed loop");
            double seconds = (System.nanoTime() - started) / 1e9;

            assertThat(r.steps()).hasSize(6);
            for (StepResult s : r.steps()) {
                assertThat(s.client().errorCount()).as("client errors at %s", s.load()).isZero();
                assertThat(s.sidecarErrors()).as("sidecar errors at %s", s.load()).isZero();
                assertThat(s.ttft().count()).as("TTFT samples at %s", s.load()).isGreaterThanOrEqualTo(10);
            }
            // below the slots nobody waits: TTFT is the prefill, 50 ms +-30 % jitter
            assertThat(r.steps().get(0).ttft().p50()).isBetween(0.035, 0.075);
            assertThat(r.steps().get(3).ttft().p50()).isBetween(0.035, 0.075);
            // at 2S every request waits about one service time
            assertThat(r.steps().get(4).ttft().p50()).isBetween(0.2, 0.35);

            double knee = r.knee().load();
            print(r, seconds, "closed loop: knee %s streams (S = %d); goodput %.2f good req/s at %s streams (derived "
                    + "S/T = %.1f req/s, error %+.1f %%); sidecar knee %s", knee, SLOTS, r.goodput().goodThroughput(),
                    r.goodput().load(), SATURATION_RPS,
                    100 * (r.goodput().goodThroughput() / SATURATION_RPS - 1), r.sidecarKnee());
            assertThat(r.knee().found()).isTrue();
            assertThat(Math.abs(Math.log(knee / SLOTS) / Math.log(2))).as("knee %s within one step of %d", knee, SLOTS)
                    .isLessThanOrEqualTo(1.0);
            assertThat(r.goodput().found()).isTrue();
            assertThat(r.goodput().goodThroughput()).as("goodput vs S/T").isCloseTo(SATURATION_RPS,
                    within(0.10 * SATURATION_RPS));
            // past the knee the engine still completes S / T
            assertThat(r.steps().get(5).throughput()).isCloseTo(SATURATION_RPS, within(0.10 * SATURATION_RPS));
            // the sidecar's own knee, from its load bands: the same engine seen from the other side
            assertThat(r.sidecarKnee()).isEqualTo(SLOTS);
            // the histogram estimate at the threshold (a bucket bound: the objective added it) agrees with the counters
            for (StepResult s : r.steps()) {
                assertThat(s.slo().histogramExact()).isTrue();
                assertThat(s.slo().histogramLow()).as("histogram share at %s", s.load())
                        .isCloseTo(s.slo().share(), within(0.1));
            }
            assertReport(dir);
        }
    }

    @Test
    void openLoopMeetsTheSloUpToTheDerivedRateAndSaturatesAtSlotsOverServiceTime() throws Exception {
        // a target no derived share is near (checked below), so that millisecond timing noise cannot flip a step
        double target = 0.8;
        double[] rates = {0.4 * SATURATION_RPS, 0.6 * SATURATION_RPS, 0.8 * SATURATION_RPS, 1.2 * SATURATION_RPS,
            1.6 * SATURATION_RPS};
        String rateList = String.join(",", Arrays.stream(rates).mapToObj(r -> String.format(Locale.ROOT, "%.0f", r))
                .toList());
        // no jitter: the engine is exactly the M/D/S queue the expected shares are derived from
        try (Harness h = new Harness(engine(0), target)) {
            SweepOptions o = h.options("--rates", rateList, "--step-seconds", "3", "--warmup-seconds", "1",
                    "--slo", "ttft=" + TTFT_SLO + ",target=" + target, "--out", "target/sweep-e2e/open");
            long started = System.nanoTime();
            SweepResult r = Sweep.run(o, h.clientVertx, System.err);
            Path dir = Path.of("target/sweep-e2e/open");
            Report.write(r, dir, "SweepEndToEndTest open loop");
            double seconds = (System.nanoTime() - started) / 1e9;

            double[] derived = new double[rates.length];
            double derivedGoodput = Double.NaN;
            boolean missed = false;
            for (int i = 0; i < rates.length; i++) {
                derived[i] = derivedShare(o, i);
                if (!missed && derived[i] >= target) {
                    derivedGoodput = rates[i];
                } else {
                    missed = true;
                }
            }
            double found = r.goodput().load();
            print(r, seconds, "open loop: goodput %s req/s offered (derived from the M/D/%d queue on the same "
                    + "arrivals: %s req/s, error %+.1f %%; shares measured %s, derived %s); knee %s req/s; "
                    + "S/T = %.1f req/s", found, SLOTS, derivedGoodput, 100 * (found / derivedGoodput - 1),
                    r.steps().stream().map(s -> String.format(Locale.ROOT, "%.3f", s.slo().share())).toList(),
                    Arrays.stream(derived).mapToObj(d -> String.format(Locale.ROOT, "%.3f", d)).toList(),
                    r.knee().load(), SATURATION_RPS);
            for (StepResult s : r.steps()) {
                assertThat(s.client().errorCount()).as("client errors at %s", s.load()).isZero();
                assertThat(s.client().dropped()).isZero();
                assertThat(s.sidecarErrors()).isZero();
            }
            assertThat(derivedGoodput).as("the derived goodput is below saturation").isLessThan(SATURATION_RPS);
            for (double d : derived) {
                assertThat(Math.abs(d - target)).as("derived share %s is not on the target's edge", d)
                        .isGreaterThanOrEqualTo(0.05);
            }
            assertThat(r.goodput().found()).isTrue();
            assertThat(found).as("goodput vs the derived value")
                    .isCloseTo(derivedGoodput, within(0.1 * derivedGoodput));
            for (int i = 0; i < rates.length; i++) {
                assertThat(r.steps().get(i).slo().share()).as("share at %s req/s", rates[i])
                        .isCloseTo(derived[i], within(0.1));
                if (rates[i] < SATURATION_RPS) {
                    // the load is served: completions follow the arrivals the step actually had (a Poisson count)
                    double sent = r.steps().get(i).client().sent() / r.steps().get(i).measuredSeconds();
                    assertThat(r.steps().get(i).throughput()).as("throughput at %s req/s", rates[i])
                            .isCloseTo(sent, within(0.15 * sent));
                } else {
                    // past S / T the engine completes S / T and the rest queues
                    assertThat(r.steps().get(i).throughput()).as("throughput at %s req/s", rates[i])
                            .isCloseTo(SATURATION_RPS, within(0.1 * SATURATION_RPS));
                }
            }
            // the knee: the last rate before the queue grows without bound, within one step of S / T
            assertThat(r.knee().found()).isTrue();
            assertThat(r.knee().load()).isBetween(rates[1], rates[3]);
            assertReport(dir);
        }
    }

    /**
     * The share of step {@code step}'s requests meeting the TTFT SLO, derived from the engine's parameters: the same
     * Poisson arrivals the sweep sends (same seed), {@value #SLOTS} slots taken in arrival order, each held for
     * T = {@link #SERVICE_SECONDS}, first token {@value #PREFILL_MS} ms after the slot is taken. Counted, as the
     * sidecar's SLO counters count them, over the requests that end after the warm-up.
     */
    static double derivedShare(SweepOptions o, int step) {
        PoissonArrivals arrivals = Sweep.arrivals(o, step);
        double end = o.warmupSeconds + o.stepSeconds;
        PriorityQueue<Double> free = new PriorityQueue<>();
        for (int i = 0; i < SLOTS; i++) {
            free.add(0.0);
        }
        int counted = 0;
        int good = 0;
        for (double a = arrivals.nextNanos() / 1e9; a < end; a = arrivals.nextNanos() / 1e9) {
            double start = Math.max(a, free.poll());
            free.add(start + SERVICE_SECONDS);
            double ttft = start + PREFILL_MS / 1000.0 - a;
            if (start + SERVICE_SECONDS >= o.warmupSeconds) {
                counted++;
                if (ttft <= TTFT_SLO) {
                    good++;
                }
            }
        }
        return counted == 0 ? Double.NaN : (double) good / counted;
    }

    static void assertReport(Path dir) throws Exception {
        String md = Files.readString(dir.resolve("sweep.md"));
        assertThat(md).contains("## Summary", "Knee (this sweep)", "Goodput at the SLO", "## Steps",
                "against `vllm bench serve`'s definitions", "histogram_quantile");
        for (String svg : new String[] {"sweep-latency.svg", "sweep-load.svg"}) {
            String text = Files.readString(dir.resolve(svg));
            assertThat(text).startsWith("<svg").contains("<polyline", "knee").endsWith("</svg>\n");
        }
        assertThat(new io.vertx.core.json.JsonObject(Files.readString(dir.resolve("results.json")))
                .getJsonArray("steps")).isNotEmpty();
    }

    static void print(SweepResult r, double seconds, String format, Object... args) {
        PrintStream out = System.out;
        out.printf(Locale.ROOT, "SweepEndToEndTest: " + format + "; %.1f s%n", append(args, seconds));
        for (StepResult s : r.steps()) {
            out.printf(Locale.ROOT, "  step %s: %.2f req/s, TTFT p50 %.1f ms p99 %.1f ms, share %.3f (histograms "
                    + "%.3f)%n", s.load(), s.throughput(), s.ttft().p50() * 1000, s.ttft().p99() * 1000,
                    s.slo().share(), s.slo().histogramLow());
        }
    }

    private static Object[] append(Object[] args, Object last) {
        Object[] out = Arrays.copyOf(args, args.length + 1);
        out[args.length] = last;
        return out;
    }
}
