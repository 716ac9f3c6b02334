package dev.llmsidecar.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.timeout.TimeoutException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;

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
    /** Memory past its mark: new requests are shed so that open streams live (retry in a moment, or elsewhere). */
    OVERLOADED(503, "overloaded", "sidecar memory is past its mark, retry shortly", "unavailable"),
    /** Graceful shutdown: the client or balancer retries elsewhere. */
    SHUTTING_DOWN(503, "shutting_down", "shutting down", "unavailable"),
    /** The request body is larger than sidecar.proxy.max-request-body-bytes. */
    BODY_TOO_LARGE(413, "request_body_too_large", "request body too large", "invalid_request_error"),
    /** The request body paused longer than sidecar.limits.request-body-timeout. */
    REQUEST_BODY_TIMEOUT(408, "request_body_timeout", "request body timed out", "invalid_request_error"),
    /** The request line is longer than the server reads. */
    URI_TOO_LONG(414, "request_line_too_long", "request line too long", "invalid_request_error"),
    /** The request head is larger than the server reads. */
    HEADERS_TOO_LARGE(431, "request_headers_too_large", "request header fields too large", "invalid_request_error"),
    /** The request could not be read as HTTP. */
    BAD_REQUEST(400, "bad_request", "malformed request", "invalid_request_error");

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
        if (cause instanceof java.util.concurrent.TimeoutException || cause instanceof TimeoutException
                || cause instanceof io.netty.channel.ConnectTimeoutException) {
            return UPSTREAM_TIMEOUT;
        }
        if (cause instanceof ConnectException || cause instanceof UnknownHostException
                || cause instanceof NoRouteToHostException) {
            return UPSTREAM_UNREACHABLE;
        }
        return UPSTREAM_CLOSED;
    }

    /**
     * This error as a whole response; {@code detail} (may be null) is appended to the message.
     *
     * @param close the connection closes after it (HTTP/1.x)
     */
    FullHttpResponse response(HttpVersion version, String detail, boolean close) {
        String text = detail == null ? message : message + ": " + detail;
        ByteBuf body = Unpooled.copiedBuffer("{\"error\":{\"message\":\"llm-sidecar: " + text + "\",\"type\":\""
                + type + "\",\"code\":" + status + "}}", StandardCharsets.UTF_8);
        FullHttpResponse response = new DefaultFullHttpResponse(version, HttpResponseStatus.valueOf(status), body);
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .set("x-llm-sidecar-error", header)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        if (close) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        return response;
    }
}
