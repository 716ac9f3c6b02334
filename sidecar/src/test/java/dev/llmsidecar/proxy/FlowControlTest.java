package dev.llmsidecar.proxy;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.proxy.FlowControl.Stall;
import dev.llmsidecar.proxy.FlowControl.Written;
import dev.llmsidecar.timeline.Outcome;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link FlowControl} on Netty {@code EmbeddedChannel}s, without a socket: a client channel that can be made to take
 * no more bytes (its writes stay queued, as behind a full socket buffer), and an upstream connection whose autoRead
 * says whether the exchange reads it. Timeouts are checked with the clock handed in.
 */
class FlowControlTest {

    static final long IDLE = 1_000_000;
    static final long BODY = 2_000_000;
    static final long SEND = 3_000_000;

    /** A client's channel that stops taking bytes while {@link #full}: what is flushed stays queued in it. */
    static final class ClientChannel extends EmbeddedChannel {
        boolean full;

        ClientChannel() {
            config().setWriteBufferWaterMark(new WriteBufferWaterMark(8, 16));
        }

        @Override
        protected void doWrite(ChannelOutboundBuffer in) throws Exception {
            if (!full) {
                super.doWrite(in);
            }
        }

        /** What reached the socket so far, consumed. */
        String sent() {
            StringBuilder out = new StringBuilder();
            for (Object m; (m = readOutbound()) != null;) {
                ByteBuf b = (ByteBuf) m;
                out.append(b.toString(ISO_8859_1));
                b.release();
            }
            return out.toString();
        }
    }

    /** The client's connection as the exchange drives it: its reads on or off, and when its writes reached it. */
    static final class Client implements ClientSide {
        final ClientChannel channel = new ClientChannel();
        final List<Boolean> reads = new ArrayList<>();

        @Override
        public Channel channel() {
            return channel;
        }

        @Override
        public boolean http2() {
            return false;
        }

        @Override
        public void relayNextBody() {
        }

        @Override
        public void writeRaw(ByteBuf bytes) {
            channel.write(bytes);
        }

        @Override
        public void setAutoRead(boolean on) {
            reads.add(on);
        }

        /** As the client handler: once what was written before reached the socket. */
        @Override
        public void whenWritten(Consumer<Boolean> action) {
            channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(f -> action.accept(f.isSuccess()));
        }

        @Override
        public void exchangeDone(Object exchange, boolean close) {
        }
    }

    /** What the flow reports: writes timed to the socket, the client's pauses. */
    static final class Observed implements ExchangeObserver {
        final List<long[]> written = new ArrayList<>();
        final List<Long> paused = new ArrayList<>();
        final List<Long> resumed = new ArrayList<>();

        @Override
        public void written(long arrivedNanos, long writtenNanos) {
            written.add(new long[] {arrivedNanos, writtenNanos});
        }

        @Override
        public void clientPaused(long nanos) {
            paused.add(nanos);
        }

        @Override
        public void clientResumed(long nanos) {
            resumed.add(nanos);
        }

        @Override
        public void ended(Outcome outcome, int status, long nanos) {
        }
    }

    private final Client client = new Client();
    private final Observed observed = new Observed();
    private final ClientChannel upstreamChannel = new ClientChannel();
    private final UpstreamConnection upstream = new UpstreamConnection(upstreamChannel, null, null, true);
    private final FlowControl flow = new FlowControl(client, observed, new ExchangeContext(null, null, null, false,
            0, 0, 0, IDLE, true, BODY, SEND, null, null));

    @AfterEach
    void close() {
        client.channel.full = false;
        client.channel.finishAndReleaseAll();
        upstreamChannel.full = false;
        upstreamChannel.finishAndReleaseAll();
    }

    private void write(String s) {
        client.channel.write(Unpooled.copiedBuffer(s, ISO_8859_1));
    }

