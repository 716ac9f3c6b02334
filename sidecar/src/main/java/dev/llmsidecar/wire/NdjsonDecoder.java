package dev.llmsidecar.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ByteProcessor;
import java.util.Arrays;

/**
 * Newline-delimited JSON (Ollama): every read is forwarded at once and unchanged; each complete line goes to
 * the format's {@link LineHandler} with the arrival time of the read that completed it. A last line without a
 * newline (a non-streaming body) is handled at the end. Blank lines are skipped.
 */
public final class NdjsonDecoder implements StreamDecoder, ByteProcessor {

    /** One format's reading of one line. */
    public interface LineHandler {
        /** @return false when the line could not be decoded */
        boolean onLine(byte[] line, int length, long nanos);
    }

    private final TokenEventSink sink;
    private final LineHandler handler;
    private final int maxLineBytes;
    private final ResponseModelProbe model;
    private byte[] line = new byte[512];
    private int length;
    private boolean oversize;
    private long nanos;

    /** @param model finds the answering model in the first lines, or null */
    public NdjsonDecoder(TokenEventSink sink, LineHandler handler, int maxLineBytes, ResponseModelProbe model) {
        this.sink = sink;
        this.handler = handler;
        this.maxLineBytes = maxLineBytes;
        this.model = model;
    }

    @Override
    public ByteBuf onChunk(ByteBuf chunk, long nanos) {
        onData(chunk, chunk.readerIndex(), chunk.readableBytes(), nanos);
        return chunk;
    }

    @Override
    public ByteBuf onData(ByteBuf read, int index, int length, long nanos) {
        this.nanos = nanos;
        read.forEachByte(index, length, this);
        return null;
    }

    /** One byte of the body, in order (fed by {@link ByteBuf#forEachByte}, which reads the buffer where it lies). */
    @Override
    public boolean process(byte b) {
        if (b == '\n') {
            endLine(nanos);
        } else if (!oversize) {
            if (length == maxLineBytes) {
                oversize = true;
            } else {
                if (length == line.length) {
                    line = Arrays.copyOf(line, Math.min(maxLineBytes, line.length * 2));
                }
                line[length++] = b;
            }
        }
        return true;
    }

    @Override
    public ByteBuf onEnd(long nanos) {
        if (length > 0 || oversize) {
            endLine(nanos);
        }
        return Unpooled.EMPTY_BUFFER;
    }

    private void endLine(long nanos) {
        boolean wasOversize = oversize;
        int len = length;
        oversize = false;
        length = 0;
        if (wasOversize) {
            sink.onUndecodable();
            return;
        }
        if (isBlank(line, len)) {
            return;
        }
        DecodeGuard.run(sink, () -> handler.onLine(line, len, nanos));
        if (model != null) {
            model.look(line, 0, len, sink);
        }
    }

    private static boolean isBlank(byte[] bytes, int len) {
        for (int i = 0; i < len; i++) {
            byte b = bytes[i];
            if (b != ' ' && b != '\r' && b != '\t') {
                return false;
            }
        }
        return true;
    }
}
