package dev.llmsidecar.proxy;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A defect put in on purpose, for the timing tests to prove they catch it: every byte on its way to a client's socket
 * is held after the sidecar stamped it ({@value #PROPERTY}, e.g. {@code 2ms}: written that much later from a scheduled
 * task, the event loop free meanwhile; {@code spin:2ms}: the event loop spins that long before each write). It sits
 * first in the client connection's pipeline, next to the socket, so it holds the raw relay and the object path, HTTP/1
 * and every HTTP/2 stream alike, and the sidecar's own view (its stamps, its flush timing) does not see it.
 *
 * <p>Off unless the property is set when this class loads; off, the handler is never added and no path of the proxy
 * tests anything per event ({@link #ON} is a constant).
 */
final class RelayHold extends ChannelOutboundHandlerAdapter {

    static final String PROPERTY = "llm-sidecar.test.relay-hold";
    private static final Pattern FORMAT = Pattern.compile("(spin:)?(\\d+)(ms|us)");

    /** How long each write is held, nanoseconds (0: off). */
    static final long NANOS;
    /** Held by spinning the event loop rather than by a scheduled write. */
    static final boolean SPIN;
    static final boolean ON;

    static {
        String value = System.getProperty(PROPERTY, "");
        Matcher m = FORMAT.matcher(value);
        if (!value.isEmpty() && !m.matches()) {
            throw new IllegalArgumentException(PROPERTY + "=" + value + ": expected e.g. 2ms, 500us or spin:2ms");
        }
        NANOS = value.isEmpty() ? 0
                : (m.group(3).equals("ms") ? TimeUnit.MILLISECONDS : TimeUnit.MICROSECONDS)
                        .toNanos(Long.parseLong(m.group(2)));
        SPIN = !value.isEmpty() && m.group(1) != null;
        ON = NANOS > 0;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (SPIN) {
            long until = System.nanoTime() + NANOS;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            ctx.write(msg, promise);
        } else {
            // equal delays keep the order: the loop runs scheduled tasks by deadline, then by submission
            ctx.executor().schedule(() -> ctx.write(msg, promise), NANOS, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (SPIN) {
            ctx.flush();
        } else {
            ctx.executor().schedule(ctx::flush, NANOS, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        if (SPIN) {
            ctx.close(promise);
        } else {
            ctx.executor().schedule(() -> ctx.close(promise), NANOS, TimeUnit.NANOSECONDS);
        }
    }
}
