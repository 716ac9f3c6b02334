package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * SLO targets declared per request (x-llm-d-slo-ttft-ms) over real sockets: attainment per declared class equals an
 * independent count from the client's own timings, a flood of distinct values stays within the buckets, and the
 * priority becomes a label.
 */
class DeclaredSloEndToEndTest {

    static final EngineBehaviour ENGINE = EngineBehaviour.defaults()
            .withTiming(Duration.ofMillis(20), Duration.ofMillis(5)).withOutputTokens(4);
    /** Every caller trusted to declare: these tests are about what a declaration does (trust: its own test). */
    static final Map<String, String> CONFIG = Map.of(
            "sidecar.slo.declared.enabled", "true",
            "sidecar.slo.declared.trust-all", "true",
            "sidecar.slo.objectives.interactive.ttft", "PT0.2S",
            "sidecar.priority.enabled", "true",
            "sidecar.priority.header", "x-request-priority");
    static final String BODY = "{\"model\":\"sim-llama-8b\",\"stream\":true,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}";
    static final String WITH_PRIORITY = "{\"model\":\"sim-llama-8b\",\"stream\":true,\"priority\":1,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}";

    record Sent(int declaredMs, Future<ProxyFixture.Received> response) {
    }

    static Future<ProxyFixture.Received> send(ProxyFixture f, String body, Map<String, String> headers) {
        return f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", Buffer.buffer(body), headers);
    }

    /** A read carrying a token: non-empty content (the role prelude's content is empty). */
    static final Pattern TOKEN = Pattern.compile("\"content\":\"[^\"]");

    @Test
    void attainmentPerDeclaredClassMatchesTheClientsOwnCount() {
        try (ProxyFixture f = new ProxyFixture(ENGINE, CONFIG)) {
            GoodputEndToEndTest.warmUp(f);
            // three declared targets (buckets 500, 1000 and 2000 ms); engine TTFTs on both sides of each, at least
            // 100 ms from it, so that the client's and the sidecar's clocks (a loopback hop apart) judge alike
            int[] declared = {300, 700, 1200};
            int[] engineTtft = {100, 450, 550, 900, 1050, 1450};
            List<Sent> sent = new ArrayList<>();
            for (int d : declared) {
                for (int t : engineTtft) {
                    sent.add(new Sent(d, send(f, BODY, Map.of("x-llm-d-slo-ttft-ms", Integer.toString(d),
                            "x-sim-ttft-ms", Integer.toString(t)))));
                }
            }
            // undeclared: judged by the configured objective (200 ms); one good, one not
            sent.add(new Sent(-1, send(f, BODY, Map.of("x-sim-ttft-ms", "20"))));
            sent.add(new Sent(-1, send(f, BODY, Map.of("x-sim-ttft-ms", "450"))));
            Map<Integer, int[]> expected = new HashMap<>(); // declared ms -> {requests, good} by the client's clock
            for (Sent s : sent) {
                ProxyFixture.Received r = ProxyFixture.await(s.response());
                assertThat(r.status()).isEqualTo(200);
                long first = r.firstRead(read -> TOKEN.matcher(read).find());
                assertThat(first).as("a token reached the client").isPositive();
                double clientTtftMs = (first - r.sentNanos()) / 1e6;
                int limit = s.declaredMs() < 0 ? 200 : s.declaredMs();
                int[] count = expected.computeIfAbsent(s.declaredMs(), k -> new int[2]);
                count[0]++;
                if (clientTtftMs <= limit) {
                    count[1]++;
                }
            }
            Scrape s = f.settledScrape();
            String[] classes = {"declared:ttft<=500ms", "declared:ttft<=1000ms", "declared:ttft<=2000ms"};
            for (int i = 0; i < declared.length; i++) {
                int[] count = expected.get(declared[i]);
                String[] objective = {"model", "sim-llama-8b", "objective", classes[i], "slo_class", "declared"};
                assertThat(s.sum("llm_sidecar_slo_objective_requests_total", objective)).as(classes[i])
                        .isEqualTo(count[0]);
                assertThat(s.sum("llm_sidecar_slo_objective_good_requests_total", objective))
                        .as("%s: good by the client's own clock", classes[i]).isEqualTo(count[1]);
                assertThat(s.sum("llm_sidecar_slo_violations_total", "objective", classes[i], "criterion", "ttft"))
                        .isEqualTo(count[0] - count[1]);
            }
            // by the schedule: 300 ms is met by the 100 ms engine only, 700 by 100/450/550, 1200 by all but 1450
            assertThat(new int[] {expected.get(300)[1], expected.get(700)[1], expected.get(1200)[1]})
                    .containsExactly(1, 3, 5);
            assertThat(s.sum("llm_sidecar_slo_requests_total", "slo_class", "declared")).isEqualTo(18);
            assertThat(s.sum("llm_sidecar_slo_good_requests_total", "slo_class", "declared")).isEqualTo(9);
            assertThat(s.sum("llm_sidecar_slo_objective_requests_total", "objective", "interactive", "model",
                    "sim-llama-8b")).as("undeclared requests keep the configured objective").isEqualTo(2);
            assertThat(s.sum("llm_sidecar_slo_objective_good_requests_total", "objective", "interactive", "model",
                    "sim-llama-8b")).isEqualTo(expected.get(-1)[1]).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_slo_declared_values_total", "criterion", "ttft", "handling", "accepted"))
                    .isEqualTo(18);
            assertThat(s.sum("llm_sidecar_slo_target_ratio", "objective", "declared:ttft<=1000ms")).isEqualTo(0.99);
            assertThat(s.has("llm_sidecar_slo_target_ratio", "objective", "declared:tpot<=50ms")).isTrue();
        }
    }

