package dev.llmsidecar.wire.openai;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;

/**
 * One textual edit of a request body: {@code removed} bytes at {@code at} replaced by {@code inserted}. Every other
 * byte stays as the client sent it.
 */
public record BodyEdit(int at, int removed, byte[] inserted) {

    /**
     * The edited body as a view of {@code body} (which it retains: release both): its bytes before and after the edit
     * are not copied, whatever its size. Offsets are from its reader index.
     */
    public ByteBuf applyTo(ByteBuf body) {
        int start = body.readerIndex();
        int end = body.writerIndex();
        return Unpooled.wrappedBuffer(3, body.retainedSlice(start, at), Unpooled.wrappedBuffer(inserted),
                body.retainedSlice(start + at + removed, end - start - at - removed));
    }

    public Buffer applyTo(Buffer body) {
        byte[] bytes = body.getBytes();
        Buffer out = Buffer.buffer(bytes.length - removed + inserted.length);
        out.appendBytes(bytes, 0, at);
        out.appendBytes(inserted);
        out.appendBytes(bytes, at + removed, bytes.length - at - removed);
        return out;
    }
}
