package dev.llmsidecar.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayDeque;

/**
 * The request body of one exchange: how it travels ({@link Mode}), the cap on its size, the LLM body gathered whole
 * for inspection, what waits for the upstream connection, and the bytes kept for sending again (the keep-alive race,
 * a rewrite's resend): the body as sent and, where a rewrite edited it, the client's own. Owns every buffer it holds;
 * {@link #release} frees them. Confined to the exchange's event loop.
 */
final class RequestBody {

    /** How the request body travels. */
    enum Mode {
        /** There is none: the request can be sent again as it is. */
        NONE,
        /** Read whole (up to the inspection limit) before the request goes upstream: an LLM call. */
        INSPECT,
        /** Forwarded as it arrives, with backpressure. */
        PIPE
    }

    /** What one piece of the body means for the exchange. */
    enum Step {
        /** Gathered for inspection; more to come. */
        GATHERING,
        /** The whole body is gathered ({@link #gathered}): inspect it, then send. */
        WHOLE,
        /**
         * Not to be inspected (too large, or past the inspect budget: {@link #skipped}): what was gathered is queued,
         * and the body streams from now on ({@link Mode#PIPE}).
         */
        TOO_LARGE_TO_INSPECT,
        /** To be forwarded (the caller owns the piece): written upstream, or queued until a connection takes it. */
        FORWARD,
        /** Over the cap: released; nothing more is read or sent. */
        TOO_LARGE,
        /** Released: the body is complete or nothing expects it any more. */
        DROPPED
    }

    /** Why a body meant for inspection was piped instead. */
    enum Skipped {
        /** Larger than sidecar.llm.max-inspected-body-bytes. */
        TOO_LARGE,
        /** Past sidecar.limits.inspect-budget: other requests hold what it would need. */
        BUDGET
    }

    private final long maxBytes;
    private final int maxInspectedBytes;
    private final InspectBudget budget;
    private Mode mode;
    private Skipped skipped;
    private long reserved;                   // taken from the budget, given back by release()
    private CompositeByteBuf collected;      // INSPECT: the body read so far: the client's own buffers, not copied
    private ByteBuf toSend;                  // the whole body, kept until the response starts (a second attempt)
    private ByteBuf clientOwn;               // the client's own body while toSend is a rewrite's edit
    private boolean whole;                   // toSend (or its absence) is all of it: the request may be sent again
    private ArrayDeque<HttpContent> queued;  // PIPE: body read before a connection (rarely: made when needed)
    private long bytes;
    private boolean ended;

    /**
     * @param bodyFollows a body comes after the head
     * @param inspect the body is an LLM request's, read whole for inspection
     */
    RequestBody(boolean bodyFollows, boolean inspect, long maxBytes, int maxInspectedBytes, InspectBudget budget) {
        this.mode = !bodyFollows ? Mode.NONE : inspect ? Mode.INSPECT : Mode.PIPE;
        this.maxBytes = maxBytes;
        this.maxInspectedBytes = maxInspectedBytes;
        this.budget = budget;
        this.whole = mode == Mode.NONE;
    }

    Mode mode() {
        return mode;
    }

    long maxBytes() {
        return maxBytes;
    }

    /** A declared length over the cap: refused before a byte is read or sent. */
    boolean declaredTooLarge(long declared) {
        return declared > maxBytes;
    }

    /**
     * Starts gathering an LLM body ({@link Mode#INSPECT}): the client's buffers as they come (direct memory, not
     * copied; inspection reads them in place), its declared length taken from the budget at once (a body without one
     * takes it as it arrives). A declared length over the inspection limit, or past the budget, is piped from the start
     * ({@link #mode} is then {@link Mode#PIPE}, {@link #skipped} says why).
     *
     * @param declaredLength the Content-Length, or -1 for none
     */
    void startGathering(ByteBufAllocator alloc, long declaredLength) {
        if (declaredLength > maxInspectedBytes) {
            skip(Skipped.TOO_LARGE);
            return;
        }
        if (declaredLength >= 0 && !reserve(declaredLength)) {
            skip(Skipped.BUDGET);
            return;
        }
        collected = alloc.compositeBuffer(Integer.MAX_VALUE);
    }

