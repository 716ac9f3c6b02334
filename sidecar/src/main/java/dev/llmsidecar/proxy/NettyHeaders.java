package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.RequestHead;
import dev.llmsidecar.observe.UpstreamHeaders;
import dev.llmsidecar.rewrite.Headers;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;

/** The seam's and the rewrite hook's views of Netty heads and headers. */
final class NettyHeaders {

    private NettyHeaders() {
    }

    /**
     * A client request's head: method, path (the request-target without its query) and headers.
     */
    record Head(HttpRequest request) implements RequestHead {
        @Override
        public String method() {
            return request.method().name();
        }

        @Override
        public String path() {
            String uri = request.uri();
            int query = uri.indexOf('?');
            return query < 0 ? uri : uri.substring(0, query);
        }

        @Override
        public String header(String name) {
            return request.headers().get(name);
        }

        @Override
        public Iterable<String> headerNames() {
            return request.headers().names();
        }
    }

    /** Headers as the observer (trace context) and a rewrite edit them: the upstream request's, or a response's. */
    record Upstream(HttpHeaders headers) implements UpstreamHeaders, Headers {
        @Override
        public String get(String name) {
            return headers.get(name);
        }

        @Override
        public void set(String name, String value) {
            headers.set(name, value);
        }

        @Override
        public void remove(String name) {
            headers.remove(name);
        }
    }
}
