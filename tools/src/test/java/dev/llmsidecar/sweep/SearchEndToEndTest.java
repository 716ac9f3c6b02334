package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * {@code --search} end to end: the simulated engine behind the sidecar's real proxy ({@link SweepEndToEndTest.Harness}),
 * the attainment of a TTFT SLO read from the sidecar's objective counters, bisection on the Poisson rate.
 *
 * <p><b>The known capacity.</b> {@value #SLOTS} slots; a request holds one for T = prefill + (N − 1) × inter-token =
 * 100 ms + 19 × 100 ms = 2 s (N = {@value #OUTPUT_TOKENS} output tokens), so the engine completes at most
 * C = slots ÷ T = 64 requests/s, and below C a request starts at once and its TTFT is the prefill. The SLO, TTFT ≤
 * 0.4 s for 90 % of requests, holds while requests wait less than 0.3 s for a slot: up to about C. The knee is sharp
 * because the engine has many slots (an M/D/128 queue barely queues below 95 % utilisation: the share derived by
 * simulating it over 2 + 4 s probes, averaged over arrival draws, is 0.996 at 0.9 C, 0.96 at 0.95 C, 0.85 at C and
 * 0.73 at 1.05 C). One probe's seeded Poisson draw sends within about ±8 % of its rate in 4 s (the probe at 67.3
 * req/s sent 61.5 req/s, and passed), and a finite probe past C sees a queue only starting to grow: the search must
 * find a rate within 10 % of C. Seeded arrivals make the probes' loads the same on every run; only the machine's
 * timing varies.
 */
class SearchEndToEndTest {

    static final int SLOTS = 128;
    static final long PREFILL_MS = 100;
    static final long ITL_MS = 100;
    static final int OUTPUT_TOKENS = 20;
    static final double SERVICE_SECONDS = (PREFILL_MS + (OUTPUT_TOKENS - 1) * ITL_MS) / 1000.0;
    static final double CAPACITY_RPS = SLOTS / SERVICE_SECONDS;
    static final double TTFT_SLO = 0.4;
    static final double TARGET = 0.9;

    @Test
    void theSearchFindsTheRateTheSloAllowsWithinTenPercentOfSlotsOverServiceTime() throws Exception {
        EngineBehaviour engine = EngineBehaviour.defaults().withSlots(SLOTS)
                .withTiming(Duration.ofMillis(PREFILL_MS), Duration.ofMillis(ITL_MS)).withJitter(0);
        Path out = Path.of("target/search-e2e");
        try (SweepEndToEndTest.Harness h = new SweepEndToEndTest.Harness(engine, TTFT_SLO, TARGET)) {
            SweepOptions o = h.options("--output-len", Integer.toString(OUTPUT_TOKENS), "--search",
                    "--search-start", "40", "--probe-seconds", "4", "--probe-max-seconds", "8", "--warmup-seconds",
                    "2", "--resolution", "0.05", "--max-probes", "8", "--slo", "ttft=" + TTFT_SLO + ",target="
                            + TARGET, "--out", out.toString());
            long started = System.nanoTime();
            Search.Result r = Search.run(o, h.clientVertx, System.err);
            Report.write(r.sweep(), out, "SearchEndToEndTest");
            SearchReport.write(r, out, "SearchEndToEndTest");
            double seconds = (System.nanoTime() - started) / 1e9;

            StringBuilder probes = new StringBuilder();
            for (Search.Probe p : r.probes()) {
                probes.append(String.format(Locale.ROOT, " %.1f:%.3f[%.3f,%.3f]%s", p.load(), p.attainment(),
                        p.interval()[0], p.interval()[1], p.verdict().name().substring(0, 1)));
            }
            System.out.printf(Locale.ROOT, "SearchEndToEndTest: found %s req/s (capacity slots / T = %.1f req/s, "
                    + "error %+.1f %%), next %s; goodput %.1f good req/s; stop: %s; probes%s; %.0f s%n",
                    r.found() == null ? "none" : String.format(Locale.ROOT, "%.2f", r.found().load()), CAPACITY_RPS,
                    r.found() == null ? Double.NaN : 100 * (r.found().load() / CAPACITY_RPS - 1),
                    r.next() == null ? "none" : String.format(Locale.ROOT, "%.2f %s", r.next().load(),
                            r.next().verdict()), r.found() == null ? Double.NaN : r.found().step().goodThroughput(),
                    r.stop(), probes, seconds);

            assertThat(r.found()).as("a rate shown above the target").isNotNull();
            assertThat(r.found().load()).as("found rate vs slots / service time")
                    .isBetween(0.9 * CAPACITY_RPS, 1.1 * CAPACITY_RPS);
            assertThat(r.found().interval()[0]).isGreaterThanOrEqualTo(TARGET);
            assertThat(r.next()).isNotNull();
            assertThat(r.next().load()).isGreaterThan(r.found().load());
            assertThat(r.next().interval()[0]).isLessThan(TARGET);
            assertThat(r.probes().size()).isLessThanOrEqualTo(8);
            // goodput at the found rate: nearly every request good, served at the rate offered
            assertThat(r.found().step().goodThroughput()).isBetween(0.8 * r.found().load(), 1.1 * r.found().load());
            assertThat(r.found().goodTokensPerSecond()).isGreaterThan(0.8 * r.found().load() * OUTPUT_TOKENS);
            for (Search.Probe p : r.probes()) {
                assertThat(p.step().client().errorCount()).isZero();
                assertThat(p.step().measuredSeconds()).isLessThanOrEqualTo(8.5);
                assertThat(p.judged()).isGreaterThan(100);
            }
            String md = Files.readString(out.resolve("search.md"));
            assertThat(md).contains("## Result", "## Probes", "Wilson", "— **found**", "Goodput there");
            String svg = Files.readString(out.resolve("search.svg"));
            assertThat(svg).startsWith("<svg").contains("found ", "target 0.9", "<polyline").endsWith("</svg>\n");
            assertThat(new io.vertx.core.json.JsonObject(Files.readString(out.resolve("search.json")))
                    .getDouble("found")).isEqualTo(r.found().load());
        }
    }
}
