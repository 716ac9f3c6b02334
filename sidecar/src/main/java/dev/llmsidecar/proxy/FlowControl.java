package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ExchangeObserver;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;

/**
 * How one exchange's bytes flow between its two connections, apart from its life ({@link ExchangeState}): what the
 * current upstream read wrote to the client and has not flushed (one flush per read, as nginx does: one
 * {@code writev}), the way of those bytes to the client's socket, timed; which side is paused for the other; and when
 * each side last moved, so that a side the sidecar holds back is never taken for one that stalled. Confined to the
 * exchange's event loop.
 */
final class FlowControl {

    /** What writes to the client carried since the last flush. */
    enum Written {
        /** Nothing: no flush is due. */
        NOTHING,
        /** Framing alone (a relayed body's last chunk): flushed, not timed, as the object path's empty last content. */
        FRAMING,
        /** Some of the body's data: the flush is timed from the arrival of the read that brought it. */
        DATA
    }

    /** Which side stalled past its timeout. */
    enum Stall {
        /** Each side moved within its timeout, or is held back by the sidecar. */
        NONE,
        /** The client sent no request-body bytes for the body timeout while the sidecar was ready to read them. */
        REQUEST_BODY,
        /** The client read nothing for the send timeout while the sidecar's writes to it were blocked. */
        CLIENT,
        /** No upstream bytes for the idle timeout while the client was taking what came. */
        UPSTREAM
    }

    private final ClientSide client;
    private final Channel clientChannel;
    private final boolean http2;
    private final ExchangeObserver observer;
    private final ExchangeContext context;

    private Written unflushed = Written.NOTHING;
    private long unflushedSince;             // arrival of the read the flush is timed from
    private boolean pausedForClient;         // the upstream's reads are off: the client's connection is full
    private long pausedForClientSince;       // the send timeout runs from here
    private boolean pausedForUpstream;       // the client's reads are off: the upstream connection is full
    private long lastUpstreamNanos;          // the upstream's last bytes (the idle timeout)
    private long lastRequestBodyNanos;       // the client's last request-body bytes (the body timeout)

    FlowControl(ClientSide client, ExchangeObserver observer, ExchangeContext context) {
        this.client = client;
        this.clientChannel = client.channel();
        this.http2 = client.http2();
        this.observer = observer;
        this.context = context;
    }

    // ------------------------------------------------------------------------------------ response, to the client

    /**
     * A write to the client of what a read that arrived at {@code arrived} brought. The flush is timed from the first
     * read whose data it carries: framing written before that data does not start the clock.
     */
    void wrote(Written what, long arrived) {
        if (what == Written.NOTHING) {
            return;
        }
        if (unflushed == Written.NOTHING) {
            unflushed = what;
            unflushedSince = arrived;
        } else if (unflushed == Written.FRAMING && what == Written.DATA) {
            unflushed = Written.DATA;
            unflushedSince = arrived;
        }
    }

    /**
     * Flushes what the current read wrote, times its way to the client's socket, and pauses the upstream's reads
     * while the client lags.
     *
     * @param upstream the exchange's upstream connection, or null when it holds none (nothing to pause)
     */
    void flushRead(UpstreamConnection upstream) {
        if (unflushed == Written.NOTHING) {
            return;
        }
        Written flushed = unflushed;
        unflushed = Written.NOTHING;
        long arrived = unflushedSince;
        if (!clientChannel.isActive()) {
            return;
        }
        clientChannel.flush();
        if (flushed == Written.DATA) {
            ChannelOutboundBuffer queuedOut = clientChannel.unsafe().outboundBuffer();
            if (!http2 && (queuedOut == null || queuedOut.totalPendingWriteBytes() == 0)) {
                observer.written(arrived, System.nanoTime()); // the kernel has every byte
            } else {
                client.whenWritten(ok -> {
                    if (ok) {
                        observer.written(arrived, System.nanoTime());
                    }
                });
            }
        }
        if (!clientChannel.isWritable() && !pausedForClient && upstream != null) {
            // slow client: stop reading upstream until the client has drained what we hold
            pausedForClient = true;
            pausedForClientSince = System.nanoTime();
            upstream.channel.config().setAutoRead(false);
            observer.clientPaused(pausedForClientSince);
        }
    }

    /**
     * The body's end: the read is flushed and timed as any read, then whatever else was written (the end's framing,
     * what the decoder still held), untimed.
     */
    void flushEnd(UpstreamConnection upstream) {
        flushRead(upstream);
        clientChannel.flush();
    }

    /** The client's connection can take more: the upstream's reads resume, if they were paused for it. */
    void clientWritable(UpstreamConnection upstream) {
        if (pausedForClient && upstream != null) {
            pausedForClient = false;
            lastUpstreamNanos = System.nanoTime();
            upstream.channel.config().setAutoRead(true);
            observer.clientResumed(lastUpstreamNanos);
        }
    }

    // ----------------------------------------------------------------------------------- request, to the upstream

    /** A piece of the request body was written to {@code upstream}: the client's reads pause if it is full. */
    void wroteRequestBody(Channel upstream) {
        if (!upstream.isWritable() && !pausedForUpstream) {
            pausedForUpstream = true;
            client.setAutoRead(false);
        }
    }

    /** The upstream connection can take more of the request body: the client's reads resume, if paused for it. */
    void upstreamWritable() {
        if (pausedForUpstream) {
            pausedForUpstream = false;
            client.setAutoRead(true);
        }
    }

    /** The client's reads are off until the upstream connection takes more of the request body. */
    boolean pausedForUpstream() {
        return pausedForUpstream;
    }

    // ------------------------------------------------------------------------------------------------- timeouts

    /** Bytes came from upstream at {@code nanos} (or the exchange started waiting for them). */
    void upstreamMoved(long nanos) {
        lastUpstreamNanos = nanos;
    }

    /** Request-body bytes came from the client at {@code nanos} (or the exchange started waiting for them). */
    void requestBodyMoved(long nanos) {
        lastRequestBodyNanos = nanos;
    }

    /** How long the upstream has sent nothing. */
    long upstreamQuietNanos(long now) {
        return now - lastUpstreamNanos;
    }

    /**
     * Which side, if any, stalled past its timeout at {@code now}: the request body first, then (once a response is
     * awaited) the client if the upstream's reads are paused for it, else the upstream. A side the sidecar holds back
     * is not stalled: its clock restarts.
     *
     * @param requestBodyComing more of a request body is to come from the client
     * @param requestBodyHeld the sidecar holds the client's body reads back (no upstream connection yet)
     * @param responseAwaited the request was sent: the upstream's silence counts from now on
     */
    Stall stalled(long now, boolean requestBodyComing, boolean requestBodyHeld, boolean responseAwaited) {
        if (requestBodyComing) {
            if (pausedForUpstream || requestBodyHeld) {
                lastRequestBodyNanos = now;
            } else if (now - lastRequestBodyNanos >= context.requestBodyTimeoutNanos()) {
                return Stall.REQUEST_BODY;
            }
        }
        if (!responseAwaited) {
            return Stall.NONE;
        }
        if (pausedForClient) {
            lastUpstreamNanos = now; // a slow client pausing the read is not an upstream stall
            return now - pausedForClientSince >= context.sendTimeoutNanos() ? Stall.CLIENT : Stall.NONE;
        }
        return now - lastUpstreamNanos >= context.upstreamIdleNanos() ? Stall.UPSTREAM : Stall.NONE;
    }
}
