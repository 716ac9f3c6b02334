package dev.llmsidecar.trace;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;
import javax.crypto.Mac;

/**
 * A record's {@code conversation_id}: 16 hex digits of HMAC-SHA256(subkey, nonce ‖ number), where subkey =
 * HMAC-SHA256(sidecar.trace.secret, "llm-sidecar trace conversations v1"), nonce is 16 random bytes drawn once per
 * process and number is the conversation's number in this process (sidecar.conversations' table counts first turns).
 * So every turn of one conversation gets one id; two processes' ids do not collide (the nonce), and an id says
 * nothing of the conversation's text: the table's own key never reaches it, only a count does.
 *
 * <p>One instance per thread (a {@link Mac} is not thread-safe): the recorder's.
 */
final class ConversationIds {

    private static final byte[] DOMAIN = "llm-sidecar trace conversations v1".getBytes(StandardCharsets.US_ASCII);

    private final Mac mac;
    private final byte[] nonce = new byte[16];

    ConversationIds(byte[] secret) {
        this.mac = BlockHasher.hmac(BlockHasher.hmac(secret).doFinal(DOMAIN)); // under the subkey
        new SecureRandom().nextBytes(nonce);
    }

    /** The id of conversation {@code number} of this process. */
    String of(int number) {
        mac.update(nonce);
        mac.update((byte) (number >>> 24));
        mac.update((byte) (number >>> 16));
        mac.update((byte) (number >>> 8));
        mac.update((byte) number);
        return HexFormat.of().formatHex(mac.doFinal(), 0, 8);
    }
}
