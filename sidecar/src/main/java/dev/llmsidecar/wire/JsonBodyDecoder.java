package dev.llmsidecar.wire;

import io.vertx.core.buffer.Buffer;

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
    private Buffer copy = Buffer.buffer();
    private boolean tooLarge;

    /** @param model finds the answering model in the body, or null */
    public JsonBodyDecoder(TokenEventSink sink, BodyHandler handler, int maxBytes, ResponseModelProbe model) {
        this.sink = sink;
        this.handler = handler;
        this.maxBytes = maxBytes;
        this.model = model;
    }

    @Override
    public Buffer onChunk(Buffer chunk, long nanos) {
        if (!tooLarge) {
            if (copy.length() + chunk.length() > maxBytes) {
                tooLarge = true;
                copy = null;
            } else {
                copy.appendBuffer(chunk);
            }
        }
        return chunk;
    }

    @Override
    public Buffer onEnd(long nanos) {
        if (tooLarge) {
            sink.onUndecodable();
            return Buffer.buffer(0);
        }
        byte[] bytes = copy.getBytes();
        copy = null;
        if (bytes.length == 0) {
            return Buffer.buffer(0);
        }
        DecodeGuard.run(sink, () -> handler.onBody(bytes, nanos));
        if (model != null) {
            model.look(bytes, 0, bytes.length, sink);
        }
        return Buffer.buffer(0);
    }
}
