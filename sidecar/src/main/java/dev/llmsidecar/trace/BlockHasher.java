package dev.llmsidecar.trace;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import javax.crypto.Mac;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;

/**
 * The keyed hashes of a trace: a prompt's block ids and a session's id, HMAC-SHA256 under sidecar.trace.secret, so
 * that equal prefixes get equal ids and no text can be read back or confirmed without the secret.
 *
 * <p><b>Chain.</b> The canonical prompt ({@link Canonical}) is cut into blocks of {@code blockBytes} bytes (the last
 * may be shorter). h<sub>0</sub> = HMAC(secret, "llm-sidecar trace blocks v1" 0x00 route 0x00 model), h<sub>i</sub> =
 * HMAC(secret, h<sub>i-1</sub> ‖ block<sub>i</sub>), and block i's id is the first 53 bits of h<sub>i</sub> (an
 * integer below 2^53, exact in any JSON reader). Each id stands for its block and everything before it: two prompts
 * share their first k ids exactly when their first k blocks are equal.
 *
 * <p><b>Ids for Mooncake.</b> A record has one id per 512-token block, ceil(input_length ÷ 512) of them ({@link #ids});
 * the sidecar has no tokenizer, so byte blocks stand for token blocks, blockBytes being 512 tokens' worth of bytes:
 * with more byte blocks than ids, the first ids are kept; with fewer, the extra ids continue the chain with their index,
 * h<sub>j</sub> = HMAC(secret, h<sub>j-1</sub> ‖ "more" ‖ j), so equal prompts still get equal ids. A prompt only partly
 * hashed (its body was longer than sidecar.trace.max-body-bytes, or not seen) gets random ids past what was hashed:
 * equal only to themselves, so such a prompt shares nothing beyond its hashed part.
 *
 * <p><b>A block that is not full gets a random id</b>, and so does every id after it: a prompt shorter than one block
 * shares nothing, not even with itself. A full block's id can confirm a guess of its whole content (and of everything
 * before it) to whoever can send traffic and read the records; a short one, a PIN or a password in a one-line prompt,
 * would be guessed in minutes, a full block of {@code blockBytes} bytes of prompt is not. What replay loses: prefix
 * sharing within a prompt's last partial block, and all of it for prompts shorter than one block (512 tokens), whose
 * prefix caches are small (docs/capacity-guide.md, "Short prompts").
 *
 * <p>One instance per thread (a {@link Mac} is not thread-safe): the recorder's.
 */
final class BlockHasher {

    static final int MAC_BYTES = 32;
    static final long MAX_ID = (1L << 53) - 1;
    private static final byte[] BLOCKS = "llm-sidecar trace blocks v1\0".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SESSION = "llm-sidecar trace session v1\0".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MORE = "more".getBytes(StandardCharsets.US_ASCII);

    private final Mac mac;
    private final int blockBytes;
    /** h<sub>0</sub> per domain, at most {@value #STARTS} (models are bounded by the model label's cap anyway). */
    private final java.util.Map<String, byte[]> starts = new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(java.util.Map.Entry<String, byte[]> eldest) {
            return size() > STARTS;
        }
    };
    static final int STARTS = 256;

    /**
     * The chain over one prompt: an id per byte block, and the last MAC, from which more ids continue (null when the
     * last block was not full or the prompt not whole: what follows is random).
     */
    record Chain(long[] ids, byte[] last, boolean whole) {
    }

    BlockHasher(byte[] secret, int blockBytes) {
        if (blockBytes < 1) {
            throw new IllegalArgumentException("block bytes must be positive: " + blockBytes);
        }
        this.blockBytes = blockBytes;
        this.mac = hmac(secret);
    }

    /** An HMAC-SHA256 under {@code key}, for one thread. */
    static Mac hmac(byte[] key) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(new SecretKeySpec(key, "HmacSHA256"));
            return m;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    int blockBytes() {
        return blockBytes;
    }

    /**
     * The chain over {@code content[0, length)}.
     *
     * @param domain what the ids are scoped to (route and model: prefix caches are per model and template)
     * @param whole the content is the whole prompt (else only its beginning was hashed)
     */
    Chain chain(String domain, byte[] content, int length, boolean whole) {
        byte[] h = Arrays.copyOf(start(domain), MAC_BYTES);
        int full = length / blockBytes;
        long[] ids = new long[(length + blockBytes - 1) / blockBytes];
        for (int i = 0; i < full; i++) {
            mac.update(h);
            mac.update(content, i * blockBytes, blockBytes);
            finish(h);
            ids[i] = id(h);
        }
        for (int i = full; i < ids.length; i++) {
            ids[i] = random(); // the last block is not full: it confirms nothing
        }
        return new Chain(ids, whole && full == ids.length ? h : null, whole);
    }

    /** h<sub>0</sub> of a domain (route and model), kept for the few domains a sidecar sees. */
    private byte[] start(String domain) {
        byte[] h0 = starts.get(domain);
        if (h0 == null) {
            h0 = new byte[MAC_BYTES];
            mac.update(BLOCKS);
            mac.update(domain.getBytes(StandardCharsets.UTF_8));
            finish(h0);
            starts.put(domain, h0);
        }
        return h0;
    }

    /**
     * The record's {@code count} ids (ceil(input_length ÷ 512)) from a chain: its first ids, continued by index when
     * it has fewer (randomly past a prompt not wholly hashed); {@code chain} null (no body seen): random ids.
     */
    long[] ids(Chain chain, int count) {
        long[] out = new long[count];
        if (chain == null) {
            for (int i = 0; i < count; i++) {
                out[i] = random();
            }
            return out;
        }
        int kept = Math.min(count, chain.ids().length);
        System.arraycopy(chain.ids(), 0, out, 0, kept);
        byte[] h = chain.last() != null ? Arrays.copyOf(chain.last(), MAC_BYTES) : null;
        for (int j = kept; j < count; j++) {
            if (h == null) {
                out[j] = random();
                continue;
            }
            mac.update(h);
            mac.update(MORE);
            mac.update(new byte[] {(byte) (j >>> 24), (byte) (j >>> 16), (byte) (j >>> 8), (byte) j});
            finish(h);
            out[j] = id(h);
        }
        return out;
    }

    /** A session's id: 16 hex digits of HMAC(secret, "llm-sidecar trace session v1" 0x00 value). */
    String session(String value) {
        mac.update(SESSION);
        mac.update(value.getBytes(StandardCharsets.UTF_8));
        byte[] h = mac.doFinal();
        return HexFormat.of().formatHex(h, 0, 8);
    }

    private void finish(byte[] into) {
        try {
            mac.doFinal(into, 0);
        } catch (ShortBufferException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The first 53 bits of a MAC. */
    static long id(byte[] h) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (h[i] & 0xFF);
        }
        return v >>> 11;
    }

    private static long random() {
        return ThreadLocalRandom.current().nextLong() >>> 11;
    }
}
