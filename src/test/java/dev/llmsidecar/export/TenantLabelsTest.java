package dev.llmsidecar.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmsidecar.support.TestConfigs;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** Where a tenant label comes from, and that it stays bounded and never carries an API key. */
class TenantLabelsTest {

    static TenantLabels tenants(Map<String, String> config) {
        return new TenantLabels(TestConfigs.sidecar("http://127.0.0.1:1", config).tenants());
    }

    static UnaryOperator<String> headers(String... nameValue) {
        Map<String, String> h = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (int i = 0; i < nameValue.length; i += 2) {
            h.put(nameValue[i], nameValue[i + 1]);
        }
        return h::get;
    }

    @Test
    void offByDefault() {
        TenantLabels t = tenants(Map.of());
        assertThat(t.enabled()).isFalse();
        assertThat(t.label(headers("x-tenant", "acme"))).isEqualTo(TenantLabels.NONE);
    }

    @Test
    void fromAHeaderCappedWithOtherAndUnknown() {
        TenantLabels t = tenants(Map.of("sidecar.tenants.source", "header", "sidecar.tenants.header",
                "OpenAI-Project", "sidecar.tenants.max", "2"));
        assertThat(t.label(headers("openai-project", "proj_a"))).isEqualTo("proj_a");
        assertThat(t.label(headers("OpenAI-Project", "proj_b"))).isEqualTo("proj_b");
        assertThat(t.label(headers("OpenAI-Project", "proj_c"))).isEqualTo("other");
        assertThat(t.label(headers("OpenAI-Project", "proj_a"))).as("admitted values stay").isEqualTo("proj_a");
        assertThat(t.label(headers())).isEqualTo("unknown");
        assertThat(t.label(headers("OpenAI-Project", "x".repeat(200)))).isEqualTo("other");
    }

    @Test
    void anAllowlistAdmitsNobodyElse() {
        TenantLabels t = tenants(Map.of("sidecar.tenants.source", "header", "sidecar.tenants.allowed", "gold,silver"));
        assertThat(t.label(headers("x-tenant", "mallory"))).isEqualTo("other");
        assertThat(t.label(headers("x-tenant", "silver"))).isEqualTo("silver");
    }

    @Test
    void anApiKeyBecomesAShortStableHashAndNeverItself() {
        TenantLabels t = tenants(Map.of("sidecar.tenants.source", "api-key-hash"));
        String key = "sk-live-0123456789abcdef0123456789abcdef";
        String bearer = t.label(headers("Authorization", "Bearer " + key));
        assertThat(bearer).matches("key-[0-9a-f]{12}").doesNotContain(key.substring(3, 15));
        // sha256("sk-live-0123456789abcdef0123456789abcdef"), first 6 bytes: stable across restarts and pods
        assertThat(bearer).isEqualTo(TenantLabels.keyHash(key));
        assertThat(t.label(headers("x-api-key", key))).as("Anthropic's header, same key").isEqualTo(bearer);
        assertThat(t.label(headers("api-key", key))).as("Azure's header, same key").isEqualTo(bearer);
        assertThat(t.label(headers("Authorization", "bearer " + key))).isEqualTo(bearer);
        assertThat(t.label(headers("Authorization", "Basic dXNlcjpwYXNz"))).isEqualTo("unknown");
        assertThat(t.label(headers())).isEqualTo("unknown");
        assertThat(t.label(headers("Authorization", "Bearer other-key"))).isNotEqualTo(bearer);
    }

    @Test
    void theHashIsSha256() throws Exception {
        byte[] digest = java.security.MessageDigest.getInstance("SHA-256").digest("abc".getBytes());
        assertThat(TenantLabels.keyHash("abc")).isEqualTo("key-ba7816bf8f01");
        assertThat(String.format("%02x", digest[0])).isEqualTo("ba");
    }

    @Test
    void manyDistinctValuesStayWithinTheCap() {
        TenantLabels t = tenants(Map.of("sidecar.tenants.source", "header", "sidecar.tenants.max", "20"));
        Set<String> labels = new HashSet<>();
        for (int i = 0; i < 100_000; i++) {
            labels.add(t.label(headers("x-tenant", "tenant-" + i)));
        }
        assertThat(labels).hasSize(21).contains("other", "tenant-0", "tenant-19");
    }

    @Test
    void aBadSourceIsAClearError() {
        assertThatThrownBy(() -> tenants(Map.of("sidecar.tenants.source", "cookie")))
                .hasMessageContaining("sidecar.tenants.source must be none, header or api-key-hash");
    }
}
