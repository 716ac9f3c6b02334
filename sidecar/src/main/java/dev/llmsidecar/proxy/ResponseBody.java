package dev.llmsidecar.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpContent;

/**
 * The body of one response on its way to the client, by one of two paths chosen once, at the response head:
 * {@link DecodedBody} (through the codecs, as HTTP objects) or {@link RelayedBody} (the engine's chunked bytes, relayed
 * raw beneath the client's codec). Either one hands each piece to the wire decoder with its arrival time, writes it to
 * the client unflushed (the exchange flushes once per upstream read, {@link FlowControl}) and says when the body
 * ended; what follows the end is the exchange's ({@code Exchange.responseEnded}), the same for both. Confined to the
 * exchange's event loop.
 */
sealed interface ResponseBody permits DecodedBody, RelayedBody {

    /** What one piece of the body did to the response. */
    enum Step {
        /** More of the body is to come. */
        MORE,
        /** The body ended whole, and its end was written to the client (unflushed). */
        END,
        /**
         * The body ended whole, and bytes followed it on the upstream connection: it cannot carry another response.
         */
        END_UPSTREAM_SPENT,
        /** A byte broke the body's framing: what came before it went to the client; both connections must close. */
        BROKEN
    }

    /** A piece of the body the codecs decoded, timestamped {@code arrived}; takes its reference. */
    Step onContent(HttpContent content, long arrived);

    /** A read of the body as the upstream socket produced it, timestamped {@code arrived}; takes its reference. */
    Step onRead(ByteBuf read, long arrived);

    /** What broke the framing ({@link Step#BROKEN}), for the log and the error. */
    String anomaly();

    /** The body broke off (the upstream closed or went quiet): what was held back reaches the client, unflushed. */
    void releaseHeld();

    /** The exchange is over: what was held back goes, unwritten. */
    void discard();
}
