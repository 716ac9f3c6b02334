package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.live.LiveStats;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The saturation knee on the simulated engine, driven closed-loop from 1 to 32 concurrent streams through the proxy:
 * the engine runs 8 requests at once and queues the rest (like vLLM's max-num-seqs), so TTFT is flat up to 8 in
 * flight and grows with the queue beyond; the estimate must say 8. Also writes the figure docs/slo-guide.md shows
 * (target/knee-sweep.svg; KNEE_FIGURE=docs/img/knee-sweep.svg to refresh the committed one).
 */
class SaturationKneeTest {

    static final int SLOTS = 8;
    static final int[] CONCURRENCY = {1, 2, 4, 8, 16, 32};
    static final String BODY = "{\"model\":\"sim-llama-8b\",\"stream\":true,\"max_tokens\":10,\"messages\":[]}";

    @Test
    void theKneeOfAnEngineWithEightSlotsIsEight() throws Exception {
        EngineBehaviour engine = EngineBehaviour.defaults().withSlots(SLOTS)
                .withTiming(Duration.ofMillis(20), Duration.ofMillis(4));
        try (ProxyFixture f = new ProxyFixture(engine, Map.of("sidecar.saturation.min-samples", "20"))) {
            for (int c : CONCURRENCY) {
                closedLoop(f, c, 40, Duration.ofMillis(1500), Duration.ofSeconds(20));
            }
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_saturation_knee_requests")).isEqualTo(SLOTS);
            assertThat(s.sum("llm_sidecar_saturation_load_ratio")).as("nothing in flight now").isZero();
            for (int c : CONCURRENCY) {
                assertThat(s.sum("llm_sidecar_time_to_first_token_by_load_seconds_count", "load_band",
                        Integer.toString(c))).as("band %d", c).isGreaterThanOrEqualTo(20);
                assertThat(s.sum("llm_sidecar_time_per_output_token_by_load_seconds_count", "load_band",
                        Integer.toString(c))).as("band %d", c).isGreaterThanOrEqualTo(20);
            }

            JsonObject saturation = LiveStats.render(f.telemetry).getJsonObject("saturation");
            assertThat(saturation.getDouble("knee_requests")).isEqualTo(SLOTS);
            assertThat(saturation.getString("knee_source")).isEqualTo("estimated");
            JsonArray bands = saturation.getJsonArray("bands");
            // a client's next request can arrive a moment before the proxy counted its last one as finished, one band
            // up: allow such strays above 32, as long as they are few
            for (int i = CONCURRENCY.length; i < bands.size(); i++) {
                assertThat(bands.getJsonObject(i).getLong("count")).as("stray band %s", bands.getJsonObject(i))
                        .isLessThan(10);
            }
            for (int i = 0; i < CONCURRENCY.length; i++) {
                assertThat(bands.getJsonObject(i).getString("band")).isEqualTo(Integer.toString(CONCURRENCY[i]));
            }
            double flat = bands.getJsonObject(3).getDouble("ttft_p50"); // 8 in flight
            double queued = bands.getJsonObject(4).getDouble("ttft_p50"); // 16 in flight: each waits a whole request
            assertThat(bands.getJsonObject(0).getDouble("ttft_p50")).isBetween(0.018, 0.045);
            assertThat(flat).isBetween(0.018, 0.045);
            assertThat(queued).as("twice the load, more than twice the TTFT").isGreaterThan(2 * flat);
            writeFigure(new JsonArray(bands.getList().subList(0, CONCURRENCY.length)), SLOTS);
        }
    }

    /**
     * {@code concurrency} clients, each sending its next request when the last one ended, until at least
     * {@code minRequests} ended and {@code minTime} passed (bounded by {@code maxTime}); then waits for every
     * client to finish, so the next step starts from an idle engine.
     */
    static void closedLoop(ProxyFixture f, int concurrency, int minRequests, Duration minTime, Duration maxTime)
            throws Exception {
        long start = System.nanoTime();
        AtomicInteger done = new AtomicInteger();
        List<Future<Void>> clients = new ArrayList<>();
        for (int i = 0; i < concurrency; i++) {
            Promise<Void> finished = Promise.promise();
            clients.add(finished.future());
            next(f, done, finished, () -> {
                long elapsed = System.nanoTime() - start;
                return elapsed > maxTime.toNanos() || (done.get() >= minRequests && elapsed >= minTime.toNanos());
            });
        }
        ProxyFixture.await(Future.all(clients));
    }

    private static void next(ProxyFixture f, AtomicInteger done, Promise<Void> finished,
            java.util.function.BooleanSupplier stop) {
        if (stop.getAsBoolean()) {
            finished.complete();
            return;
        }
        f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", Buffer.buffer(BODY), Map.of())
                .onComplete(r -> {
                    if (r.failed() || r.result().status() != 200 || !r.result().text().endsWith("[DONE]\n\n")) {
                        finished.fail(r.failed() ? r.cause() : new AssertionError("bad response " + r.result()));
                        return;
                    }
                    done.incrementAndGet();
                    next(f, done, finished, stop);
                });
    }

    /** TTFT median per load band on a log-2 load axis, the knee marked: the figure of docs/slo-guide.md. */
    static void writeFigure(JsonArray bands, int knee) throws IOException {
        int w = 560;
        int h = 300;
        int left = 60;
        int right = 20;
        int top = 30;
        int bottom = 50;
        double maxLog = Math.log(64) / Math.log(2);
        double maxMs = 0;
        for (int i = 0; i < bands.size(); i++) {
            maxMs = Math.max(maxMs, bands.getJsonObject(i).getDouble("ttft_p50") * 1000);
        }
        maxMs = Math.ceil(maxMs / 50) * 50;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n",
                w, h));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"18\" font-size=\"14\">TTFT p50 by requests in flight "
                + "at arrival (simulated engine, %d slots)</text>%n", left, knee));
        double plotW = w - left - right;
        double plotH = h - top - bottom;
        java.util.function.DoubleUnaryOperator x = load -> left + plotW * (Math.log(load) / Math.log(2)) / maxLog;
        final double yMax = maxMs;
        java.util.function.DoubleUnaryOperator y = ms -> top + plotH * (1 - ms / yMax);
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>%n",
                left, top + plotH, left + plotW, top + plotH));
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>%n",
                left, top, left, top + plotH));
        for (int load = 1; load <= 64; load *= 2) {
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>%n",
                    x.applyAsDouble(load), top + plotH + 16, load));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">requests in flight at "
                + "arrival (load band upper bound, log scale)</text>%n", left + plotW / 2, h - 10));
        for (int ms = 0; ms <= yMax; ms += (int) Math.max(50, yMax / 5 / 50 * 50)) {
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d ms</text>%n",
                    left - 6, y.applyAsDouble(ms) + 4, ms));
        }
        svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c00\" "
                + "stroke-dasharray=\"4 3\"/>%n<text x=\"%.1f\" y=\"%d\" fill=\"#c00\">knee = %d</text>%n",
                x.applyAsDouble(knee), top, x.applyAsDouble(knee), top + plotH, x.applyAsDouble(knee) + 4, top + 14,
                knee));
        StringBuilder points = new StringBuilder();
        for (int i = 0; i < bands.size(); i++) {
            JsonObject b = bands.getJsonObject(i);
            double px = x.applyAsDouble(b.getInteger("upper"));
            double py = y.applyAsDouble(b.getDouble("ttft_p50") * 1000);
            points.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
            svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#1f77b4\"/>%n", px,
                    py));
        }
        svg.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"#1f77b4\"/>%n</svg>%n",
                points.toString().trim()));
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target/knee-sweep.svg"), svg);
        String committed = System.getenv("KNEE_FIGURE");
        if (committed != null) {
            Files.writeString(Path.of(committed), svg);
        }
    }
}
