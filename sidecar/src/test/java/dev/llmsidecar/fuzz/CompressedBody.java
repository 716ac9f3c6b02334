package dev.llmsidecar.fuzz;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import java.util.zip.Deflater;

/**
 * A compressed response body as servers send them, built by hand around java.util.zip's raw {@link Deflater} so every
 * part the fuzzer should vary is reachable: gzip members (several, concatenated; optional header fields FEXTRA, FNAME,
 * FCOMMENT, FHCRC), zlib with any window size in its header, raw deflate; any level and strategy; sync flushes inside
 * (a streaming server flushes per event); then maybe cut short, or followed by bytes that are not compressed data.
 *
 * @param bytes the body
 * @param plain what it inflates to when whole
 * @param whole neither truncated nor followed by other bytes: a decoder must get to its end cleanly
 * @param description for an assertion message
 */
record CompressedBody(byte[] bytes, byte[] plain, boolean whole, String description) {

    private static final int FHCRC = 0x02;
    private static final int FEXTRA = 0x04;
    private static final int FNAME = 0x08;
    private static final int FCOMMENT = 0x10;
    private static final int[] STRATEGIES = {Deflater.DEFAULT_STRATEGY, Deflater.FILTERED, Deflater.HUFFMAN_ONLY};
    /** Large and all zeros: deflate's best ratio (about 1030:1) is over the decoder's bound of 1000:1. */
    static final int BOMB_BYTES = 1_100_000;

    static CompressedBody generate(boolean gzip, FuzzedDataProvider data) {
        int level = data.consumeInt(-1, 9);
        int strategy = data.pickValue(STRATEGIES);
        int flushes = data.consumeInt(0, 4);
        int members = gzip ? data.consumeInt(1, 3) : 1;
        int flags = gzip ? data.consumeInt(0, 0x1F) : 0;
        boolean raw = !gzip && data.consumeInt(0, 2) == 0;
        int windowBits = data.consumeInt(8, 15);
        int truncateAt = data.consumeBoolean() ? data.consumeInt(0, 0xFFFF) : -1;
        int trailing = data.consumeInt(0, 5); // 4: zero padding, 5: a line end, else nothing
        boolean bomb = data.consumeInt(0, 31) == 31; // rare, and never when the input runs out
        byte[] plain = bomb ? new byte[BOMB_BYTES] : data.consumeRemainingAsBytes();
        if (bomb) {
            // a bomb is deflate at its best ratio; stored (level 0) or Huffman-only zeros are a 1.1 MB or 140 KB body
            // instead, which one-byte reads turned into a million reads and the fuzzing JVM's heap into an
            // out-of-memory finding of the rig's own (CI, 28 Nov 2026; seed stored-bomb-in-one-byte-reads)
            level = Deflater.BEST_COMPRESSION;
            strategy = Deflater.DEFAULT_STRATEGY;
        }

        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (gzip) {
            for (int m = 0; m < members; m++) {
                byte[] part = Arrays.copyOfRange(plain, plain.length * m / members, plain.length * (m + 1) / members);
                gzipMember(body, part, flags, level, strategy, flushes);
            }
        } else if (raw) {
            body.writeBytes(deflate(plain, level, strategy, flushes));
        } else {
            zlib(body, plain, bits(plain, windowBits), level, strategy, flushes);
        }
        byte[] bytes = body.toByteArray();
        boolean whole = true;
        if (truncateAt >= 0) {
            int at = truncateAt % (bytes.length + 1);
            whole = at == bytes.length;
            bytes = Arrays.copyOf(bytes, at);
        }
        if (trailing >= 4) {
            byte[] after = trailing == 4 ? new byte[8] : "\r\n".getBytes(StandardCharsets.US_ASCII);
            bytes = Arrays.copyOf(bytes, bytes.length + after.length);
            System.arraycopy(after, 0, bytes, bytes.length - after.length, after.length);
            whole = false;
        }
        String description = (gzip ? "gzip, " + members + " member(s), flags " + flags
                : raw ? "raw deflate" : "zlib, window bits " + bits(plain, windowBits))
                + ", level " + level + ", strategy " + strategy + ", " + flushes + " flushes, " + plain.length
                + " bytes" + (whole ? "" : ", cut at " + truncateAt + " / trailing " + trailing);
        return new CompressedBody(bytes, plain, whole, description);
    }

