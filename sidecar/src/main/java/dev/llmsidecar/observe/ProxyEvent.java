package dev.llmsidecar.observe;

/**
 * What the proxy did to keep traffic flowing and bytes exact, counted through one method,
 * {@link TrafficObserver#count}. Each event names the series it counts into (the contract's name) and, where the
 * series has one, its label and the value this event gives it; the metrics side binds every event once and exports
 * it at 0 from the start, so a dashboard shows 0 where nothing happened yet. A new proxy counter is one constant here
 * (and its series in the contract and docs/metrics.md, when the series is new).
 */
public enum ProxyEvent {
    /** An LLM request body forwarded without reading it for its model: not a JSON object. */
    BODY_NOT_INSPECTED_NOT_JSON("llm_sidecar.body_inspection_skipped", "reason", "not_json"),
    /** An LLM request body forwarded without reading it for its model: over sidecar.llm.max-inspected-body-bytes. */
    BODY_NOT_INSPECTED_TOO_LARGE("llm_sidecar.body_inspection_skipped", "reason", "too_large"),
    /** An LLM request body forwarded without reading it: the inspect budget (sidecar.limits.inspect-budget) was spent. */
    BODY_NOT_INSPECTED_BUDGET("llm_sidecar.body_inspection_skipped", "reason", "budget"),

    /** The sidecar turned stream_options.include_usage on for a request. */
    USAGE_INJECTED("llm_sidecar.usage_injected"),
    USAGE_SKIPPED_CLIENT_DECLINED("llm_sidecar.usage_injection_skipped", "reason", "client_declined"),
    USAGE_SKIPPED_STREAM_OPTIONS("llm_sidecar.usage_injection_skipped", "reason", "stream_options"),
    USAGE_SKIPPED_HTTP10_CLIENT("llm_sidecar.usage_injection_skipped", "reason", "http10_client"),
    USAGE_SKIPPED_LEARNING("llm_sidecar.usage_injection_skipped", "reason", "learning"),
    USAGE_SKIPPED_ENGINE_REPORTS_USAGE("llm_sidecar.usage_injection_skipped", "reason", "engine_reports_usage"),
    USAGE_SKIPPED_LAYOUT("llm_sidecar.usage_injection_skipped", "reason", "layout"),
    USAGE_SKIPPED_CONTENT_LENGTH("llm_sidecar.usage_injection_skipped", "reason", "content_length"),
    USAGE_SKIPPED_COMPRESSION("llm_sidecar.usage_injection_skipped", "reason", "compression"),
    USAGE_SKIPPED_ENGINE_REJECTS("llm_sidecar.usage_injection_skipped", "reason", "engine_rejects"),
    USAGE_NOT_REMOVED_LAYOUT("llm_sidecar.usage_not_removed", "reason", "layout"),
    USAGE_NOT_REMOVED_MEMBER("llm_sidecar.usage_not_removed", "reason", "member"),
    /** Usage-only chunks cut from an injected stream (counted by the number cut). */
    USAGE_CHUNKS_REMOVED("llm_sidecar.usage_chunks_stripped"),
    /** Usage members cut from chunks that stayed (counted by the number cut). */
    USAGE_MEMBERS_REMOVED("llm_sidecar.usage_members_removed"),
    /** A Content-Length stream whose body a rewrite edited (include_usage) went to the client chunked. */
    RESPONSE_REFRAMED("llm_sidecar.usage_reframed"),

