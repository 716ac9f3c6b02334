package dev.llmsidecar.support;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Field names that make a Jackson factory's answer depend on what it read before (jackson-core 2.22). A factory keeps
 * every field name its parsers met in two tables: one of UTF-8 bytes (by four-byte groups), one of chars (UTF-16 and
 * UTF-32 input). Both give up on a document with too many names of one hash ({@code StreamConstraintsException}), and
 * the names already in the table count.
 */
public final class JacksonNameTables {

    private JacksonNameTables() {
    }

    /**
     * {@code count} names of 8 ASCII bytes that collide in the byte table under every hash seed, from the
     * {@code from}-th on: the table hashes two groups {@code q1, q2} as {@code mix(q1) + 33 * q2} before it mixes in
     * its seed, so names with one such sum land in one slot whatever the seed. A fresh table reads 529 of them in one
     * document and refuses 530 (its spill area full at 2048 slots); after 500 of them, it refuses 100 others.
     */
    public static List<String> byteTableCollisions(int from, int count) {
        int inverse = 1; // 33^-1 mod 2^32, by Newton's iteration
        for (int i = 0; i < 5; i++) {
            inverse *= 2 - 33 * inverse;
        }
        List<String> names = new ArrayList<>(count);
        int found = 0;
        for (int n = 0; names.size() < count; n++) {
            int q1 = letters(n);
            int h = q1;
            h += h >>> 15;
            h ^= h >>> 9;
            int q2 = (0x12345678 - h) * inverse;
            if (plain(q2 >>> 24) && plain(q2 >>> 16 & 0xFF) && plain(q2 >>> 8 & 0xFF) && plain(q2 & 0xFF)
                    && found++ >= from) {
                names.add(new String(new byte[] {(byte) (q1 >>> 24), (byte) (q1 >>> 16), (byte) (q1 >>> 8),
                    (byte) q1, (byte) (q2 >>> 24), (byte) (q2 >>> 16), (byte) (q2 >>> 8), (byte) q2},
                        StandardCharsets.US_ASCII));
            }
        }
        return names;
    }

    /**
     * {@code count} names of 20 chars with one hash in the char table under every seed, from the {@code from}-th on
     * ({@code "Aa"} and {@code "B@"} hash alike with multiplier 33, and so do all strings of ten of them). In UTF-16 a
     * fresh table reads 302 of them in one document and refuses 303; after 150 of them, it refuses 200 others.
     */
    public static List<String> charTableCollisions(int from, int count) {
        List<String> names = new ArrayList<>(count);
        for (int i = from; i < from + count; i++) {
            StringBuilder name = new StringBuilder(20);
            for (int bit = 0; bit < 10; bit++) {
                name.append((i >> bit & 1) == 0 ? "Aa" : "B@");
            }
            names.add(name.toString());
        }
        return names;
    }

    /**
     * The bytes of {@code name} (ASCII, its length not a multiple of 4) with one 0xFF before its last partial
     * four-byte group: not UTF-8, so a fresh table refuses them, but the byte table pads that group with 0xFF before
     * looking it up, so once it holds {@code name} it returns that name for them without decoding them.
     */
    public static byte[] padded(String name) {
        if (name.length() % 4 == 0) {
            throw new IllegalArgumentException("no partial group to pad: " + name);
        }
        int last = name.length() - name.length() % 4;
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(name.substring(0, last).getBytes(StandardCharsets.US_ASCII));
        b.write(0xFF);
        b.writeBytes(name.substring(last).getBytes(StandardCharsets.US_ASCII));
        return b.toByteArray();
    }

    /** {@code {"a":1,"b":1,...}} */
    public static String object(List<String> names) {
        StringBuilder json = new StringBuilder("{");
        for (String name : names) {
            json.append(json.length() > 1 ? "," : "").append('"').append(name).append("\":1");
        }
        return json.append('}').toString();
    }

    /** The {@code n}-th group of four ASCII letters. */
    private static int letters(int n) {
        int q = 0;
        for (int i = 0; i < 4; i++) {
            int letter = n % 52;
            n /= 52;
            q = q << 8 | (letter < 26 ? 'A' + letter : 'a' + letter - 26);
        }
        return q;
    }

    /** A printable ASCII byte that needs no escape in a JSON string. */
    private static boolean plain(int b) {
        return b >= 0x21 && b <= 0x7E && b != '"' && b != '\\';
    }
}
