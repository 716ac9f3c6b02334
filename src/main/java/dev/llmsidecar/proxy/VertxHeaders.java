package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.RequestHead;
import dev.llmsidecar.observe.UpstreamHeaders;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpServerRequest;

/** The observer's views of Vert.x requests and headers. */
final class VertxHeaders {

    private VertxHeaders() {
    }

    /** A client request's head. */
    record Head(HttpServerRequest request) implements RequestHead {
        @Override
        public String method() {
            return request.method().name();
        }

        @Override
        public String path() {
            return request.path();
        }

        @Override
        public String header(String name) {
            return request.getHeader(name);
        }

        @Override
        public Iterable<String> headerNames() {
            return request.headers().names();
        }
    }

    /** The headers of the request the sidecar sends upstream. */
    record Upstream(MultiMap headers) implements UpstreamHeaders {
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
