package dev.llmsidecar.proxy;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;

/**
 * How the engine's response head is framed for the client, edited in place: hop-by-hop headers out; a body without
 * a length streamed chunked to an HTTP/1.1 client, or delimited by the connection's close for HTTP/1.0 (which has
 * no chunked framing); {@code Connection: close} when the connection ends with this response; an HTTP/1.0 client's
 * keep-alive said back to it. A rewrite that edits a length-framed body has the length dropped ({@code reframe}): the
 * entity stays exact, its framing becomes chunked. Plain: no channel, no state beyond its answer.
 */
final class ResponseFraming {

    /**
     * What the head says once framed.
     *
     * @param streamed the body has no length: it goes to the client as it comes (chunked, or until the close)
     * @param closeAfter the client's connection closes once this response is written
     */
    record Framed(boolean streamed, boolean closeAfter) {
    }

    private ResponseFraming() {
    }

    /**
     * @param clientVersion the client's HTTP version (HTTP/2 streams speak HTTP/1.1 objects)
     * @param http2 the client is an HTTP/2 stream: no connection-level headers, no chunked framing of its own
     * @param bodyless the response has no body whatever its headers say (HEAD, 204, 304)
     * @param reframe a rewrite edits this body: a Content-Length no longer holds
     * @param closeAfter the connection closes after this exchange already (HTTP/1.0, Connection: close, draining)
     */
    static Framed frame(HttpResponse r, HttpVersion clientVersion, boolean http2, boolean bodyless, boolean reframe,
            boolean closeAfter) {
        HttpHeaders h = r.headers();
        if (reframe) {
            h.remove(HttpHeaderNames.CONTENT_LENGTH);
        }
        boolean hasLength = h.contains(HttpHeaderNames.CONTENT_LENGTH);
        ForwardedHeaders.removeHopByHop(h);
        boolean streamed = !hasLength && !bodyless;
        if (streamed && !http2) {
            if (clientVersion == HttpVersion.HTTP_1_0) {
                closeAfter = true; // no chunked framing in HTTP/1.0: the end of the connection ends the body
            } else {
                h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            }
        }
        if (closeAfter && !http2) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        } else if (clientVersion == HttpVersion.HTTP_1_0) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        r.setProtocolVersion(http2 ? HttpVersion.HTTP_1_1 : clientVersion);
        return new Framed(streamed, closeAfter);
    }
}
