package dev.llmsidecar.observe;

/**
 * What the proxy did to keep traffic flowing and bytes exact, counted through one method,
 * {@link TrafficObserver#count}. The metrics side binds every event once to its series (and label value, where the
 * series has a label), in an exhaustive switch (measure/EventSeries), and exports it at 0 from the start, so a
 * dashboard shows 0 where nothing happened yet. A new proxy counter is one constant here and its case there (and its
 * series in the contract and docs/metrics.md, when the series is new); without its case the sidecar does not compile.
 * What a feature counts is its own enum ({@link TrafficEvent}).
 */
public enum ProxyEvent implements TrafficEvent {
    /** An LLM request body forwarded without reading it for its model: not a JSON object. */
    BODY_NOT_INSPECTED_NOT_JSON,
    /** An LLM request body forwarded without reading it for its model: over sidecar.llm.max-inspected-body-bytes. */
    BODY_NOT_INSPECTED_TOO_LARGE,
    /** An LLM request body forwarded without reading it: the inspect budget (sidecar.limits.inspect-budget) was spent. */
    BODY_NOT_INSPECTED_BUDGET,

    /** A Content-Length stream whose body a rewrite edited (include_usage's) went to the client chunked. */
    RESPONSE_REFRAMED,

    /** Sent once more on a new connection: the reused one closed before a single response byte. */
    RETRY_CLOSED_BEFORE_RESPONSE,
    /** A pooled upstream connection closed once idle for the keep-alive timeout. */
    IDLE_CONNECTION_RETIRED,
    /** 413 before a byte was read: the declared Content-Length is over the cap. */
    BODY_TOO_LARGE_DECLARED,
    /** 413 while streaming: the body grew past the cap. */
    BODY_TOO_LARGE_STREAMED,
    /** A client connection failed outside an exchange's own handling (reset, broken pipe). */
    CONNECTION_ERROR_CLIENT,
    /** An upstream connection failed outside an exchange's own handling. */
    CONNECTION_ERROR_UPSTREAM,
    /** A successful LLM response forwarded without decoding: a content coding the sidecar does not read. */
    NOT_DECODED_CONTENT_ENCODING,

    /** A response body not relayed raw: sidecar.proxy.raw-relay is off. */
    RELAY_FALLBACK_DISABLED,
    /** A response body not relayed raw: the client is an HTTP/2 stream. */
    RELAY_FALLBACK_HTTP2_CLIENT,
    /** A response body not relayed raw: the client speaks HTTP/1.0 (no chunked framing). */
    RELAY_FALLBACK_HTTP10_CLIENT,
    /** A response body not relayed raw: the engine framed it with Content-Length or the connection's close. */
    RELAY_FALLBACK_NOT_CHUNKED,
    /** A response body not relayed raw: a rewrite re-frames it from its head (include_usage on a length stream). */
    RELAY_FALLBACK_REFRAMED,
    /** A body relayed raw whose rest went with the sidecar's own framing after a rewrite cut (include_usage). */
    RELAY_REFRAMED,
    /** A request refused with 503 because the sidecar's memory was past its mark (any path). */
    REQUEST_SHED,
    /** A request head not complete within sidecar.limits.request-head-timeout: the connection closed. */
    CLIENT_TIMEOUT_REQUEST_HEAD,
    /** A request body paused past sidecar.limits.request-body-timeout: 408 (or the response cut). */
    CLIENT_TIMEOUT_REQUEST_BODY,
    /** A client that read nothing past sidecar.limits.send-timeout: its stream cut, the engine's released. */
    CLIENT_TIMEOUT_SEND,
    /** A body relayed raw cut for a framing anomaly, or bytes after its end: both connections closed. */
    RELAY_FRAMING_ANOMALY
}
