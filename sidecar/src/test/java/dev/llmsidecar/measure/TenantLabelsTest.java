package dev.llmsidecar.measure;

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

    /** What the proxy does: the label at arrival, admission once the engine answered 2xx. */
    static String request(TenantLabels t, UnaryOperator<String> headers, boolean ok) {
        String who = t.tenantOf(headers);
        String label = t.label(who);
        if (ok) {
            t.admit(who);
        }
        return label;
    }

    @Test
    void offByDefault() {
        TenantLabels t = tenants(Map.of());
        assertThat(t.enabled()).isFalse();
        assertThat(request(t, headers("x-tenant", "acme"), true)).isEqualTo(TenantLabels.NONE);
    }

    @Test
    void fromAHeaderCappedWithOtherAndUnknownAdmittedAfterA2xx() {
        TenantLabels t = tenants(Map.of("sidecar.tenants.source", "header", "sidecar.tenants.header",
                "OpenAI-Project", "sidecar.tenants.max", "2"));
        assertThat(request(t, headers("openai-project", "proj_a"), true)).as("not yet admitted").isEqualTo("other");
        assertThat(request(t, headers("OpenAI-Project", "proj_a"), true)).isEqualTo("proj_a");
        assertThat(request(t, headers("OpenAI-Project", "proj_x"), false)).isEqualTo("other");
        assertThat(request(t, headers("OpenAI-Project", "proj_x"), false)).as("refused: never admitted")
                .isEqualTo("other");
        request(t, headers("OpenAI-Project", "proj_b"), true);
        request(t, headers("OpenAI-Project", "proj_c"), true);
        assertThat(request(t, headers("OpenAI-Project", "proj_b"), true)).isEqualTo("proj_b");
        assertThat(request(t, headers("OpenAI-Project", "proj_c"), true)).as("past the cap").isEqualTo("other");
        assertThat(request(t, headers("OpenAI-Project", "proj_a"), true)).as("admitted values stay")
                .isEqualTo("proj_a");
        assertThat(request(t, headers(), true)).isEqualTo("unknown");
        String longName = "x".repeat(200);
        request(t, headers("OpenAI-Project", longName), true);
        assertThat(request(t, headers("OpenAI-Project", longName), true)).isEqualTo("other");
    }

    @Test
    void unknownKeysTheEngineRefusesNeverTakeTheValuesOfRealTenants() {
        TenantLabels t = tenants(Map.of("sidecar.tenants.source", "api-key-hash", "sidecar.tenants.max", "3"));
        for (int i = 0; i < 1000; i++) {
            request(t, headers("Authorization", "Bearer made-up-" + i), false); // 401 from the engine
        }
        request(t, headers("Authorization", "Bearer real-key"), true);
        assertThat(request(t, headers("Authorization", "Bearer real-key"), true))
                .isEqualTo(TenantLabels.keyHash("real-key"));
    }

    @Test
    void anAllowlistAdmitsNobodyElse() {
        TenantLabels t = tenants(Map.of("sidecar.tenants.source", "header", "sidecar.tenants.allowed", "gold,silver"));
        request(t, headers("x-tenant", "mallory"), true);
        assertThat(request(t, headers("x-tenant", "mallory"), true)).isEqualTo("other");
        assertThat(request(t, headers("x-tenant", "silver"), false)).as("allowed from the first request")
                .isEqualTo("silver");
    }

    @Test
    void anApiKeyBecomesAShortStableHashAndNeverItself() {
        TenantLabels t = tenants(Map.of("sidecar.tenants.source", "api-key-hash"));
        String key = "sk-live-0123456789abcdef0123456789abcdef";
        String bearer = t.tenantOf(headers("Authorization", "Bearer " + key));
        assertThat(bearer).matches("key-[0-9a-f]{12}").doesNotContain(key.substring(3, 15));
        assertThat(bearer).isEqualTo(TenantLabels.keyHash(key));
        assertThat(t.tenantOf(headers("x-api-key", key))).as("Anthropic's header, same key").isEqualTo(bearer);
        assertThat(t.tenantOf(headers("api-key", key))).as("Azure's header, same key").isEqualTo(bearer);
        assertThat(t.tenantOf(headers("Authorization", "bearer " + key))).isEqualTo(bearer);
        assertThat(t.tenantOf(headers("Authorization", "Basic dXNlcjpwYXNz"))).isNull();
        assertThat(t.tenantOf(headers())).isNull();
        assertThat(t.tenantOf(headers("Authorization", "Bearer other-key"))).isNotEqualTo(bearer);
    }

    @Test
    void withASecretTheHashIsAnHmacThatAGuessedKeyDoesNotMatch() throws Exception {
        TenantLabels t = tenants(Map.of("sidecar.tenants.source", "api-key-hash",
                "sidecar.tenants.key-hash-secret", "s3cret"));
        String hashed = t.tenantOf(headers("Authorization", "Bearer EMPTY"));
        assertThat(hashed).matches("key-[0-9a-f]{12}").isNotEqualTo(TenantLabels.keyHash("EMPTY"));
        javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
        mac.init(new javax.crypto.spec.SecretKeySpec("s3cret".getBytes(), "HmacSHA256"));
        assertThat(hashed).isEqualTo("key-" + java.util.HexFormat.of().formatHex(mac.doFinal("EMPTY".getBytes()), 0,
                6));
    }

    @Test
    void aCredentialHeaderCannotBeTheTenantHeader() {
        for (String h : new String[] {"Authorization", "x-api-key", "api-key", "Cookie", "Proxy-Authorization"}) {
            assertThatThrownBy(() -> tenants(Map.of("sidecar.tenants.source", "header", "sidecar.tenants.header", h)))
                    .as(h).hasMessageContaining("must not be a credential header");
        }
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
            request(t, headers("x-tenant", "tenant-" + i), true);
            labels.add(request(t, headers("x-tenant", "tenant-" + i), true));
        }
        assertThat(labels).hasSize(21).contains("other", "tenant-0", "tenant-19");
    }

    @Test
    void aBadSourceIsAClearError() {
        assertThatThrownBy(() -> tenants(Map.of("sidecar.tenants.source", "cookie")))
                .hasMessageContaining("sidecar.tenants.source must be none, header or api-key-hash");
    }
}
