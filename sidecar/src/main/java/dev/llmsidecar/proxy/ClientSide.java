package dev.llmsidecar.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.util.function.Consumer;

/** The client connection (or HTTP/2 stream) an exchange answers, as far as the exchange drives it. */
interface ClientSide {

    Channel channel();

    /** The client is an HTTP/2 stream. */
    boolean http2();

    /** The next response head is that of a body relayed raw: the HTTP/1.x codec encodes only the head. */
    void relayNextBody();

    /**
     * Writes bytes beneath the connection's HTTP/1.x codec, straight to the socket's end of the pipeline: a body
     * relayed raw, framed and terminated as the engine framed it.
     */
    void writeRaw(ByteBuf bytes);

    /** The exchange's say on the client's reads: backpressure on a request body. */
    void setAutoRead(boolean on);

    /** Runs {@code action} once everything written so far has reached the socket (true) or failed (false). */
    void whenWritten(Consumer<Boolean> action);

    /** The exchange's response is complete (or cut): the connection serves its next request, or closes. */
    void exchangeDone(Object exchange, boolean close);
}
