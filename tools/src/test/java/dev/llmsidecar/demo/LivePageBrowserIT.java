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
 * demo's settings and the demo's healthy traffic, Debian's headless Chromium driven over the DevTools protocol. Checks
 * the "no data yet" state; that every plot draws points once traffic flows, with no past-capacity notice; that a page
 * opened after N seconds of traffic (-Dui.seconds, default 30; the 5 minutes is
 * -Dui.seconds=300) shows those N seconds on its first draw, from the history the sidecar kept; that every axis's top
 * tick is at or above the largest value it plots; that /q/llm holds no null and no empty block; that a failed poll
 * shows a banner and polling goes on; that the demo's incident (a surge past the engine's slots) brings up the
 * past-capacity notice, which goes once it ends (screenshot: target/live-page-incident.png); and that the page logs
 * no error (a CSP violation would be one). Saves a
 * screenshot to target/live-page.png, and to the path in -Dui.screenshot (the README's docs/img/live-page.png) when
 * set.
 *
 * Skipped when /usr/bin/chromium is absent, except in CI (CI=true), where .ci/run installs it and its absence fails.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LivePageBrowserIT {

    static final int WIDTH = 1280, HEIGHT = 1500;
    /** Default seconds of traffic before the page is opened again: long enough to tell history from a fresh tab. */
    static final int DEFAULT_SECONDS = 30;
    /**
     * How much less than the traffic's length a latency or goodput plot's history may span: the first request must
     * finish before there is a percentile (up to 128 tokens at 25 ms ± 40 %), the sidecar samples every 5 s, and the
     * traffic's seconds are whole (measured: 10 s less on a loaded 2-core machine).
     */
    static final int HISTORY_MARGIN_SECONDS = 15;
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
            + " notice: !document.getElementById('notice').hidden,"
            + " plots: Object.fromEntries([...document.querySelectorAll('[data-points]')]"
            + ".map(e => [e.id, +e.getAttribute('data-points')])),"
            + " empty: [...document.querySelectorAll('svg text.empty')].map(e => e.closest('figure').id),"
            + " origin: performance.timeOrigin})";
    /** Per plot: the largest value drawn and the top tick of each y axis, and what the first draw showed. */
    static final String AXES = "JSON.stringify(Object.fromEntries([...document.querySelectorAll('figure.plot')].map(f =>"
            + " [f.id, Object.fromEntries(['data-y-max', 'data-y-top', 'data-y2-max', 'data-y2-top',"
            + " 'data-first-span-seconds', 'data-first-points'].filter(a => f.hasAttribute(a))"
            + ".map(a => [a.slice(5), +f.getAttribute(a)]))])))";

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
        int minSeconds = Integer.getInteger("ui.seconds", DEFAULT_SECONDS);
        DemoTraffic base = new DemoTraffic(vertx, "127.0.0.1", proxy.getPort(), DemoLauncher.DEFAULT_RATE,
                DemoLauncher.DEFAULT_CONCURRENCY);
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
            // the demo's healthy traffic, as bin/demo sends it: the page draws it and announces nothing
            long trafficStart = System.nanoTime();
            JsonObject state;
            long deadline = trafficStart + Duration.ofSeconds(minSeconds + 60).toNanos();
            while (true) {
                long sec = (System.nanoTime() - trafficStart) / 1_000_000_000L;
                state = state(chromium);
                assertThat(state.getBoolean("notice")).as("past-capacity notice under healthy traffic: %s", state)
                        .isFalse();
                JsonObject plots = state.getJsonObject("plots");
                boolean all = plots.fieldNames().stream()
                        .filter(id -> TIME_SERIES.contains(id) || id.equals("plot-knee"))
                        .allMatch(id -> plots.getInteger(id) > 0);
                if (all && sec >= minSeconds || System.nanoTime() > deadline) {
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

            // a page opened now draws the traffic so far at once, from the history the sidecar kept
            long trafficSeconds = (System.nanoTime() - trafficStart) / 1_000_000_000L;
            double before = state.getDouble("origin");
            chromium.navigate(page.toString());
            waitFor(chromium, s -> s.getValue("origin") != null && s.getDouble("origin") != before
                    && "true".equals(s.getString("ready")),
                    Duration.ofSeconds(30));
            JsonObject axes = new JsonObject((String) chromium.evaluate(AXES));
            System.out.printf("LivePageBrowserTest: reopened after %d s of traffic: %s%n", trafficSeconds, axes);
            assertThat(Integer.parseInt(String.valueOf(chromium.evaluate(
                    "document.body.getAttribute('data-history-samples')")))).as("samples from the sidecar")
                    .isGreaterThanOrEqualTo((int) (trafficSeconds / 5) - 1);
            for (String id : TIME_SERIES) {
                double span = axes.getJsonObject(id).getDouble("first-span-seconds", 0.0);
                // the load is sampled from the sidecar's start, before the traffic; the rest from its first request
                assertThat(span).as("seconds of history in %s on the first draw: %s", id, axes)
                        .isGreaterThanOrEqualTo(id.equals("plot-load") ? trafficSeconds
                                : trafficSeconds - HISTORY_MARGIN_SECONDS);
            }
            axes.forEach(e -> {
                JsonObject a = (JsonObject) e.getValue();
                for (String y : List.of("y", "y2")) {
                    if (a.containsKey(y + "-max")) {
                        assertThat(a.getDouble(y + "-top")).as("%s: %s axis top tick vs largest value", e.getKey(), y)
                                .isGreaterThanOrEqualTo(a.getDouble(y + "-max"));
                    }
                }
            });
            assertThat(axes.getJsonObject("plot-tpot").containsKey("y-max")).isTrue();
            assertThat(nullsAndEmptyBlocks(new JsonObject(get(liveStats)), "")).as("/q/llm").isEmpty();

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

            // the demo's incident, a surge past the engine's slots: the page says the service is past capacity while
            // it lasts, and stops saying so once the queue has drained
            vertx.runOnContext(v -> base.startIncident(Duration.ofSeconds(120)));
            JsonObject overloaded = waitFor(chromium, s -> s.getBoolean("notice"), Duration.ofSeconds(60));
            String notice = chromium.evaluate("document.getElementById('notice').textContent").toString();
            System.out.printf("LivePageBrowserTest: in the incident: %s%n", notice);
            assertThat(notice).contains("Past capacity", "requests in flight", "the engine queues",
                    "lowest SLO attainment over 1m: batch ", "default ");
            assertThat(overloaded.getBoolean("banner")).isFalse();
            Path incidentShot = Path.of("target", "live-page-incident.png");
            Files.write(incidentShot, chromium.screenshot(WIDTH));
            vertx.runOnContext(v -> base.endIncident("the test is done with it"));
            waitFor(chromium, s -> !s.getBoolean("notice"), Duration.ofSeconds(60));

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
        JsonObject sat = new JsonObject(get(liveStats)).getJsonObject("saturation");
        return sat != null && !sat.getJsonArray("bands", new JsonArray()).isEmpty();
    }

    private static String get(URL url) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(url.toURI()).timeout(Duration.ofSeconds(5))
                .build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    /**
     * Paths of nulls and of empty objects or arrays in /q/llm, the engine's view aside (its values are null where the
     * engine does not say).
     */
    static List<String> nullsAndEmptyBlocks(Object v, String at) {
        List<String> out = new java.util.ArrayList<>();
        if (v == null || v instanceof JsonObject o && o.isEmpty() || v instanceof JsonArray a && a.isEmpty()) {
            out.add(at);
        } else if (v instanceof JsonObject o) {
            o.forEach(e -> {
                if (!(at.isEmpty() && e.getKey().equals("engine"))) {
                    out.addAll(nullsAndEmptyBlocks(e.getValue(), at + "/" + e.getKey()));
                }
            });
        } else if (v instanceof JsonArray a) {
            for (int i = 0; i < a.size(); i++) {
                out.addAll(nullsAndEmptyBlocks(a.getValue(i), at + "/" + i));
            }
        }
        return out;
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
