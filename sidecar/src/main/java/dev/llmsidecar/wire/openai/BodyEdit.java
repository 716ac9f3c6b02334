package dev.llmsidecar.wire.openai;

import io.vertx.core.buffer.Buffer;

/**
 * One textual edit of a request body: {@code removed} bytes at {@code at} replaced by {@code inserted}. Every other
 * byte stays as the client sent it.
 */
public record BodyEdit(int at, int removed, byte[] inserted) {

    public Buffer applyTo(Buffer body) {
        byte[] bytes = body.getBytes();
        Buffer out = Buffer.buffer(bytes.length - removed + inserted.length);
        out.appendBytes(bytes, 0, at);
        out.appendBytes(inserted);
        out.appendBytes(bytes, at + removed, bytes.length - at - removed);
        return out;
    }
}