    @Test
    void aFloodOfDistinctDeclaredValuesCreatesNoMoreSeriesThanTheBuckets() {
        try (ProxyFixture f = new ProxyFixture(ENGINE, CONFIG)) {
            Random random = new Random(36);
            List<Future<ProxyFixture.Received>> all = new ArrayList<>();
            int unparseable = 0;
            for (int i = 0; i < 300; i++) {
                String ttft = random.nextInt(10) == 0 ? "fast" + i : Integer.toString(1 + random.nextInt(1_000_000));
                unparseable += ttft.startsWith("fast") ? 1 : 0;
                all.add(send(f, BODY, Map.of("x-llm-d-slo-ttft-ms", ttft,
                        "x-llm-d-slo-tpot-ms", (random.nextInt(100_000) + 1) + "." + random.nextInt(1000))));
                if (all.size() == 50) {
                    all.forEach(ProxyFixture::await); // at most 50 open at once
                    all.clear();
                }
            }
            all.forEach(ProxyFixture::await);
            Scrape s = f.settledScrape();
            Set<String> objectives = new HashSet<>();
            Set<Map<String, String>> series = new HashSet<>();
            for (Scrape.Sample sample : s.samples("llm_sidecar_slo_objective_requests_total")) {
                objectives.add(sample.labels().get("objective"));
                series.add(sample.labels());
            }
            assertThat(objectives).as("8 TTFT and 6 TPOT buckets").hasSizeLessThanOrEqualTo(14)
                    .allMatch(o -> o.startsWith("declared:"));
            assertThat(series).hasSizeLessThanOrEqualTo(14);
            assertThat(s.samples("llm_sidecar_slo_violations_total")).hasSizeLessThanOrEqualTo(14 * 2);
            assertThat(s.sum("llm_sidecar_slo_declared_values_total", "criterion", "ttft", "handling", "unparseable"))
                    .isEqualTo(unparseable);
            assertThat(s.sum("llm_sidecar_slo_declared_values_total", "criterion", "tpot")).isEqualTo(300);
        }
    }

