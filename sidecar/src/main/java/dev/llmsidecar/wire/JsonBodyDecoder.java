package dev.llmsidecar.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;

/**
 * A non-streaming response: forwarded as it arrives, while a side copy (up to a limit) is handed to the
 * format's {@link BodyHandler} at the end for usage, finish reason and server timings.
 */
public final class JsonBodyDecoder implements StreamDecoder {

    /** One format's reading of a whole response body. */
    public interface BodyHandler {
        /** @return false when the body could not be decoded */
        boolean onBody(byte[] body, long nanos);
    }

    private final TokenEventSink sink;
    private final BodyHandler handler;
    private final int maxBytes;
    private final ResponseModelProbe model;
    private byte[] copy = new byte[0];
    private int length;
    private boolean tooLarge;

    /** @param model finds the answering model in the body, or null */
    public JsonBodyDecoder(TokenEventSink sink, BodyHandler handler, int maxBytes, ResponseModelProbe model) {
        this.sink = sink;
        this.handler = handler;
        this.maxBytes = maxBytes;
        this.model = model;
    }

    @Override
    public ByteBuf onChunk(ByteBuf chunk, long nanos) {
        onData(chunk, chunk.readerIndex(), chunk.readableBytes(), nanos);
        return chunk;
    }

    @Override
    public ByteBuf onData(ByteBuf read, int index, int n, long nanos) {
        if (!tooLarge) {
            if ((long) length + n > maxBytes) {
                tooLarge = true;
                copy = null;
            } else {
                if (length + n > copy.length) {
                    copy = Arrays.copyOf(copy, Math.min(maxBytes, Math.max(length + n, 2 * copy.length)));
                }
                read.getBytes(index, copy, length, n);
                length += n;
            }
        }
        return null;
    }

    @Override
    public ByteBuf onEnd(long nanos) {
        if (tooLarge) {
            sink.onUndecodable();
            return Unpooled.EMPTY_BUFFER;
        }
        byte[] bytes = length == copy.length ? copy : Arrays.copyOf(copy, length);
        copy = null;
        if (bytes.length == 0) {
            return Unpooled.EMPTY_BUFFER;
        }
        DecodeGuard.run(sink, () -> handler.onBody(bytes, nanos));
        if (model != null) {
            model.look(bytes, 0, bytes.length, sink);
        }
        return Unpooled.EMPTY_BUFFER;
    }
}
