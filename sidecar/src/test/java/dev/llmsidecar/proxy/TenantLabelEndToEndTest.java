package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The tenant label through the proxy: where it comes from, which series carry it, and that no key leaks. */
class TenantLabelEndToEndTest {

    static final String BODY = "{\"model\":\"sim-llama-8b\",\"stream\":true,\"max_tokens\":4,\"messages\":[]}";
    static final String KEY_A = "sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    static final String KEY_B = "sk-proj-BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";

    @Test
    void apiKeysBecomeHashedTenantsOnTheCountersOnly() {
        try (ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(),
                Map.of("sidecar.tenants.source", "api-key-hash", "sidecar.slo.objectives.chat.ttft", "PT5S"))) {
            for (int i = 0; i < 3; i++) {
                assertThat(f.post(f.proxyPort, "/v1/chat/completions", BODY,
                        Map.of("Authorization", "Bearer " + KEY_A)).status()).isEqualTo(200);
            }
            for (int i = 0; i < 2; i++) {
                assertThat(f.post(f.proxyPort, "/v1/chat/completions", BODY, Map.of("x-api-key", KEY_B)).status())
                        .isEqualTo(200);
            }
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", BODY, Map.of()).status()).isEqualTo(200);
            Scrape s = waitForRequests(f, 6);
            String a = dev.llmsidecar.measure.TenantLabels.keyHash(KEY_A);
            String b = dev.llmsidecar.measure.TenantLabels.keyHash(KEY_B);
            // a tenant has a value of its own from its first 2xx on: each key's first request is "other"
            assertThat(s.sum("llm_sidecar_requests_total", "tenant", a)).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_requests_total", "tenant", b)).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_requests_total", "tenant", "other")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_requests_total", "tenant", "unknown")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_tokens_total", "tenant", a, "token_type", "output")).isEqualTo(8);
            assertThat(s.sum("llm_sidecar_slo_requests_total", "tenant", a)).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_slo_good_output_tokens_total", "tenant", b)).isEqualTo(4);
            // the latency histograms stay without it unless named (many buckets per tenant)
            assertThat(s.text()).contains("gen_ai_server_time_to_first_token_seconds_count{");
            assertThat(s.text().lines().filter(l -> l.startsWith("gen_ai_server_time_to_first_token"))
                    .noneMatch(l -> l.contains("tenant="))).isTrue();
            assertThat(s.text()).doesNotContain("AAAAAAAA").doesNotContain("BBBBBBBB");
        }
    }

    @Test
    void aHeaderTenantOnAChosenHistogram() {
        try (ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of("sidecar.tenants.source", "header",
                "sidecar.tenants.header", "OpenAI-Organization", "sidecar.tenants.allowed", "org-gold",
                "sidecar.tenants.series", "gen_ai.server.time_to_first_token,llm_sidecar.requests"))) {
            f.post(f.proxyPort, "/v1/chat/completions", BODY, Map.of("OpenAI-Organization", "org-gold"));
            f.post(f.proxyPort, "/v1/chat/completions", BODY, Map.of("OpenAI-Organization", "org-free"));
            Scrape s = waitForRequests(f, 2);
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count", "tenant", "org-gold")).isEqualTo(1);
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count", "tenant", "other")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_requests_total", "tenant", "org-gold")).isEqualTo(1);
            assertThat(s.text().lines().filter(l -> l.startsWith("llm_sidecar_tokens_total"))
                    .noneMatch(l -> l.contains("tenant="))).as("not chosen: no tenant").isTrue();
        }
    }

    @Test
    void aSeriesThatCannotCarryATenantIsAClearStartupError() {
        assertThatThrownBy(() -> new ProxyFixture(EngineBehaviour.defaults(), Map.of("sidecar.tenants.source",
                "header", "sidecar.tenants.series", "llm_sidecar.requests,llm_sidecar.chunk_write_delay")).close())
                .hasMessageContaining("[llm_sidecar.chunk_write_delay] cannot carry a tenant label");
    }

    static Scrape waitForRequests(ProxyFixture f, int n) {
        Scrape s = f.scrape();
        for (int i = 0; i < 200 && s.sum("llm_sidecar_requests_total") < n; i++) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            s = f.scrape();
        }
        return s;
    }
}
