package dev.llmsidecar.measure;

import static dev.llmsidecar.metrics.Label.PEER;
import static dev.llmsidecar.metrics.Label.REASON;
import static dev.llmsidecar.metrics.Label.WHEN;

import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Series;
import dev.llmsidecar.observe.ProxyEvent;

/**
 * Where one {@link dev.llmsidecar.observe.TrafficEvent} is counted: a counter of the contract and, where it has a
 * label, this event's value of it. The proxy's own events are bound here ({@link #of(ProxyEvent)}); a feature's by a
 * switch of the same kind where the app registers it ({@link ProxyCounters#register}). Each switch has no default
 * branch, so an event without its series does not compile; a label the series does not have fails at start.
 *
 * @param series a counter of {@link Contract}
 * @param values its label values (none, or the one label of a series with a reason, a peer or a when)
 */
public record EventSeries(Series series, LabelValues values) {

    public EventSeries {
        if (series.kind() != Series.Kind.COUNTER) {
            throw new IllegalArgumentException("an event counts into a counter, not " + series);
        }
    }

    /** A counter without labels. */
    public static EventSeries of(Series counter) {
        return new EventSeries(counter, LabelValues.NONE);
    }

    /** A counter with one label, {@code label} = {@code value} for this event. */
    public static EventSeries of(Series counter, Label label, String value) {
        return new EventSeries(counter, LabelValues.of(label, value));
    }

    /** The series of each of the proxy's events (docs/metrics.md is the contract). */
    static EventSeries of(ProxyEvent event) {
        return switch (event) {
            case BODY_NOT_INSPECTED_NOT_JSON -> of(Contract.BODY_NOT_INSPECTED, REASON, "not_json");
            case BODY_NOT_INSPECTED_TOO_LARGE -> of(Contract.BODY_NOT_INSPECTED, REASON, "too_large");
            case BODY_NOT_INSPECTED_BUDGET -> of(Contract.BODY_NOT_INSPECTED, REASON, "budget");
            case RESPONSE_REFRAMED -> of(Contract.USAGE_REFRAMED);
            case RETRY_CLOSED_BEFORE_RESPONSE -> of(Contract.UPSTREAM_RETRIES, REASON, "closed_before_response");
            case IDLE_CONNECTION_RETIRED -> of(Contract.IDLE_CONNECTIONS_RETIRED);
            case BODY_TOO_LARGE_DECLARED -> of(Contract.BODY_TOO_LARGE, WHEN, "declared");
            case BODY_TOO_LARGE_STREAMED -> of(Contract.BODY_TOO_LARGE, WHEN, "streamed");
            case CONNECTION_ERROR_CLIENT -> of(Contract.CONNECTION_ERRORS, PEER, "client");
            case CONNECTION_ERROR_UPSTREAM -> of(Contract.CONNECTION_ERRORS, PEER, "upstream");
            case NOT_DECODED_CONTENT_ENCODING -> of(Contract.NOT_DECODED, REASON, "content_encoding");
            case RELAY_FALLBACK_DISABLED -> of(Contract.RELAY_FALLBACKS, REASON, "disabled");
            case RELAY_FALLBACK_HTTP2_CLIENT -> of(Contract.RELAY_FALLBACKS, REASON, "http2_client");
            case RELAY_FALLBACK_HTTP10_CLIENT -> of(Contract.RELAY_FALLBACKS, REASON, "http10_client");
            case RELAY_FALLBACK_NOT_CHUNKED -> of(Contract.RELAY_FALLBACKS, REASON, "not_chunked");
            case RELAY_FALLBACK_REFRAMED -> of(Contract.RELAY_FALLBACKS, REASON, "reframed");
            case RELAY_REFRAMED -> of(Contract.RELAY_REFRAMES);
            case REQUEST_SHED -> of(Contract.REQUESTS_SHED);
            case CLIENT_TIMEOUT_REQUEST_HEAD -> of(Contract.CLIENT_TIMEOUTS, WHEN, "request_head");
            case CLIENT_TIMEOUT_REQUEST_BODY -> of(Contract.CLIENT_TIMEOUTS, WHEN, "request_body");
            case CLIENT_TIMEOUT_SEND -> of(Contract.CLIENT_TIMEOUTS, WHEN, "response");
            case RELAY_FRAMING_ANOMALY -> of(Contract.FRAMING_ANOMALIES);
        };
    }
}
