package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ProxyEvent;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;

/**
 * The response as the client gets it: the engine's head, framed for the client ({@link ResponseFraming}), and the path
 * its body takes ({@link ResponseBody}), or the sidecar's own error in its place; and whether the client's connection
 * carries another request after it. Confined to the exchange's event loop.
 */
final class ClientResponse {

    private final ExchangeContext context;
    private final ClientSide client;
    private final Channel clientChannel;
    private final HttpVersion clientVersion;
    private final boolean http2;
    private final boolean headRequest;
    private final LlmCall llm;               // null: not an LLM call
    private final FlowControl flow;
    private boolean closeAfter;              // the client's connection ends with this exchange

    ClientResponse(ExchangeContext context, ClientSide client, HttpRequest request, LlmCall llm, FlowControl flow) {
        this.context = context;
        this.client = client;
        this.clientChannel = client.channel();
        this.clientVersion = request.protocolVersion();
        this.http2 = client.http2();
        this.headRequest = HttpMethod.HEAD.equals(request.method());
        this.llm = llm;
        this.flow = flow;
        this.closeAfter = !http2 && (clientVersion == HttpVersion.HTTP_1_0 || !HttpUtil.isKeepAlive(request));
    }

    /**
     * Frames the engine's head {@code r}, taken for the client, and writes it. Returns the path its body takes,
     * chosen here, once.
     *
     * @param upstream the connection it came on (a body relayed raw is read from it undecoded)
     */
    ResponseBody writeHead(HttpResponse r, long now, UpstreamConnection upstream) {
        int code = r.status().code();
        HttpHeaders h = r.headers();
        boolean bodyless = headRequest || code == 204 || code == 304 || code < 200;
        boolean chunked = HttpUtil.isTransferEncodingChunked(r); // as the upstream codec reads the body
        boolean reframe = llm != null && llm.onResponseHead(code, h, h.contains(HttpHeaderNames.CONTENT_LENGTH), now);
        ResponseFraming.Framed framed = ResponseFraming.frame(r, clientVersion, http2, bodyless, reframe,
                closeAfter || context.server().draining());
        closeAfter = framed.closeAfter();
        ResponseBody body = bodyless ? new DecodedBody(clientChannel, llm, flow) : body(chunked, reframe, upstream);
        clientChannel.write(r, clientChannel.voidPromise());
        if (framed.streamed()) {
            // a streaming client sees the headers when the engine sends them, not with the first token
            clientChannel.flush();
        }
        return body;
    }

    /** The raw relay where it can take the body; chosen before the head is written, which the client's codec needs. */
    private ResponseBody body(boolean chunked, boolean reframe, UpstreamConnection upstream) {
        ProxyEvent fallback = RelayedBody.fallback(context.rawRelay(), http2, clientVersion, reframe, chunked);
        if (fallback != null) {
            context.traffic().count(fallback);
            return new DecodedBody(clientChannel, llm, flow);
        }
        RelayedBody relayed = new RelayedBody(client, llm, flow, upstream, context);
        client.relayNextBody();
        upstream.relayBody();
        return relayed;
    }

    /** Writes the sidecar's own error in place of the engine's response (no head of the engine's went out). */
    ChannelFuture writeError(SidecarError error, String detail) {
        boolean close = closeAfter || context.server().draining();
        closeAfter = close;
        return clientChannel.writeAndFlush(error.response(http2 ? HttpVersion.HTTP_1_1 : clientVersion, detail,
                close && !http2));
    }

    /** The client's connection ends with this exchange (the rest of its request body is not read). */
    void closeAfter() {
        closeAfter = true;
    }

    /** The client's connection ends with this exchange: it serves no further request. */
    boolean closesAfter() {
        return closeAfter;
    }

    /** The client stopped reading: its connection is reset at once, not closed behind what it has not read. */
    void abort() {
        if (!http2) {
            // a reset, not a FIN behind what the kernel still holds for a client that does not read (megabytes
            // there, delivered at the pace it reads): as nginx's reset_timedout_connection
            clientChannel.config().setOption(ChannelOption.SO_LINGER, 0);
        }
        clientChannel.close(); // not once written: the client is not reading (an HTTP/2 stream is reset)
    }
}
