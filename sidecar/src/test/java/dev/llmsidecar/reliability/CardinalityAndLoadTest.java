package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.live.LiveStats;
import dev.llmsidecar.measure.RequestReporter;
import dev.llmsidecar.measure.RequestSeriesRig;
import dev.llmsidecar.measure.TenantLabels;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.LlmRoutes;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Label cardinality stays capped under 100k distinct model names and SLO classes; scrapes work under 2000 streams. */
class CardinalityAndLoadTest {

    @Test
    void hundredThousandDistinctModelsAndSloClassesKeepTheSeriesCapped() {
        Map<String, String> config = Map.of("sidecar.slo.classes", "default,batch",
                "sidecar.slo.objectives.fast.ttft", "PT1S", "sidecar.slo.objectives.fast.target", "0.9");
        try (ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), config)) {
            RequestReporter reporter = f.telemetry.reporter();
            LlmOperation chat = new LlmRoutes(new JsonFactory()).match("POST", "/v1/chat/completions");
            int seriesAt10k = -1;
            for (int i = 0; i < 100_000; i++) {
                String modelName = "model-" + i;
                String model = reporter.labelSources().models().label(modelName);
                String sloClass = reporter.policy().sloClass("class-" + i);
                oneStream(reporter, chat, modelName, model, "", sloClass, i % 10 == 0);
                if (i == 9_999) {
                    seriesAt10k = seriesCount(f.scrape());
                }
            }
            Scrape s = f.scrape();
            assertThat(seriesCount(s)).as("no new series between 10k and 100k distinct names").isEqualTo(seriesAt10k);
            Set<String> models = new HashSet<>();
            Set<String> classes = new HashSet<>();
            for (String line : s.text().split("\n")) {
                collect(line, "model=\"", models);
                collect(line, "slo_class=\"", classes);
            }
            assertThat(models).hasSizeLessThanOrEqualTo(52).contains("other");
            assertThat(classes).containsExactlyInAnyOrder("default");
            assertThat(LiveStats.render(f.telemetry).getJsonObject("models").size()).isLessThanOrEqualTo(52);
            assertThat(s.sum("llm_sidecar_requests_total")).isEqualTo(100_000);
        }
    }

    /** Every series that can carry a tenant does (the worst case), and 100k distinct tenants arrive. */
    @Test
    void hundredThousandDistinctTenantsKeepTheSeriesCapped() {
        String every = String.join(",", dev.llmsidecar.metrics.Contract.all().stream()
                .filter(x -> x.labels().contains(dev.llmsidecar.metrics.Label.TENANT))
                .map(dev.llmsidecar.metrics.Series::name).toList());
        Map<String, String> config = Map.of("sidecar.tenants.source", "header", "sidecar.tenants.max", "20",
                "sidecar.tenants.series", every);
        try (ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), config)) {
            RequestReporter reporter = f.telemetry.reporter();
            LlmOperation chat = new LlmRoutes(new JsonFactory()).match("POST", "/v1/chat/completions");
            int seriesAt10k = -1;
            for (int i = 0; i < 100_000; i++) {
                String name = "tenant-" + i;
                // twice each, as the proxy does it: a tenant gets a value of its own after its first 2xx
                for (int twice = 0; twice < 2; twice++) {
                    TenantLabels tenants = reporter.labelSources().tenants();
                    String who = tenants.tenantOf(h -> h.equals("x-tenant") ? name : null);
                    oneStream(reporter, chat, "sim-llama-8b", "sim-llama-8b", tenants.label(who), "default",
                            i % 10 == 0);
                    tenants.admit(who);
                }
                if (i == 9_999) {
                    seriesAt10k = seriesCount(f.scrape());
                }
            }
            Scrape s = f.scrape();
            assertThat(seriesCount(s)).as("no new series between 10k and 100k distinct tenants").isEqualTo(seriesAt10k);
            Set<String> tenants = new HashSet<>();
            for (String line : s.text().split("\n")) {
                collect(line, "tenant=\"", tenants);
            }
            assertThat(tenants).hasSize(21).contains("other", "tenant-0", "tenant-19").doesNotContain("tenant-20");
            assertThat(s.sum("llm_sidecar_requests_total")).isEqualTo(200_000);
            assertThat(s.sum("llm_sidecar_requests_total", "tenant", "other")).isEqualTo(200_000 - 20);
            assertThat(s.has("gen_ai_server_time_to_first_token_seconds_count", "tenant", "other")).isTrue();
        }
    }

    @Test
    void scrapesWorkWhileTwoThousandStreamsRun() throws Exception {
        EngineBehaviour engine = EngineBehaviour.defaults().withSlots(4096)
                .withTiming(Duration.ofMillis(10), Duration.ofMillis(100)).withFixedCreated(1_700_000_000L);
        try (ProxyFixture f = new ProxyFixture(engine, Map.of())) {
            HttpClient client = f.vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1"),
                    new PoolOptions().setHttp1MaxSize(2100).setMaxWaitQueueSize(-1));
            String body = "{\"model\":\"sim-llama-8b\",\"stream\":true,\"max_tokens\":15,\"messages\":[]}";
            int n = 2000;
            List<Future<String>> results = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Promise<String> p = Promise.promise();
                results.add(p.future());
                RequestOptions o = new RequestOptions().setPort(f.proxyPort).setMethod(HttpMethod.POST)
                        .setURI("/v1/chat/completions").putHeader("content-type", "application/json")
                        .setTimeout(120_000);
                f.vertx.runOnContext(v -> client.request(o).compose(r -> r.send(Buffer.buffer(body)))
                        .compose(r -> r.body()).map(Buffer::toString).onComplete(p));
            }
            double maxInFlight = 0;
            int scrapes = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!results.stream().allMatch(Future::isComplete) && System.nanoTime() < deadline) {
                Scrape s = f.scrape();
                scrapes++;
                maxInFlight = Math.max(maxInFlight, s.sum("llm_sidecar_requests_in_flight"));
                Thread.sleep(100);
            }
            int complete = 0;
            for (Future<String> r : results) {
                assertThat(r.succeeded()).as(String.valueOf(r.cause())).isTrue();
                String text = r.result();
                assertThat(text).endsWith("data: [DONE]\n\n").doesNotContain("\"usage\"");
                complete++;
            }
            assertThat(complete).isEqualTo(n);
            assertThat(scrapes).isGreaterThan(3);
            assertThat(maxInFlight).as("scrapes ran while most streams were open").isGreaterThanOrEqualTo(1000);
            Scrape end = RawUpstreamFaultsTest.waitForOutcome(f, "ok");
            for (int i = 0; i < 200 && end.sum("llm_sidecar_requests_total", "outcome", "ok") < n; i++) {
                Thread.sleep(20);
                end = f.scrape();
            }
            assertThat(end.sum("llm_sidecar_requests_total", "outcome", "ok")).isEqualTo(n);
            assertThat(end.sum("llm_sidecar_requests_in_flight")).isZero();
            ProxyFixture.await(client.close());
        }
    }

    /** One streamed request with two tokens, reported as the proxy does; cancelled by the client when asked. */
    static void oneStream(RequestReporter reporter, LlmOperation chat, String modelName, String model, String tenant,
            String sloClass, boolean cancelled) {
        var live = reporter.started(RequestSeriesRig.labels(reporter.labelSources(), model, chat, tenant, sloClass),
                true);
        long t = System.nanoTime();
        RequestTimeline timeline = new RequestTimeline(t, true, live);
        timeline.onUpstreamHeaders(t + 1_000_000);
        timeline.onDataChunk(t + 2_000_000);
        timeline.onTokenChunk(t + 3_000_000, false, -1);
        timeline.onTokenChunk(t + 4_000_000, false, -1);
        reporter.finished(live, modelName, null,
                timeline.finish(t + 5_000_000, cancelled ? Outcome.CLIENT_CANCELLED : Outcome.OK, 200));
    }

    static int seriesCount(Scrape s) {
        int n = 0;
        for (String line : s.text().split("\n")) {
            if (!line.isEmpty() && !line.startsWith("#")) {
                n++;
            }
        }
        return n;
    }

    static void collect(String line, String key, Set<String> into) {
        int i = line.indexOf(key);
        if (i >= 0 && !line.startsWith("#")) {
            int start = i + key.length();
            into.add(line.substring(start, line.indexOf('"', start)));
        }
    }
}