    @Test
    void aReadIsFlushedOnceAtItsEndAndTimedFromTheArrivalOfItsFirstData() {
        flow.wrote(Written.DATA, 100);
        write("data: a\n\n");
        flow.wrote(Written.DATA, 200);
        write("data: b\n\n");
        assertThat(client.channel.sent()).as("nothing flushed before the read is complete").isEmpty();

        long before = System.nanoTime();
        flow.flushRead(upstream);
        assertThat(client.channel.sent()).isEqualTo("data: a\n\ndata: b\n\n");
        assertThat(observed.written).hasSize(1);
        assertThat(observed.written.get(0)[0]).as("timed from the first data's arrival").isEqualTo(100);
        assertThat(observed.written.get(0)[1]).isGreaterThanOrEqualTo(before);

        flow.flushRead(upstream);
        assertThat(observed.written).as("a read is flushed and timed once").hasSize(1);

        flow.wrote(Written.DATA, 300);
        write("data: c\n\n");
        flow.flushRead(upstream);
        assertThat(client.channel.sent()).isEqualTo("data: c\n\n");
        assertThat(observed.written).hasSize(2);
        assertThat(observed.written.get(1)[0]).isEqualTo(300);
    }

    @Test
    void framingAloneIsFlushedUntimedAndDataAfterItIsTimedFromItsOwnArrival() {
        flow.wrote(Written.FRAMING, 100);
        write("0\r\n\r\n");
        flow.flushRead(upstream);
        assertThat(client.channel.sent()).isEqualTo("0\r\n\r\n");
        assertThat(observed.written).as("framing alone is not timed").isEmpty();

        flow.wrote(Written.FRAMING, 100);
        write("5\r\n");
        flow.wrote(Written.DATA, 150);
        write("hello\r\n");
        flow.wrote(Written.FRAMING, 180);
        flow.flushRead(upstream);
        assertThat(client.channel.sent()).isEqualTo("5\r\nhello\r\n");
        assertThat(observed.written).hasSize(1);
        assertThat(observed.written.get(0)[0]).as("from the data's arrival, not the framing's").isEqualTo(150);
    }

    @Test
    void writesThatOweNoFlushWaitForTheEndWhichFlushesThemUntimed() {
        flow.wrote(Written.NOTHING, 100);
        write("held back");
        flow.flushRead(upstream);
        assertThat(client.channel.sent()).as("no flush is due").isEmpty();

        flow.flushEnd(upstream);
        assertThat(client.channel.sent()).isEqualTo("held back");
        assertThat(observed.written).isEmpty();
    }

    @Test
    void aClientThatTakesNoMorePausesTheUpstreamUntilItIsWritableAndItsDataIsTimedWhenItGetsIt() {
        client.channel.full = true;
        flow.wrote(Written.DATA, 100);
        write("more than the client's sixteen bytes");
        flow.flushRead(upstream);
        assertThat(client.channel.isWritable()).isFalse();
        assertThat(upstreamChannel.config().isAutoRead()).as("the upstream is not read").isFalse();
        assertThat(observed.paused).hasSize(1);
        assertThat(observed.written).as("not on the socket yet").isEmpty();

        flow.wrote(Written.DATA, 200);
        write("and more");
        flow.flushRead(upstream);
        assertThat(observed.paused).as("paused once").hasSize(1);

        client.channel.full = false;
        long drained = System.nanoTime();
        client.channel.flush();
        assertThat(client.channel.sent()).isEqualTo("more than the client's sixteen bytesand more");
        assertThat(observed.written).as("each read timed when its bytes reached the socket").hasSize(2);
        assertThat(observed.written.get(0)[0]).isEqualTo(100);
        assertThat(observed.written.get(1)[0]).isEqualTo(200);
        assertThat(observed.written.get(0)[1]).isGreaterThanOrEqualTo(drained);

        flow.clientWritable(upstream);
        assertThat(upstreamChannel.config().isAutoRead()).isTrue();
        assertThat(observed.resumed).hasSize(1);
        long resumed = observed.resumed.get(0);
        assertThat(flow.upstreamQuietNanos(resumed)).as("the upstream's silence counts from the resume").isZero();
        flow.clientWritable(upstream);
        assertThat(observed.resumed).as("resumed once").hasSize(1);
    }

