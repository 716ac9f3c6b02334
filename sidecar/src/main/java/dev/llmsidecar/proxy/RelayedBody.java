package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.proxy.FlowControl.Written;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * A response body relayed raw: the engine's chunked bytes go to the client as its reads held them, framing and all,
 * written beneath the client's codec by a {@link RawRelay}, which hands the wire decoder the data ranges where they
 * lie. Taken at the head of a chunked body for an HTTP/1.1 client ({@link #fallback} says when not); the upstream
 * connection then hands on its reads undecoded until the body's end gives it back to its codec.
 */
final class RelayedBody implements ResponseBody {

    private final RawRelay relay;
    private final Channel clientChannel;
    private final FlowControl flow;
    private final UpstreamConnection upstream;
    private final ExchangeContext context;

    /** @param llm what decodes the body, or null for none */
    RelayedBody(ClientSide client, LlmCall llm, FlowControl flow, UpstreamConnection upstream,
            ExchangeContext context) {
        this.relay = new RawRelay(llm != null ? llm : RawRelay.NONE, client::writeRaw);
        this.clientChannel = client.channel();
        this.flow = flow;
        this.upstream = upstream;
        this.context = context;
    }

    /** Why a response's body does not go by the raw relay, or null when it does. */
    static ProxyEvent fallback(boolean enabled, boolean http2, HttpVersion clientVersion, boolean reframe,
            boolean chunked) {
        if (!enabled) {
            return ProxyEvent.RELAY_FALLBACK_DISABLED;
        }
        if (http2) {
            return ProxyEvent.RELAY_FALLBACK_HTTP2_CLIENT;
        }
        if (clientVersion != HttpVersion.HTTP_1_1) {
            return ProxyEvent.RELAY_FALLBACK_HTTP10_CLIENT;
        }
        if (reframe) {
            return ProxyEvent.RELAY_FALLBACK_REFRAMED;
        }
        return chunked ? null : ProxyEvent.RELAY_FALLBACK_NOT_CHUNKED;
    }

    /**
     * The timestamping point of the relay: the read is stamped as it arrives, its data ranges decoded where they lie,
     * and the read itself written beneath the client's codec; the flush waits for the end of the read.
     */
    @Override
    public Step onRead(ByteBuf read, long arrived) {
        RawRelay.Step step = relay.onRead(read, arrived);
        flow.wrote(relay.wroteData() ? Written.DATA : relay.wrote() ? Written.FRAMING : Written.NOTHING, arrived);
        return switch (step) {
            case MORE -> Step.MORE;
            case END -> {
                ended();
                upstream.endRelay(); // the connection's next read is a response head again
                yield Step.END;
            }
            case END_WITH_MORE_BYTES -> {
                ended();
                context.traffic().count(ProxyEvent.RELAY_FRAMING_ANOMALY); // bytes after the body: never pooled again
                yield Step.END_UPSTREAM_SPENT;
            }
            case ANOMALY -> {
                context.traffic().count(ProxyEvent.RELAY_FRAMING_ANOMALY);
                context.server().warnOnce("framing_anomaly", "an upstream response broke the chunked framing ("
                        + relay.anomaly() + "); what came before went to the client and both connections were "
                        + "closed. Further ones are counted in llm_sidecar_upstream_framing_anomalies_total, not "
                        + "logged");
                yield Step.BROKEN;
            }
        };
    }

    /** The relay wrote the engine's last chunk (the decoder's held bytes before it): the client's codec is readied. */
    private void ended() {
        if (relay.reframed()) {
            context.traffic().count(ProxyEvent.RELAY_REFRAMED);
        }
        // the client codec encoded only the head: its empty last content writes nothing and readies it for the next
        clientChannel.write(LastHttpContent.EMPTY_LAST_CONTENT, clientChannel.voidPromise());
    }

    /** Never called: once the body is relayed, the upstream codec decodes nothing until its end. */
    @Override
    public Step onContent(HttpContent content, long arrived) {
        content.release();
        return Step.MORE;
    }

    @Override
    public String anomaly() {
        return relay.anomaly();
    }

    @Override
    public void releaseHeld() {
        relay.releaseHeld(); // what was held back reaches the client, as it would directly
    }

    @Override
    public void discard() {
        relay.discard();
    }
}
