package dev.llmsidecar.fuzz;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.Inflater;
import java.util.zip.InflaterInputStream;

/**
 * What java.util.zip makes of (a prefix of) a compressed body: {@link GZIPInputStream} for gzip (which reads
 * concatenated members), {@link InflaterInputStream} for deflate, zlib-wrapped when the first two bytes are a zlib
 * header (RFC 1950's check, as {@code InflatingDecoder} decides) and raw otherwise. Everything the stream gives
 * before it ends or fails: a truncated or corrupt body gives what could be inflated before the damage.
 */
final class ZipReference {

    enum Wrapper { GZIP, ZLIB_OR_RAW }

    private ZipReference() {
    }

    static byte[] inflate(byte[] compressed, int length, Wrapper wrapper) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayInputStream in = new ByteArrayInputStream(compressed, 0, length);
        try (InputStream inflating = wrapper == Wrapper.GZIP ? new GZIPInputStream(in)
                : new InflaterInputStream(in, new Inflater(!looksLikeZlib(compressed, length)))) {
            byte[] buffer = new byte[8192];
            for (int n; (n = inflating.read(buffer)) > 0; ) {
                out.write(buffer, 0, n);
            }
        } catch (IOException e) {
            // truncated or damaged: what came before it
        }
        return out.toByteArray();
    }

    /** RFC 1950: CM 8 with a window of at most 32 KiB, and CMF·256 + FLG a multiple of 31. */
    static boolean looksLikeZlib(byte[] bytes, int length) {
        if (length < 2) {
            return false;
        }
        int cmf = bytes[0] & 0xFF;
        int flg = bytes[1] & 0xFF;
        return (cmf & 0x0F) == 8 && (cmf >> 4) <= 7 && (cmf << 8 | flg) % 31 == 0;
    }
}