    @Test
    void aClientThatTakesNoMoreIsNoUpstreamStallButStallsPastTheSendTimeout() {
        flow.upstreamMoved(0);
        client.channel.full = true;
        flow.wrote(Written.DATA, 0);
        write("more than the client's sixteen bytes");
        long before = System.nanoTime();
        flow.flushRead(upstream);
        long pausedAt = observed.paused.get(0);
        assertThat(pausedAt).isGreaterThanOrEqualTo(before);

        long quietLong = pausedAt + SEND - 1;
        assertThat(flow.upstreamQuietNanos(quietLong)).as("past the idle timeout").isGreaterThan(IDLE);
        assertThat(flow.stalled(quietLong, false, false, true)).as("a paused read is no upstream stall")
                .isEqualTo(Stall.NONE);
        assertThat(flow.stalled(pausedAt + SEND, false, false, true)).isEqualTo(Stall.CLIENT);
    }

    @Test
    void theUpstreamStallsPastTheIdleTimeoutOnceTheRequestWasSent() {
        flow.upstreamMoved(10);
        assertThat(flow.stalled(10 + IDLE, false, false, false)).as("no request sent yet").isEqualTo(Stall.NONE);
        assertThat(flow.stalled(10 + IDLE - 1, false, false, true)).isEqualTo(Stall.NONE);
        assertThat(flow.stalled(10 + IDLE, false, false, true)).isEqualTo(Stall.UPSTREAM);
        assertThat(flow.upstreamQuietNanos(10 + IDLE)).isEqualTo(IDLE);
        flow.upstreamMoved(20 + IDLE);
        assertThat(flow.stalled(20 + IDLE, false, false, true)).isEqualTo(Stall.NONE);
    }

    @Test
    void theBodyTimeoutRunsOnlyWhileTheSidecarIsReadyToReadTheBody() {
        flow.requestBodyMoved(0);
        assertThat(flow.stalled(BODY - 1, true, false, false)).isEqualTo(Stall.NONE);
        assertThat(flow.stalled(BODY, false, false, false)).as("no more body to come").isEqualTo(Stall.NONE);
        assertThat(flow.stalled(BODY, true, true, false)).as("held: no connection to take it yet")
                .isEqualTo(Stall.NONE);
        assertThat(flow.stalled(2 * BODY - 1, true, false, false)).as("its clock restarted where it was held")
                .isEqualTo(Stall.NONE);
        assertThat(flow.stalled(2 * BODY, true, false, false)).isEqualTo(Stall.REQUEST_BODY);
    }

    @Test
    void anUpstreamThatTakesNoMoreRequestBodyPausesTheClientsReadsAndItsBodyClock() {
        upstreamChannel.full = true;
        upstreamChannel.writeAndFlush(Unpooled.copiedBuffer("more than sixteen bytes of body", ISO_8859_1));
        flow.wroteRequestBody(upstreamChannel);
        flow.wroteRequestBody(upstreamChannel);
        assertThat(client.reads).as("the client's reads off, once").containsExactly(false);
        assertThat(flow.pausedForUpstream()).isTrue();

        flow.requestBodyMoved(0);
        assertThat(flow.stalled(BODY, true, false, false)).as("the sidecar holds the client's reads")
                .isEqualTo(Stall.NONE);

        flow.upstreamWritable();
        flow.upstreamWritable();
        assertThat(client.reads).containsExactly(false, true);
        assertThat(flow.pausedForUpstream()).isFalse();
        assertThat(flow.stalled(2 * BODY, true, false, false)).isEqualTo(Stall.REQUEST_BODY);
    }
}
