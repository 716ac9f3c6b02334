package dev.llmsidecar.proxy;

import io.netty.channel.ConnectTimeoutException;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.util.concurrent.TimeoutException;

/**
 * Every answer the sidecar gives in place of the engine, in one place: the status, the {@code x-llm-sidecar-error}
 * header value, and an OpenAI-style JSON error body ({@code {"error":{"message","type","code"}}}), so that clients
 * and their SDKs read it like an engine's error and an SRE can tell it apart from one.
 */
enum SidecarError {

    /** No response (or no bytes) from upstream within the idle timeout, or the connect timed out. */
    UPSTREAM_TIMEOUT(504, "upstream_timeout", "upstream timed out", "upstream_error"),
    /** Refused, no route, unknown host. */
    UPSTREAM_UNREACHABLE(502, "upstream_unreachable", "upstream unreachable", "upstream_error"),
    /** The connection closed (or was reset) before any response byte: an engine crashing on the request, say. */
    UPSTREAM_CLOSED(502, "upstream_closed", "upstream closed the connection before responding", "upstream_error"),
    /** Graceful shutdown: the client or balancer retries elsewhere. */
    SHUTTING_DOWN(503, "shutting_down", "shutting down", "unavailable"),
    /** The request body is larger than sidecar.proxy.max-request-body-bytes. */
    BODY_TOO_LARGE(413, "request_body_too_large", "request body too large", "invalid_request_error");

    final int status;
    final String header;
    private final String message;
    private final String type;

    SidecarError(int status, String header, String message, String type) {
        this.status = status;
        this.header = header;
        this.message = message;
        this.type = type;
    }

    /** The answer for an upstream request that failed before its response started. */
    static SidecarError beforeResponse(Throwable cause) {
        if (cause instanceof TimeoutException || cause instanceof ConnectTimeoutException) {
            return UPSTREAM_TIMEOUT;
        }
        if (cause instanceof ConnectException || cause instanceof UnknownHostException
                || cause instanceof NoRouteToHostException) {
            return UPSTREAM_UNREACHABLE;
        }
        return UPSTREAM_CLOSED;
    }

    /** Sends this error as the whole response; {@code detail} (may be null) is appended to the message. */
    void send(HttpServerResponse response, String detail) {
        response.setStatusCode(status)
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                .putHeader("x-llm-sidecar-error", header);
        String text = detail == null ? message : message + ": " + detail;
        response.end("{\"error\":{\"message\":\"llm-sidecar: " + text + "\",\"type\":\"" + type + "\",\"code\":"
                + status + "}}");
    }
}
