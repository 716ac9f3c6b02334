package dev.llmsidecar.export;

import dev.llmsidecar.config.SidecarConfig;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;

/**
 * The {@code tenant} label of a request (sidecar.tenants): from a header, or a short stable hash of the API key, bounded
 * like the model label (an allowlist, or the first {@code max} values; the rest are {@value ModelLabels#OTHER}).
 * The key itself never leaves this class: only 48 bits of its SHA-256 do, enough to tell a few hundred keys apart and
 * useless for recovering a high-entropy key.
 */
public final class TenantLabels {

    /** Where a tenant comes from. */
    public enum Source {
        NONE, HEADER, API_KEY_HASH;

        static Source parse(String value) {
            try {
                return valueOf(value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("sidecar.tenants.source must be none, header or api-key-hash: "
                        + value);
            }
        }
    }

    /** The value every request gets when tenants are off (the recorders drop it from every series). */
    public static final String NONE = "";

    private static final String BEARER = "bearer ";

    private final Source source;
    private final String header;
    private final ModelLabels bounded;

    public TenantLabels(SidecarConfig.Tenants config) {
        this.source = Source.parse(config.source());
        this.header = config.header();
        List<String> allowed = config.allowed().orElse(List.of());
        if (config.max() < 0) {
            throw new IllegalArgumentException("sidecar.tenants.max must be >= 0: " + config.max());
        }
        // with an allowlist nobody else gets a value of their own
        this.bounded = new ModelLabels(allowed.isEmpty() ? config.max() : 0, allowed);
    }

    public boolean enabled() {
        return source != Source.NONE;
    }

    /** The tenant label of a request, given a header lookup (case-insensitive, null when absent). */
    public String label(UnaryOperator<String> headers) {
        return switch (source) {
            case NONE -> NONE;
            case HEADER -> bounded.label(headers.apply(header));
            case API_KEY_HASH -> bounded.label(keyHash(apiKey(headers)));
        };
    }

    /** The bearer token of Authorization, else x-api-key (Anthropic), else api-key (Azure OpenAI); null if none. */
    static String apiKey(UnaryOperator<String> headers) {
        String authorization = headers.apply("authorization");
        if (authorization != null && authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            String token = authorization.substring(BEARER.length()).trim();
            if (!token.isEmpty()) {
                return token;
            }
        }
        String key = headers.apply("x-api-key");
        if (key == null || key.isBlank()) {
            key = headers.apply("api-key");
        }
        return key == null || key.isBlank() ? null : key.trim();
    }

    /** "key-" + the first 12 hex digits of the key's SHA-256; null for no key. Stable across restarts and pods. */
    public static String keyHash(String key) {
        if (key == null) {
            return null;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return "key-" + HexFormat.of().formatHex(digest, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
