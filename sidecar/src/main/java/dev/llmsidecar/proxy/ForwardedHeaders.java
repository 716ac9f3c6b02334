package dev.llmsidecar.proxy;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Headers across the proxy as RFC 9110 section 7.6.1 asks: hop-by-hop headers, and those the Connection header
 * names, stay behind. Edited in place on the message that is forwarded, so a request or response head is never
 * copied into a second map.
 */
final class ForwardedHeaders {

    private static final List<String> HOP_BY_HOP = List.of("connection", "keep-alive", "proxy-authenticate",
            "proxy-authorization", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
            // HTTP/2 to HTTP/1 conversion adds these (stream id, scheme): they describe the client's hop only
            "x-http2-stream-id", "x-http2-scheme", "x-http2-stream-dependency-id", "x-http2-stream-weight",
            "x-http2-path", "x-http2-stream-promise-id");

    private ForwardedHeaders() {
    }

    /** Removes the hop-by-hop headers of {@code headers} and those its Connection header names. */
    static void removeHopByHop(HttpHeaders headers) {
        String connection = headers.get(HttpHeaderNames.CONNECTION);
        if (connection != null) {
            List<String> named = new ArrayList<>(2);
            for (String token : connection.split(",")) {
                String t = token.trim().toLowerCase(Locale.ROOT);
                if (!t.isEmpty()) {
                    named.add(t);
                }
            }
            for (String name : named) {
                headers.remove(name);
            }
        }
        for (String name : HOP_BY_HOP) {
            headers.remove(name);
        }
    }
}
