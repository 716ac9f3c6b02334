package dev.llmsidecar.fuzz;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.Inflater;
import java.util.zip.InflaterInputStream;
import java.util.zip.ZipException;

/**
 * What java.util.zip makes of (a prefix of) a compressed body: {@link GZIPInputStream} for gzip (which reads
 * concatenated members), {@link InflaterInputStream} for deflate, zlib-wrapped when the first two bytes are a zlib
 * header (RFC 1950's check, as {@code InflatingDecoder} decides) and raw otherwise. Everything the stream gives
 * before it ends, runs out (a truncated body) or finds damage.
 */
final class ZipReference {

    enum Wrapper { GZIP, ZLIB_OR_RAW }

    /**
     * @param bytes what it inflates to
     * @param damaged it stopped at damage (not at its end, nor for want of more bytes): then {@code bytes} is all that
     *     can come out before the damage, got by giving the inflater one byte in and one byte of room out at a time
     *     (zlib drops the output of a call that ends in an error, so an inflater that takes more at once, or reads cut
     *     elsewhere, may get less out: only a prefix of this is certain)
     */
    record Inflated(byte[] bytes, boolean damaged) {
    }

    private ZipReference() {
    }

    static Inflated inflate(byte[] compressed, int length, Wrapper wrapper) {
        Inflated inflated = inflate(compressed, length, wrapper, 8192);
        return inflated.damaged() ? inflate(compressed, length, wrapper, 1) : inflated;
    }

    private static Inflated inflate(byte[] compressed, int length, Wrapper wrapper, int readSize) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        InputStream in = new Reads(new ByteArrayInputStream(compressed, 0, length), readSize);
        try (InputStream inflating = wrapper == Wrapper.GZIP ? new GZIPInputStream(in)
                : new InflaterInputStream(in, new Inflater(!looksLikeZlib(compressed, length)))) {
            byte[] buffer = new byte[readSize];
            for (int n; (n = inflating.read(buffer)) > 0; ) {
                out.write(buffer, 0, n);
            }
        } catch (ZipException e) {
            return new Inflated(out.toByteArray(), true);
        } catch (IOException e) {
            // truncated (EOFException): what came before
        }
        return new Inflated(out.toByteArray(), false);
    }

    /**
     * The body as the inflating stream reads it: at most {@code readSize} bytes per read (1: the inflater gets its
     * input a byte at a time), and always "more available". GZIPInputStream looks for another member after one only
     * when its input says bytes are available or more than 26 are buffered, so a body cut short inside a small last
     * member would give nothing of it, though its bytes inflate; told there is more, it looks, and a header that is
     * not there (or not whole) ends the body as before.
     */
    private static final class Reads extends FilterInputStream {
        private final int readSize;

        Reads(InputStream in, int readSize) {
            super(in);
            this.readSize = readSize;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return super.read(b, off, Math.min(len, readSize));
        }

        @Override
        public int available() throws IOException {
            return Math.max(1, super.available());
        }
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
