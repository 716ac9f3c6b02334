package dev.llmsidecar.measure;

import dev.llmsidecar.config.SidecarConfig;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The {@code tenant} label of a request (sidecar.tenants): from a header, or a short stable hash of the API key,
 * bounded: an allowlist, or the first {@code max} tenants whose requests the engine answered with a 2xx; everyone else
 * is {@value ModelLabels#OTHER}. Admitting only after a 2xx keeps clients the engine refuses (unknown keys, a flood of
 * made-up ones after a restart) from taking the values of real tenants. The key itself never leaves this class: only
 * 48 bits of its SHA-256 (or, with a secret, of its HMAC) do.
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
    private static final int MAX_LENGTH = 128;
    /** Headers that carry credentials: naming one as the tenant header would export the secret as a label. */
    private static final Set<String> CREDENTIAL_HEADERS = Set.of("authorization", "proxy-authorization", "x-api-key",
            "api-key", "cookie");

    private final Source source;
    private final String header;
    private final byte[] hashSecret;
    private final Set<String> allowed;
    private final int max;
    private final Set<String> admitted = ConcurrentHashMap.newKeySet();
    private final AtomicInteger admittedCount = new AtomicInteger();

    public TenantLabels(SidecarConfig.Tenants config) {
        this.source = Source.parse(config.source());
        this.header = config.header();
        if (CREDENTIAL_HEADERS.contains(header.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("sidecar.tenants.header must not be a credential header (" + header
                    + "): use sidecar.tenants.source=api-key-hash");
        }
        if (config.max() < 0) {
            throw new IllegalArgumentException("sidecar.tenants.max must be >= 0: " + config.max());
        }
        this.hashSecret = config.keyHashSecret().map(s -> s.getBytes(StandardCharsets.UTF_8)).orElse(null);
        this.allowed = Set.copyOf(config.allowed().orElse(List.of()));
        this.max = config.max();
    }

    public boolean enabled() {
        return source != Source.NONE;
    }

    /**
     * Who sent a request, given a header lookup (case-insensitive, null when absent): the header's value or the key's
     * hash, unbounded; null when the request names no one or tenants are off. Pass it to {@link #label} and, once the
     * engine answered 2xx, to {@link #admit}.
     */
    public String tenantOf(UnaryOperator<String> headers) {
        return switch (source) {
            case NONE -> null;
            case HEADER -> blankToNull(headers.apply(header));
            case API_KEY_HASH -> keyHash(apiKey(headers), hashSecret);
        };
    }

    /** The label value of a tenant from {@link #tenantOf}. */
    public String label(String tenant) {
        if (source == Source.NONE) {
            return NONE;
        }
        if (tenant == null) {
            return ModelLabels.UNKNOWN;
        }
        return allowed.contains(tenant) || admitted.contains(tenant) ? tenant : ModelLabels.OTHER;
    }

    /**
     * The engine answered this tenant's request with a 2xx: without an allowlist it gets a value of its own, while
     * fewer than {@code max} have one. Later requests carry it.
     */
    public void admit(String tenant) {
        if (tenant == null || !allowed.isEmpty() || tenant.length() > MAX_LENGTH || admitted.contains(tenant)) {
            return;
        }
        // reserve a slot first so concurrent callers can never admit more than max
        if (admittedCount.incrementAndGet() > max || !admitted.add(tenant)) {
            admittedCount.decrementAndGet();
        }
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
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
        String key = blankToNull(headers.apply("x-api-key"));
        return key != null ? key : blankToNull(headers.apply("api-key"));
    }

    /** "key-" + the first 12 hex digits of the key's SHA-256; null for no key. Stable across restarts and pods. */
    public static String keyHash(String key) {
        return keyHash(key, null);
    }

    /**
     * As {@link #keyHash(String)}, with HMAC-SHA256 under {@code secret} when there is one. Once per request: the
     * digest, the MAC and their buffers are the thread's own, so what is left is the label's string.
     */
    static String keyHash(String key, byte[] secret) {
        if (key == null) {
            return null;
        }
        return HASHERS.get().hash(key, secret);
    }

    private static final ThreadLocal<KeyHasher> HASHERS = ThreadLocal.withInitial(KeyHasher::new);

    /** One thread's SHA-256, HMAC (initialised for the last secret it was given) and buffers. */
    private static final class KeyHasher {
        private static final char[] HEX = "0123456789abcdef".toCharArray();
        private final MessageDigest sha256;
        private Mac mac;
        private byte[] macSecret;
        private byte[] bytes = new byte[128];
        private final byte[] digest = new byte[32];
        private final char[] label = new char[16];

        KeyHasher() {
            try {
                sha256 = MessageDigest.getInstance("SHA-256");
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("every JVM has SHA-256", e);
            }
            "key-".getChars(0, 4, label, 0);
        }

        String hash(String key, byte[] secret) {
            // UTF-8 bytes of the key in the thread's buffer (an ASCII key of up to 4096 characters, as keys are),
            // else encoded apart
            byte[] data = bytes;
            int length = key.length();
            boolean ascii = length <= 4096;
            for (int i = 0; ascii && i < length; i++) {
                ascii = key.charAt(i) < 0x80;
            }
            if (!ascii) {
                data = key.getBytes(StandardCharsets.UTF_8);
                length = data.length;
            } else {
                if (length > bytes.length) {
                    bytes = new byte[Math.max(length, bytes.length * 2)];
                    data = bytes;
                }
                for (int i = 0; i < length; i++) {
                    data[i] = (byte) key.charAt(i);
                }
            }
            try {
                if (secret == null) {
                    sha256.update(data, 0, length);
                    sha256.digest(digest, 0, digest.length);
                } else {
                    if (mac == null || macSecret != secret) {
                        mac = Mac.getInstance("HmacSHA256");
                        mac.init(new SecretKeySpec(secret, "HmacSHA256"));
                        macSecret = secret;
                    }
                    mac.update(data, 0, length);
                    mac.doFinal(digest, 0);
                }
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("every JVM has SHA-256 and HmacSHA256", e);
            } finally {
                java.util.Arrays.fill(data, 0, length, (byte) 0); // the key does not stay in the thread's buffer
            }
            for (int i = 0; i < 6; i++) {
                label[4 + 2 * i] = HEX[(digest[i] >> 4) & 0xF];
                label[5 + 2 * i] = HEX[digest[i] & 0xF];
            }
            return new String(label);
        }
    }
}