    private boolean reserve(long n) {
        if (!budget.tryReserve(n)) {
            return false;
        }
        reserved += n;
        return true;
    }

    private void skip(Skipped why) {
        mode = Mode.PIPE;
        skipped = why;
    }

    /** Why a body meant for inspection is piped, or null. */
    Skipped skipped() {
        return skipped;
    }

    /** One piece of the body from the client; this takes its reference except for {@link Step#FORWARD}. */
    Step accept(HttpContent content) {
        if (ended || mode == Mode.NONE) {
            content.release();
            return Step.DROPPED;
        }
        bytes += content.content().readableBytes();
        if (bytes > maxBytes) {
            content.release();
            return Step.TOO_LARGE;
        }
        boolean last = content instanceof LastHttpContent;
        ended = last;
        if (mode != Mode.INSPECT) {
            return Step.FORWARD;
        }
        int n = content.content().readableBytes();
        Skipped why = null;
        if (collected.readableBytes() + n > maxInspectedBytes) {
            why = Skipped.TOO_LARGE;
        } else if (collected.readableBytes() + n > reserved && !reserve(collected.readableBytes() + n - reserved)) {
            why = Skipped.BUDGET; // a body without a declared length takes the budget as it arrives
        }
        if (why != null) {
            // not to be inspected: what was read goes first, the rest streams untouched
            skip(why);
            queue(new DefaultHttpContent(collected));
            queue(content);
            collected = null;
            return Step.TOO_LARGE_TO_INSPECT;
        }
        if (n > 0) {
            collected.addComponent(true, content.content().retain());
        }
        content.release();
        return last ? Step.WHOLE : Step.GATHERING;
    }

    /** The whole gathered body, handed over (the caller inspects it, then gives back what to send). */
    ByteBuf gathered() {
        ByteBuf read = collected;
        collected = null;
        return read;
    }

    /**
     * What goes upstream, held whole: {@code sent}, and {@code clientOwn} when a rewrite made {@code sent} from it
     * (both kept for a second attempt).
     */
    void holdWhole(ByteBuf sent, ByteBuf clientOwn) {
        this.toSend = sent;
        this.clientOwn = clientOwn == sent ? null : clientOwn;
        this.whole = true;
    }

    /** The request may be sent again as it is: its whole body is held (or it has none). */
    boolean whole() {
        return whole;
    }

    /** The last piece of a body that follows the head has arrived. */
    boolean ended() {
        return ended;
    }

    /** Bytes of the whole body to send ({@link #whole}), 0 for none. */
    int wholeLength() {
        return toSend == null ? 0 : toSend.readableBytes();
    }

    /** The last content of the request as sent, for one attempt (a duplicate: the body stays held for another). */
    LastHttpContent wholeContent() {
        return toSend == null ? LastHttpContent.EMPTY_LAST_CONTENT
                : new io.netty.handler.codec.http.DefaultLastHttpContent(toSend.retainedDuplicate());
    }

    /** The request goes again as the client wrote it: its own body from now on. */
    void backToTheClientsOwn() {
        if (clientOwn != null) {
            toSend.release();
            toSend = clientOwn;
            clientOwn = null;
        }
    }

    void queue(HttpContent content) {
        if (queued == null) {
            queued = new ArrayDeque<>(4);
        }
        queued.add(content);
    }

    /** The next piece that waited for a connection, or null. */
    HttpContent pollQueued() {
        return queued == null ? null : queued.poll();
    }

    /** The response started: the body is not needed again. Nothing it holds stays. */
    void release() {
        if (toSend != null) {
            toSend.release();
            toSend = null;
        }
        if (clientOwn != null) {
            clientOwn.release();
            clientOwn = null;
        }
        if (collected != null) {
            collected.release();
            collected = null;
        }
        for (HttpContent c; queued != null && (c = queued.poll()) != null;) {
            c.release();
        }
        budget.release(reserved);
        reserved = 0;
    }
}