    /** Sent once more on a new connection: the reused one closed before a single response byte. */
    RETRY_CLOSED_BEFORE_RESPONSE("llm_sidecar.upstream_retries", "reason", "closed_before_response"),
    /** The client's own request sent in place of the edited one: the answer came compressed. */
    RETRY_COMPRESSED_AFTER_INJECTION("llm_sidecar.upstream_retries", "reason", "compressed_after_injection"),
    /** The client's own request sent in place of the edited one: the engine refused it (400, 422). */
    RETRY_INJECTION_REJECTED("llm_sidecar.upstream_retries", "reason", "injection_rejected"),
    /** A pooled upstream connection closed once idle for the keep-alive timeout. */
    IDLE_CONNECTION_RETIRED("llm_sidecar.upstream_idle_connections_retired"),
    /** 413 before a byte was read: the declared Content-Length is over the cap. */
    BODY_TOO_LARGE_DECLARED("llm_sidecar.request_body_too_large", "when", "declared"),
    /** 413 while streaming: the body grew past the cap. */
    BODY_TOO_LARGE_STREAMED("llm_sidecar.request_body_too_large", "when", "streamed"),
    /** A client connection failed outside an exchange's own handling (reset, broken pipe). */
    CONNECTION_ERROR_CLIENT("llm_sidecar.connection_errors", "peer", "client"),
    /** An upstream connection failed outside an exchange's own handling. */
    CONNECTION_ERROR_UPSTREAM("llm_sidecar.connection_errors", "peer", "upstream"),
    /** A successful LLM response forwarded without decoding: a content coding the sidecar does not read. */
    NOT_DECODED_CONTENT_ENCODING("llm_sidecar.responses_not_decoded", "reason", "content_encoding"),

    /** A response body not relayed raw: sidecar.proxy.raw-relay is off. */
    RELAY_FALLBACK_DISABLED("llm_sidecar.relay_fallbacks", "reason", "disabled"),
    /** A response body not relayed raw: the client is an HTTP/2 stream. */
    RELAY_FALLBACK_HTTP2_CLIENT("llm_sidecar.relay_fallbacks", "reason", "http2_client"),
    /** A response body not relayed raw: the client speaks HTTP/1.0 (no chunked framing). */
    RELAY_FALLBACK_HTTP10_CLIENT("llm_sidecar.relay_fallbacks", "reason", "http10_client"),
    /** A response body not relayed raw: the engine framed it with Content-Length or the connection's close. */
    RELAY_FALLBACK_NOT_CHUNKED("llm_sidecar.relay_fallbacks", "reason", "not_chunked"),
    /** A response body not relayed raw: a rewrite re-frames it from its head (include_usage on a length stream). */
    RELAY_FALLBACK_REFRAMED("llm_sidecar.relay_fallbacks", "reason", "reframed"),
    /** A body relayed raw whose rest went with the sidecar's own framing after a rewrite cut (include_usage). */
    RELAY_REFRAMED("llm_sidecar.relay_reframes"),
    /** A request refused with 503 because the sidecar's memory was past its mark (any path). */
    REQUEST_SHED("llm_sidecar.requests_shed"),
    /** A request head not complete within sidecar.limits.request-head-timeout: the connection closed. */
    CLIENT_TIMEOUT_REQUEST_HEAD("llm_sidecar.client_timeouts", "when", "request_head"),
    /** A request body paused past sidecar.limits.request-body-timeout: 408 (or the response cut). */
    CLIENT_TIMEOUT_REQUEST_BODY("llm_sidecar.client_timeouts", "when", "request_body"),
    /** A client that read nothing past sidecar.limits.send-timeout: its stream cut, the engine's released. */
    CLIENT_TIMEOUT_SEND("llm_sidecar.client_timeouts", "when", "response"),
    /** A body relayed raw cut for a framing anomaly, or bytes after its end: both connections closed. */
    RELAY_FRAMING_ANOMALY("llm_sidecar.upstream_framing_anomalies");

    /** The series counted into (the contract's name). */
    public final String series;
    /** Its label, or null for a series without one. */
    public final String label;
    /** The label's value for this event, or null. */
    public final String value;

    ProxyEvent(String series) {
        this(series, null, null);
    }

    ProxyEvent(String series, String label, String value) {
        this.series = series;
        this.label = label;
        this.value = value;
    }
}
