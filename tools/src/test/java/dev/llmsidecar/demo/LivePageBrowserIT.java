package dev.llmsidecar.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.llmsidecar.sim.SimulatedEngine;
import dev.llmsidecar.testkit.Processes;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The live page (/q/llm/ui) in a real browser: the packaged sidecar in front of the demo's simulated engine, with the
 * demo's settings and demo traffic (and a burst past the engine's slots, so load and latency move), Debian's headless
 * Chromium driven over the DevTools protocol. Checks the "no data yet" state, that every plot draws points once
 * traffic flows, that a failed poll shows a banner and polling goes on, and that the page logs no error (a CSP
 * violation would be one). Saves a screenshot to target/live-page.png, and to the path in -Dui.screenshot (the
 * README's docs/img/live-page.png) when set; -Dui.seconds=N lets traffic run at least N seconds before the screenshot.
 *
 * Skipped when /usr/bin/chromium is absent, except in CI (CI=true), where .ci/run installs it and its absence fails.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LivePageBrowserIT {

    static final int WIDTH = 1280, HEIGHT = 1500;
    static final Set<String> TIME_SERIES = Set.of("plot-ttft", "plot-tpot", "plot-itl", "plot-load", "plot-attainment",
            "plot-goodput-requests", "plot-goodput-tokens");

    Vertx vertx;
    SimulatedEngine engine;
    Processes.Sidecar sidecar;
    URL proxy;
    URL page;
    URL liveStats;

    @BeforeAll
    void start() throws Exception {
        vertx = Vertx.vertx();
        engine = new SimulatedEngine(vertx, DemoLauncher.behaviour());
        int enginePort = engine.start("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        sidecar = new Processes.Sidecar("http://127.0.0.1:" + enginePort, Map.of(), DemoLauncher.SIDECAR_SETTINGS);
        proxy = URI.create("http://127.0.0.1:" + sidecar.proxyPort + "/").toURL();
        page = URI.create("http://127.0.0.1:" + sidecar.managementPort + "/q/llm/ui").toURL();
        liveStats = URI.create("http://127.0.0.1:" + sidecar.managementPort + "/q/llm").toURL();
    }

    @AfterAll
    void stop() throws Exception {
        try {
            if (sidecar != null) {
                sidecar.close();
            }
        } finally {
            engine.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    static final String STATE = "!document.body || !document.getElementById('banner') ? JSON.stringify({plots: {}}) :"
            + " JSON.stringify({ready: document.body.getAttribute('data-ready'),"
            + " failures: document.body.getAttribute('data-poll-failures'),"
            + " banner: !document.getElementById('banner').hidden,"
            + " plots: Object.fromEntries([...document.querySelectorAll('[data-points]')]"
            + ".map(e => [e.id, +e.getAttribute('data-points')])),"
            + " empty: [...document.querySelectorAll('svg text.empty')].map(e => e.closest('figure').id)})";

    @Test
    void thePagePlotsLiveDataInHeadlessChromium() throws Exception {
        if (!Files.isExecutable(HeadlessChromium.BINARY)) {
            if ("true".equals(System.getenv("CI"))) {
                fail(HeadlessChromium.BINARY + " is missing: CI must install Debian's chromium (.ci/run does)");
            }
            Assumptions.abort(HeadlessChromium.BINARY + " is missing: install Debian's chromium to run the live page"
                    + " browser test (apt-get install chromium); skipped outside CI");
        }
        long started = System.nanoTime();
        int minSeconds = Integer.getInteger("ui.seconds", 0);
        DemoTraffic base = new DemoTraffic(vertx, "127.0.0.1", proxy.getPort(), 4, 16);
        DemoTraffic burst = new DemoTraffic(vertx, "127.0.0.1", proxy.getPort(), 4, 8);
        boolean burstRunning = false;
        try (HeadlessChromium chromium = new HeadlessChromium(WIDTH, HEIGHT)) {
            chromium.navigate(page.toString());

            // before any traffic: the first poll succeeds and every plot says so instead of drawing
            JsonObject idle = waitFor(chromium, s -> "true".equals(s.getString("ready")), Duration.ofSeconds(30));
            // (the load plot has its zeros: nothing in flight is a value, not an absence)
            assertThat(idle.getJsonObject("plots").getMap()).containsKeys(TIME_SERIES.toArray(new String[0]))
                    .containsKey("plot-knee").allSatisfy((id, n) -> {
                        if (id.equals("plot-load")) {
                            assertThat(((Number) n).intValue()).as(id).isPositive();
                        } else {
                            assertThat(((Number) n).intValue()).as(id).isZero();
                        }
                    });
            assertThat(idle.getJsonArray("empty").getList()).hasSize(idle.getJsonObject("plots").size() - 1)
                    .doesNotContain("plot-load");

            base.start();
            // a burst past the engine's 10 slots for the middle part of the run: queueing, the knee, a TTFT bump
            long burstFrom = Math.max(4, minSeconds * 3 / 10), burstTo = Math.max(12, minSeconds * 7 / 10);
            long trafficStart = System.nanoTime();
            JsonObject state;
            long deadline = trafficStart + Duration.ofSeconds(minSeconds + 60).toNanos();
            while (true) {
                long sec = (System.nanoTime() - trafficStart) / 1_000_000_000L;
                if (!burstRunning && sec >= burstFrom && sec < burstTo) {
                    burst.start();
                    burstRunning = true;
                } else if (burstRunning && sec >= burstTo) {
                    stop(burst);
                    burstRunning = false;
                }
                state = state(chromium);
                JsonObject plots = state.getJsonObject("plots");
                boolean all = plots.fieldNames().stream()
                        .filter(id -> TIME_SERIES.contains(id) || id.equals("plot-knee"))
                        .allMatch(id -> plots.getInteger(id) > 0);
                if (all && sec >= Math.max(minSeconds, burstTo + 2) || System.nanoTime() > deadline) {
                    break;
                }
                Thread.sleep(500);
            }
            JsonObject plots = state.getJsonObject("plots");
            for (String id : TIME_SERIES) {
                assertThat(plots.getInteger(id)).as("points drawn in %s: %s", id, state).isPositive();
            }
            assertThat(hasSaturation()).as("/q/llm lists load bands").isTrue();
            assertThat(plots.getInteger("plot-knee")).as("knee chart points: %s", state).isPositive();
            assertThat(state.getString("failures")).as("failed polls").isNull();
            assertThat(state.getBoolean("banner")).isFalse();
            // more than one poll drawn: the series are over time
            assertThat(plots.getInteger("plot-load")).isGreaterThan(4);

            byte[] png = chromium.screenshot(WIDTH);
            Path target = Path.of("target", "live-page.png");
            Files.createDirectories(target.getParent());
            Files.write(target, png);
            String copy = System.getProperty("ui.screenshot", System.getenv("UI_SCREENSHOT"));
            if (copy != null && !copy.isBlank()) {
                // relative to the repository (docs/img/live-page.png), as the README names it
                Path to = dev.llmsidecar.testkit.Repo.root().resolve(copy);
                if (to.getParent() != null) {
                    Files.createDirectories(to.getParent());
                }
                Files.write(to, png);
            }
            System.out.printf("LivePageBrowserTest: screenshot %s (%d bytes) after %d s of traffic, plots %s%n",
                    target.toAbsolutePath(), png.length, (System.nanoTime() - trafficStart) / 1_000_000_000L, plots);

            // two models in the demo traffic: the selector shows, and choosing the other one redraws for it
            String other = (String) chromium.evaluate("(() => { const s = document.getElementById('model');"
                    + " const o = [...s.options].map(o => o.value).find(v => v !== s.value);"
                    + " if (!o || document.getElementById('model-picker').hidden) return null;"
                    + " s.value = o; s.dispatchEvent(new Event('change')); return o; })()");
            assertThat(other).as("a second model to choose").isNotNull();
            assertThat(chromium.evaluate("document.querySelector('#plot-ttft figcaption').textContent").toString())
                    .contains(other);

            // a failed poll: a banner, the drawn data stays, polling goes on and the banner goes once it succeeds again
            chromium.call("Network.setBlockedURLs", new JsonObject().put("urls", new JsonArray().add("*/q/llm")));
            JsonObject failed = waitFor(chromium, s -> s.getBoolean("banner"), Duration.ofSeconds(15));
            assertThat(failed.getString("failures")).isNotNull();
            assertThat(failed.getJsonObject("plots").getInteger("plot-load")).isPositive();
            assertThat(chromium.evaluate("document.getElementById('banner').textContent").toString())
                    .contains("failed").contains("retrying");
            chromium.call("Network.setBlockedURLs", new JsonObject().put("urls", new JsonArray()));
            waitFor(chromium, s -> !s.getBoolean("banner"), Duration.ofSeconds(15));

            assertThat(chromium.problems).as("errors logged by the page").isEmpty();
        } finally {
            stop(base);
            if (burstRunning) {
                stop(burst);
            }
            System.out.printf("LivePageBrowserTest: %d s%n", (System.nanoTime() - started) / 1_000_000_000L);
        }
    }

    private void stop(DemoTraffic traffic) {
        vertx.executeBlocking(() -> {
            traffic.stop();
            return null;
        }).toCompletionStage().toCompletableFuture().join();
    }

    private boolean hasSaturation() throws Exception {
        String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(liveStats.toURI())
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
        JsonObject sat = new JsonObject(body).getJsonObject("saturation");
        return sat != null && !sat.getJsonArray("bands", new JsonArray()).isEmpty();
    }

    private static JsonObject state(HeadlessChromium chromium) throws Exception {
        return new JsonObject((String) chromium.evaluate(STATE));
    }

    private static JsonObject waitFor(HeadlessChromium chromium, Predicate<JsonObject> condition, Duration timeout)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        JsonObject s = state(chromium);
        while (!condition.test(s)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("page state after " + timeout + ": " + s + "; problems " + chromium.problems
                        + "; chromium output: " + chromium.output());
            }
            Thread.sleep(250);
            s = state(chromium);
        }
        return s;
    }
}
