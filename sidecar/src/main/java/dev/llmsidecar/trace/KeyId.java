package dev.llmsidecar.trace;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * Which key made a trace's ids, written in every record ({@code key_id}) so that files from different keys are never
 * merged unnoticed ({@code bin/trace-merge}): 16 hex digits of PBKDF2-HMAC-SHA256 over the secret with
 * {@value #ITERATIONS} iterations. Anyone may read it; it names the key without helping to find it: testing one guess
 * of a secret against it costs as much as {@value #ITERATIONS} HMACs (about 0.3 s of a core here), where a plain
 * HMAC of the secret would cost one. The secret is at least 32 random bytes anyway; this is for the secret that is long
 * but not random.
 */
final class KeyId {

    static final int ITERATIONS = 600_000;
    private static final byte[] SALT = "llm-sidecar trace key id v1".getBytes(StandardCharsets.US_ASCII);

    private KeyId() {
    }

    static String of(byte[] secret) {
        char[] password = HexFormat.of().formatHex(secret).toCharArray();
        try {
            PBEKeySpec spec = new PBEKeySpec(password, SALT, ITERATIONS, 64);
            byte[] id = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
            spec.clearPassword();
            return HexFormat.of().formatHex(id);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("PBKDF2WithHmacSHA256 is not available", e);
        } finally {
            java.util.Arrays.fill(password, '\0');
        }
    }
}
