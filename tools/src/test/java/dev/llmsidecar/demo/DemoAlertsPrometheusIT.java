package dev.llmsidecar.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.ops.OpsTools;
import dev.llmsidecar.ops.PrometheusServer;
import dev.llmsidecar.sim.SimulatedEngine;
import dev.llmsidecar.testkit.Processes;
import dev.llmsidecar.testkit.Repo;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo as bin/demo runs it (the packaged sidecar with the demo's settings, the demo's simulated engine and its
 * traffic at the default rate), scraped by a real Prometheus (Debian's binary) configured as the README says
 * (deploy/prometheus/demo.yml, pointed at this sidecar), which evaluates the shipped deploy/prometheus/rules.yml
 * unchanged. Once the sidecar is scraped and no alert is active:
 * <ol>
 * <li>healthy: for {@link #HEALTHY} no alert of the rules fires, none but the error-budget tickets is even pending
 * (their windows are 1 and 3 days and their {@code for} 15 minutes and 1 hour: over the first few dozen requests one
 * slow prefill is more than 5% of them), and every objective's 5-minute attainment is at least 0.95;</li>
 * <li>an incident, started as a user does (POST /demo/incident on the engine port), pushes past the knee:
 * {@code LLMSidecarSLOOutage} for objective {@code interactive} goes pending and then fires (its {@code for: 1m}),
 * while objective {@code batch} (30 s end to end) stays met and pages nobody; the incident is ended (DELETE) once the
 * page fires;</li>
 * <li>after it: the outage page clears once its 5-minute window has moved past the incident, and nothing fires.</li>
 * </ol>
 * What is scaled: Prometheus evaluates every 2 s (the rules' windows and {@code for} times are as shipped), the
 * healthy phase is shorter than the 10 minutes (the README's measured run covers those), and the
 * incident lasts until the page fires. Wall time about 7 minutes; every wait is bounded. The alert timeline is printed
 * and written to target/demo-alerts.txt.
 */
class DemoAlertsPrometheusIT {

    static final Duration HEALTHY = Duration.ofSeconds(100);
    static final Duration UNTIL_PENDING = Duration.ofSeconds(150);
    static final Duration UNTIL_FIRING = Duration.ofSeconds(120);
    static final Duration UNTIL_CLEAR = Duration.ofSeconds(330);
    static final String OUTAGE = "LLMSidecarSLOOutage";
    /** Tickets that may be pending while healthy (see the class comment); nothing may fire. */
    static final java.util.Set<String> MAY_BE_PENDING_WHEN_HEALTHY = java.util.Set.of("LLMSidecarSLOBudgetBurn",
            "LLMSidecarSLOBudgetBurnDay");
    static final Path RULES = Repo.root().resolve("deploy/prometheus/rules.yml");
    static final Path DEMO_CONFIG = Repo.root().resolve("deploy/prometheus/demo.yml");

    @TempDir
    Path tmp;

    final List<String> timeline = new ArrayList<>();
    long t0;

    @Test
    void theDemoIsHealthyUntilAnIncidentIsAskedForWhichPagesAndThenClears() throws Exception {
        Path prometheus = OpsTools.require("prometheus", "apt-get install prometheus");
        Vertx vertx = Vertx.vertx();
        SimulatedEngine engine = new SimulatedEngine(vertx, DemoLauncher.behaviour());
        int enginePort = engine.start("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        DemoTraffic traffic = null;
        try (Processes.Sidecar sidecar = new Processes.Sidecar("http://127.0.0.1:" + enginePort, Map.of(),
                DemoLauncher.SIDECAR_SETTINGS)) {
            // the README's Prometheus for the demo, pointed at this sidecar, evaluating every 2 s (its scrapes every 5 s
            // with a 4 s timeout, as shipped: a loaded 2-core machine can take over 2 s to answer one)
            String config = Files.readString(DEMO_CONFIG)
                    .replace("127.0.0.1:9000", "127.0.0.1:" + sidecar.managementPort)
                    .replace("  - rules.yml", "  - " + RULES)
                    .replaceAll("evaluation_interval: \\d+s", "evaluation_interval: 2s");
            assertThat(config).contains(RULES.toString(), ":" + sidecar.managementPort + "'", "evaluation_interval: 2s");
            try (PrometheusServer prom = PrometheusServer.start(prometheus, tmp, config)) {
                traffic = new DemoTraffic(vertx, "127.0.0.1", sidecar.proxyPort, DemoLauncher.DEFAULT_RATE,
                        DemoLauncher.DEFAULT_CONCURRENCY, line -> note("demo: " + line));
                DemoControl.mount(engine, traffic);
                URI control = URI.create("http://127.0.0.1:" + enginePort + DemoControl.PATH);
                t0 = System.nanoTime();
                // before any traffic: the sidecar scraped, and the rules evaluated since (no "targets missing")
                long scraped = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!(perObjective(prom, "up{job=\"llm-sidecar\"}").containsValue(1.0)
                        && alerts(prom, a -> true).isEmpty())) {
                    if (System.nanoTime() > scraped) {
                        throw new AssertionError("no scrape of the sidecar, or alerts before any traffic, in 60 s: "
                                + prom.api("/api/v1/alerts") + "\n" + prom.log());
                    }
                    Thread.sleep(500);
                }
                note("the sidecar is scraped and no alert is active");
                traffic.start();
                note("healthy traffic started");

                // 1. healthy: nothing pending, nothing firing, at any evaluation
                long healthyEnd = System.nanoTime() + HEALTHY.toNanos();
                List<JsonObject> healthyAlerts = new ArrayList<>();
                java.util.Set<String> seen = new java.util.HashSet<>();
                while (System.nanoTime() < healthyEnd) {
                    List<JsonObject> active = alerts(prom, a -> true);
                    for (JsonObject a : active) {
                        String name = names(List.of(a)).first();
                        if (seen.add(name)) {
                            note("healthy, active: " + name + " " + a.getJsonObject("annotations").getString("summary"));
                        }
                        if (!(MAY_BE_PENDING_WHEN_HEALTHY.contains(a.getJsonObject("labels").getString("alertname"))
                                && "pending".equals(a.getString("state")))) {
                            healthyAlerts.add(a);
                        }
                    }
                    Thread.sleep(2000);
                }
                Map<String, Double> healthy = attainment(prom);
                note("healthy phase over; 5m attainment per objective " + healthy + ", requests "
                        + perObjective(prom, "llm_sidecar:slo_objective_requests:increase5m"));
                assertThat(healthyAlerts).as("alerts firing, or pending but for the budget tickets, under healthy demo traffic").isEmpty();
                assertThat(healthy).as("5m attainment per objective, healthy").containsKeys("interactive", "batch")
                        .allSatisfy((objective, a) -> assertThat(a).as(objective).isGreaterThanOrEqualTo(0.95));
                assertThat(perObjective(prom, "llm_sidecar:slo_objective_requests:increase5m"))
                        .allSatisfy((objective, n) -> assertThat(n).as(objective + " requests").isGreaterThan(20));

                // 2. the incident, through the control a user has
                JsonObject started = send(control, "POST", "?seconds=" + DemoControl.MAX_SECONDS);
                assertThat(started.getBoolean("incident")).as(started.encode()).isTrue();
                JsonObject pending = waitForOutage(prom, s -> true, UNTIL_PENDING);
                note(OUTAGE + " " + pending.getString("state") + ", value " + pending.getString("value"));
                JsonObject firing = waitForOutage(prom, s -> s.equals("firing"), UNTIL_FIRING);
                note(OUTAGE + " firing since " + firing.getString("activeAt") + "; all active: " + names(alerts(prom,
                        a -> true)));
                assertThat(firing.getJsonObject("labels").getString("severity")).isEqualTo("critical");
                List<JsonObject> batchAlerts = alerts(prom, a -> "batch".equals(a.getJsonObject("labels")
                        .getString("objective")));
                Map<String, Double> during = attainment(prom);
                JsonObject ended = send(control, "DELETE", "");
                assertThat(ended.getBoolean("incident")).isFalse();
                note("incident ended; 5m attainment per objective " + during);
                assertThat(batchAlerts).as("objective batch (30 s end to end) is met through the incident").isEmpty();
                assertThat(during.get("interactive")).as("interactive attainment in the incident").isLessThan(0.5);
                assertThat(during.get("batch")).as("batch attainment in the incident").isGreaterThanOrEqualTo(0.95);

                // 3. after it: the page clears, nothing fires
                long clearDeadline = System.nanoTime() + UNTIL_CLEAR.toNanos();
                List<JsonObject> outage = alerts(prom, a -> OUTAGE.equals(a.getJsonObject("labels").getString("alertname")));
                while (!outage.isEmpty() && System.nanoTime() < clearDeadline) {
                    Thread.sleep(2000);
                    outage = alerts(prom, a -> OUTAGE.equals(a.getJsonObject("labels").getString("alertname")));
                }
                List<JsonObject> after = alerts(prom, a -> true);
                note(OUTAGE + (outage.isEmpty() ? " cleared" : " still active") + "; 5m attainment per objective "
                        + attainment(prom) + "; still active: " + names(after));
                assertThat(outage).as(OUTAGE + " after the incident, within " + UNTIL_CLEAR).isEmpty();
                assertThat(after).as("firing after the incident").noneMatch(a -> "firing".equals(a.getString("state")));
                assertThat(sidecar.running.process.isAlive()).isTrue();
            } finally {
                String report = String.join("\n", timeline) + "\n";
                System.out.print(report);
                Path out = Path.of("target", "demo-alerts.txt");
                Files.createDirectories(out.getParent());
                Files.writeString(out, report);
            }
        } finally {
            if (traffic != null) {
                DemoTraffic t = traffic;
                vertx.executeBlocking(() -> {
                    t.stop();
                    return null;
                }).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            }
            engine.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private void note(String line) {
        String stamped = String.format("+%3ds %s", (System.nanoTime() - t0) / 1_000_000_000L, line);
        synchronized (timeline) {
            timeline.add(stamped);
        }
        System.out.println("DemoAlertsPrometheusIT " + stamped);
    }

    /** The outage alert of objective interactive in a state {@code state} accepts; fails after {@code timeout}. */
    private JsonObject waitForOutage(PrometheusServer prom, Predicate<String> state, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<JsonObject> found = alerts(prom, a -> OUTAGE.equals(a.getJsonObject("labels").getString("alertname"))
                    && "interactive".equals(a.getJsonObject("labels").getString("objective"))
                    && state.test(a.getString("state")));
            if (!found.isEmpty()) {
                return found.get(0);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(OUTAGE + "{objective=interactive} not in the state asked for within " + timeout
                        + "; alerts " + prom.api("/api/v1/alerts") + "; 5m attainment " + attainment(prom)
                        + "; timeline " + timeline);
            }
            Thread.sleep(1000);
        }
    }

    /** Alerts pending or firing that {@code filter} accepts. */
    private static List<JsonObject> alerts(PrometheusServer prom, Predicate<JsonObject> filter) {
        JsonArray all = prom.api("/api/v1/alerts").getJsonObject("data").getJsonArray("alerts");
        List<JsonObject> out = new ArrayList<>();
        for (Object a : all) {
            if (filter.test((JsonObject) a)) {
                out.add((JsonObject) a);
            }
        }
        return out;
    }

    private static TreeSet<String> names(List<JsonObject> alerts) {
        TreeSet<String> out = new TreeSet<>();
        alerts.forEach(a -> out.add(a.getJsonObject("labels").getString("alertname") + "{"
                + a.getJsonObject("labels").getString("objective", "") + "}:" + a.getString("state")));
        return out;
    }

    private static Map<String, Double> attainment(PrometheusServer prom) {
        return perObjective(prom, "llm_sidecar:slo_objective_attainment:ratio_rate5m");
    }

    private static Map<String, Double> perObjective(PrometheusServer prom, String query) {
        Map<String, Double> out = new LinkedHashMap<>();
        JsonArray result = PrometheusServer.result(prom.query(query));
        if (result != null) {
            for (Object r : result) {
                JsonObject series = (JsonObject) r;
                out.put(series.getJsonObject("metric").getString("objective", ""),
                        Double.parseDouble(series.getJsonArray("value").getString(1)));
            }
        }
        return out;
    }

    private static JsonObject send(URI control, String method, String query) throws Exception {
        HttpResponse<String> r = Processes.HTTP.send(HttpRequest.newBuilder(URI.create(control + query))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(method + " " + control + query + ": " + r.body()).isEqualTo(200);
        return new JsonObject(r.body());
    }
}
