package dev.llmsidecar.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.compression.ZlibCodecFactory;
import io.netty.handler.codec.compression.ZlibWrapper;
import io.vertx.core.buffer.Buffer;
import java.util.Locale;

/**
 * A compressed response ({@code Content-Encoding: gzip} or {@code deflate}) is still measured: the compressed bytes
 * are forwarded untouched, and an inflated copy goes to the format's decoder, stamped with the arrival time of the
 * compressed read that carried it. Netty's zlib decoder does the inflating (gzip headers and trailers, zlib-wrapped
 * or raw deflate; deflate is read as zlib when its first two bytes are a zlib header by RFC 1950's rule, else raw).
 * The inner decoder never edits: what it returns is dropped.
 * br and zstd would need native libraries; such responses pass undecoded (counted by the proxy).
 */
public final class InflatingDecoder implements StreamDecoder {

    /** Stops inflating past this many output bytes per input byte (a decompression bomb costs no more). */
    private static final long MAX_RATIO = 1000;

    private final StreamDecoder inner;
    private final TokenEventSink sink;
    private EmbeddedChannel inflater;   // deflate: created once the first two bytes tell zlib from raw
    private byte[] undecided = new byte[0];
    private long in;
    private long out;
    private boolean failed;

    private InflatingDecoder(StreamDecoder inner, TokenEventSink sink, ZlibWrapper wrapper) {
        this.inner = inner;
        this.sink = sink;
        if (wrapper != ZlibWrapper.ZLIB_OR_NONE) {
            this.inflater = new EmbeddedChannel(ZlibCodecFactory.newZlibDecoder(wrapper));
        }
    }

    /** True for a Content-Encoding this decoder inflates (null and identity need none). */
    public static boolean inflates(String contentEncoding) {
        return wrapper(contentEncoding) != null;
    }

    /** True when a Content-Encoding leaves the body as it is. */
    public static boolean identity(String contentEncoding) {
        return contentEncoding == null || contentEncoding.isBlank()
                || contentEncoding.trim().equalsIgnoreCase("identity");
    }

    /** Wraps {@code inner} for a response with {@code contentEncoding} ({@link #inflates} must be true). */
    public static StreamDecoder wrap(StreamDecoder inner, TokenEventSink sink, String contentEncoding) {
        return new InflatingDecoder(inner, sink, wrapper(contentEncoding));
    }

    private static ZlibWrapper wrapper(String contentEncoding) {
        if (contentEncoding == null) {
            return null;
        }
        return switch (contentEncoding.trim().toLowerCase(Locale.ROOT)) {
            case "gzip", "x-gzip" -> ZlibWrapper.GZIP;
            // RFC 9110 says zlib-wrapped; some servers send raw deflate
            case "deflate" -> ZlibWrapper.ZLIB_OR_NONE;
            default -> null;
        };
    }

    @Override
    public Buffer onChunk(Buffer chunk, long nanos) {
        if (!failed) {
            in += chunk.length();
            try {
                byte[] bytes = inflater == null ? decideZlibOrRaw(chunk.getBytes()) : chunk.getBytes();
                if (bytes != null) {
                    inflater.writeInbound(Unpooled.wrappedBuffer(bytes));
                    drain(nanos);
                }
            } catch (RuntimeException e) {
                fail();
            }
        }
        return chunk;
    }

    /**
     * Deflate: zlib-wrapped when the first two bytes are a zlib header (RFC 1950: CM 8, a window of at most 32 KiB,
     * CMF and FLG a multiple of 31), else raw. Netty's own guess takes only a 32 KiB window for zlib, and read a
     * zlib body with a smaller one as raw deflate, which fails. Returns the bytes to inflate, or null until two have
     * arrived.
     */
    private byte[] decideZlibOrRaw(byte[] bytes) {
        byte[] start = new byte[undecided.length + bytes.length];
        System.arraycopy(undecided, 0, start, 0, undecided.length);
        System.arraycopy(bytes, 0, start, undecided.length, bytes.length);
        if (start.length < 2) {
            undecided = start;
            return null;
        }
        int cmf = start[0] & 0xFF;
        int flg = start[1] & 0xFF;
        boolean zlib = (cmf & 0x0F) == 8 && cmf >>> 4 <= 7 && (cmf << 8 | flg) % 31 == 0;
        inflater = new EmbeddedChannel(ZlibCodecFactory.newZlibDecoder(zlib ? ZlibWrapper.ZLIB : ZlibWrapper.NONE));
        undecided = null;
        return start;
    }

    private void drain(long nanos) {
        for (ByteBuf b = inflater.readInbound(); b != null; b = inflater.readInbound()) {
            try {
                out += b.readableBytes();
                if (!failed && out <= MAX_RATIO * Math.max(in, 1024)) {
                    inner.onChunk(Buffer.buffer(ByteBufUtil.getBytes(b)), nanos);
                } else if (!failed) {
                    fail();
                }
            } finally {
                b.release();
            }
        }
    }

    private void fail() {
        failed = true;
        sink.onUndecodable();
        if (inflater == null) {
            return;
        }
        try {
            inflater.finishAndReleaseAll();
        } catch (RuntimeException e) {
            // closing the channel decodes the damaged bytes once more, and they throw again: already counted (the
            // buffers are released all the same); escaping here, it cost the client the read being forwarded
        }
    }

    @Override
    public Buffer onEnd(long nanos) {
        if (!failed) {
            if (inflater != null) { // null: a deflate body of less than two bytes, nothing to inflate
                try {
                    inflater.finish();
                    drain(nanos);
                } catch (RuntimeException e) {
                    fail();
                }
                inflater.finishAndReleaseAll();
            }
            inner.onEnd(nanos);
        }
        return Buffer.buffer(0);
    }

    @Override
    public UsageReport usageReport() {
        return inner.usageReport();
    }
}