    @Test
    void thePriorityFromTheBodyOrTheHeaderLabelsTheSloCountersAndHistograms() {
        try (ProxyFixture f = new ProxyFixture(ENGINE, CONFIG)) {
            List<Future<ProxyFixture.Received>> all = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                all.add(send(f, WITH_PRIORITY, Map.of("x-request-priority", "2"))); // the body's wins: 1
            }
            all.add(send(f, BODY, Map.of("x-request-priority", "2")));
            all.add(send(f, BODY, Map.of("x-request-priority", "9000")));
            all.add(send(f, BODY, Map.of()));
            all.forEach(r -> assertThat(ProxyFixture.await(r).status()).isEqualTo(200));
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_slo_requests_total", "priority", "1")).isEqualTo(3);
            assertThat(s.sum("llm_sidecar_slo_requests_total", "priority", "2")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_slo_requests_total", "priority", "other")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_slo_requests_total", "priority", "none")).isEqualTo(1);
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count", "model", "sim-llama-8b",
                    "priority", "1")).isEqualTo(3);
            assertThat(s.sum("gen_ai_server_time_per_output_token_seconds_count", "priority", "1")).isEqualTo(3);
            assertThat(s.sum("gen_ai_server_request_duration_seconds_count", "priority", "none")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_slo_objective_requests_total", "objective", "interactive", "priority",
                    "1")).isEqualTo(3);
            assertThat(s.has("llm_sidecar_requests_total", "priority", "1")).as("not on the series not chosen")
                    .isFalse();
        }
        try (ProxyFixture f = new ProxyFixture(ENGINE, Map.of())) {
            assertThat(ProxyFixture.await(send(f, WITH_PRIORITY, Map.of())).status()).isEqualTo(200);
            Scrape s = f.settledScrape();
            assertThat(s.text()).as("off by default: no series carries the label").doesNotContain("priority=");
        }
    }

    /**
     * Only a trusted caller declares (issue 42): a declaration without the gateway's token, or with a wrong one, is
     * refused and counted (handling="refused") and the configured objective judges the request; with the token it
     * judges the request; and the token never reaches the engine. A new token in the file is honoured without a restart.
     */
    @Test
    void onlyACallerWithTheGatewaysTokenDeclaresAndTheTokenNeverGoesUpstream(@org.junit.jupiter.api.io.TempDir
            java.nio.file.Path dir) throws Exception {
        java.nio.file.Path tokenFile = java.nio.file.Files.writeString(dir.resolve("trust"), "gateway-token-1\n");
        List<String> upstreamHeads = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (dev.llmsidecar.testkit.RawUpstream upstream = new dev.llmsidecar.testkit.RawUpstream((r, sock, out) -> {
            upstreamHeads.add(r.head());
            dev.llmsidecar.testkit.RawUpstream.writeHead(out, "text/event-stream");
            dev.llmsidecar.testkit.RawUpstream.writeChunk(out, ("data: {\"model\":\"sim-llama-8b\",\"choices\":[{"
                    + "\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
            dev.llmsidecar.testkit.RawUpstream.writeEnd(out);
        });
                ProxyFixture f = new ProxyFixture(ENGINE, Map.of("sidecar.slo.declared.enabled", "true",
                        "sidecar.slo.objectives.interactive.ttft", "PT0.2S",
                        "sidecar.slo.declared.trust-token-file", tokenFile.toString()), upstream.url())) {
            String trust = "x-llm-sidecar-declared-trust";
            assertThat(ProxyFixture.await(send(f, BODY, Map.of("x-llm-d-slo-ttft-ms", "500"))).status())
                    .isEqualTo(200);
            assertThat(ProxyFixture.await(send(f, BODY, Map.of("x-llm-d-slo-ttft-ms", "500", "x-llm-d-slo-tpot-ms",
                    "20", trust, "gateway-token-2"))).status()).isEqualTo(200);
            assertThat(ProxyFixture.await(send(f, BODY, Map.of("x-llm-d-slo-ttft-ms", "500", trust,
                    "gateway-token-1"))).status()).isEqualTo(200);
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_slo_declared_values_total", "criterion", "ttft", "handling", "refused"))
                    .isEqualTo(2);
            assertThat(s.sum("llm_sidecar_slo_declared_values_total", "criterion", "tpot", "handling", "refused"))
                    .isEqualTo(1);
            assertThat(s.sum("llm_sidecar_slo_declared_values_total", "criterion", "ttft", "handling", "accepted"))
                    .isEqualTo(1);
            assertThat(s.sum("llm_sidecar_slo_requests_total", "slo_class", "declared")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_slo_objective_requests_total", "objective", "interactive"))
                    .as("the refused ones are judged by the configured objective").isEqualTo(2);
            assertThat(upstreamHeads).hasSize(3).allSatisfy(head -> assertThat(head.toLowerCase(java.util.Locale.ROOT))
                    .doesNotContain(trust).doesNotContain("gateway-token"));
            // rotated: the new token is taken within a second or two, the old one refused
            java.nio.file.Files.writeString(tokenFile, "gateway-token-2\n");
            long deadline = System.nanoTime() + 10_000_000_000L;
            double accepted = 1;
            while (accepted < 2 && System.nanoTime() < deadline) {
                Thread.sleep(200);
                assertThat(ProxyFixture.await(send(f, BODY, Map.of("x-llm-d-slo-ttft-ms", "500", trust,
                        "gateway-token-2"))).status()).isEqualTo(200);
                accepted = f.settledScrape().sum("llm_sidecar_slo_declared_values_total", "criterion", "ttft",
                        "handling", "accepted");
            }
            assertThat(accepted).isEqualTo(2);
            double refused = f.settledScrape().sum("llm_sidecar_slo_declared_values_total", "criterion", "ttft",
                    "handling", "refused");
            assertThat(ProxyFixture.await(send(f, BODY, Map.of("x-llm-d-slo-ttft-ms", "500", trust,
                    "gateway-token-1"))).status()).isEqualTo(200);
            assertThat(f.settledScrape().sum("llm_sidecar_slo_declared_values_total", "criterion", "ttft", "handling",
                    "refused")).isEqualTo(refused + 1);
        }
    }
}