    /** A smaller window than 32 KiB is valid as long as no distance reaches further back than it. */
    private static int bits(byte[] plain, int windowBits) {
        return plain.length <= 1 << windowBits ? windowBits : 15;
    }

    private static void gzipMember(ByteArrayOutputStream body, byte[] plain, int flags, int level, int strategy,
            int flushes) {
        ByteArrayOutputStream header = new ByteArrayOutputStream();
        header.writeBytes(new byte[] {0x1F, (byte) 0x8B, 8, (byte) flags, 1, 2, 3, 4, 0, (byte) 255});
        if ((flags & FEXTRA) != 0) {
            header.writeBytes(new byte[] {4, 0, 'A', 'p', 2, 0});
        }
        if ((flags & FNAME) != 0) {
            header.writeBytes("body.json\0".getBytes(StandardCharsets.ISO_8859_1));
        }
        if ((flags & FCOMMENT) != 0) {
            header.writeBytes("\u00e9t\u00e9\0".getBytes(StandardCharsets.ISO_8859_1));
        }
        if ((flags & FHCRC) != 0) {
            CRC32 crc = new CRC32();
            crc.update(header.toByteArray());
            writeLittleEndian(header, crc.getValue(), 2);
        }
        body.writeBytes(header.toByteArray());
        body.writeBytes(deflate(plain, level, strategy, flushes));
        CRC32 crc = new CRC32();
        crc.update(plain);
        writeLittleEndian(body, crc.getValue(), 4);
        writeLittleEndian(body, plain.length, 4);
    }

    private static void zlib(ByteArrayOutputStream body, byte[] plain, int windowBits, int level, int strategy,
            int flushes) {
        int cmf = (windowBits - 8) << 4 | 8;
        int flevel = level < 0 ? 2 : level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3;
        int flg = flevel << 6;
        flg += 31 - (cmf << 8 | flg) % 31; // FCHECK
        body.write(cmf);
        body.write(flg);
        body.writeBytes(deflate(plain, level, strategy, flushes));
        Adler32 adler = new Adler32();
        adler.update(plain);
        long a = adler.getValue();
        body.writeBytes(new byte[] {(byte) (a >>> 24), (byte) (a >>> 16), (byte) (a >>> 8), (byte) a});
    }

    /** Raw deflate, sync-flushed after each of {@code flushes + 1} parts, then finished. */
    private static byte[] deflate(byte[] plain, int level, int strategy, int flushes) {
        Deflater deflater = new Deflater(level, true);
        deflater.setStrategy(strategy);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        int parts = flushes + 1;
        for (int p = 0; p < parts; p++) {
            int from = plain.length * p / parts;
            deflater.setInput(plain, from, plain.length * (p + 1) / parts - from);
            boolean last = p == parts - 1;
            if (last) {
                deflater.finish();
            }
            int n;
            // a sync flush is complete once all input is taken and the output did not fill the buffer
            do {
                n = deflater.deflate(buffer, 0, buffer.length, last ? Deflater.NO_FLUSH : Deflater.SYNC_FLUSH);
                out.write(buffer, 0, n);
            } while (last ? !deflater.finished() : n == buffer.length || !deflater.needsInput());
        }
        deflater.end();
        return out.toByteArray();
    }

    private static void writeLittleEndian(ByteArrayOutputStream out, long value, int bytes) {
        for (int i = 0; i < bytes; i++) {
            out.write((int) (value >>> 8 * i) & 0xFF);
        }
    }
}
