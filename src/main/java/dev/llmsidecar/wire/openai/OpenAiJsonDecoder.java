package dev.llmsidecar.wire.openai;

import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import io.vertx.core.buffer.Buffer;

/**
 * A non-streaming OpenAI response: forwarded as it arrives, while a side copy (up to a limit) is parsed at the
 * end for usage and finish reason.
 */
public final class OpenAiJsonDecoder implements StreamDecoder {

    private final TokenEventSink sink;
    private final OpenAiChunkParser parser;
    private final int maxBytes;
    private Buffer copy = Buffer.buffer();
    private boolean tooLarge;

    public OpenAiJsonDecoder(TokenEventSink sink, OpenAiChunkParser parser, int maxBytes) {
        this.sink = sink;
        this.parser = parser;
        this.maxBytes = maxBytes;
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
        OpenAiChunk body = parser.parse(bytes, 0, bytes.length);
        if (body == null) {
            if (bytes.length > 0) {
                sink.onUndecodable();
            }
            return Buffer.buffer(0);
        }
        body.reportTo(sink);
        return Buffer.buffer(0);
    }
}
