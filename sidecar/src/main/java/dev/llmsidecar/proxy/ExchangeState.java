package dev.llmsidecar.proxy;

import java.util.EnumSet;
import java.util.Set;

/**
 * The life of one exchange, one state at a time ({@code Exchange.state}). A move the table below does not allow is a
 * bug in the transport, refused where it is made ({@link #to}); {@code ExchangeStateTest} walks the table. A failure
 * says whether the engine's response head had gone to the client, since that decides what the client can still get:
 * the sidecar's own error before it, a cut response after it.
 *
 * <pre>
 *  REQUEST_HEAD ─▶ REQUEST_BODY ─▶ SENT ─▶ RESPONSE_HEAD ─▶ STREAMING ─▶ ENDED ───────────────▶ CLOSED
 *       │               │          │ │ ▲         │              │                                 ▲
 *       │               │          │ └─┘ retry,  │              │                                 │
 *       │               │          │     resend  └──────────────┴──▶ FAILED_AFTER_HEAD ───────────┤
 *       └───────────────┴──────────┴───────────────────────────────▶ FAILED_BEFORE_HEAD ──────────┘
 * </pre>
 */
enum ExchangeState {
    /** Made from the client's request head; nothing read or sent yet. */
    REQUEST_HEAD,
    /** An LLM request body is read whole (up to the inspection limit) before the request goes upstream. */
    REQUEST_BODY,
    /**
     * The request is on its way: a connection is being taken, or the request was written (a piped body may still
     * flow). Sent again from here, at most once: the keep-alive race, or a rewrite's resend.
     */
    SENT,
    /**
     * The engine's response head was taken for the client: it is framed and written; no body byte yet. From here
     * nothing is sent again, and a failure can only cut the client's response.
     */
    RESPONSE_HEAD,
    /** The response body flows to the client. */
    STREAMING,
    /** The upstream response ended whole; the observer was told. The client's side is finishing its writes. */
    ENDED,
    /**
     * Ended any other way before the engine's response head went to the client (upstream failed or timed out, body
     * too large or timed out, client gone); the observer was told. The client gets the sidecar's own error, or
     * nothing if it is gone.
     */
    FAILED_BEFORE_HEAD,
    /**
     * Ended any other way once the engine's response head had gone to the client (upstream broke or went quiet, a
     * framing anomaly, client gone or not reading); the observer was told. The client's response is cut: it gets the
     * truncation, or nothing if it is gone.
     */
    FAILED_AFTER_HEAD,
    /** Out of flight: the client's side is done with it. */
    CLOSED;

    private Set<ExchangeState> next;

    static {
        REQUEST_HEAD.next = EnumSet.of(REQUEST_BODY, SENT, FAILED_BEFORE_HEAD);
        REQUEST_BODY.next = EnumSet.of(SENT, FAILED_BEFORE_HEAD);
        SENT.next = EnumSet.of(SENT, RESPONSE_HEAD, FAILED_BEFORE_HEAD);
        RESPONSE_HEAD.next = EnumSet.of(STREAMING, ENDED, FAILED_AFTER_HEAD);
        STREAMING.next = EnumSet.of(STREAMING, ENDED, FAILED_AFTER_HEAD);
        ENDED.next = EnumSet.of(CLOSED);
        FAILED_BEFORE_HEAD.next = EnumSet.of(CLOSED);
        FAILED_AFTER_HEAD.next = EnumSet.of(CLOSED);
        CLOSED.next = EnumSet.noneOf(ExchangeState.class);
    }

    /** Whether the table allows the move from this state to {@code target}. */
    boolean allows(ExchangeState target) {
        return next.contains(target);
    }

    /** {@code target}, if the table allows the move; a bug otherwise. */
    ExchangeState to(ExchangeState target) {
        if (!allows(target)) {
            throw new IllegalStateException("exchange cannot go from " + this + " to " + target);
        }
        return target;
    }

    /** Where a failure from this state goes: after the head once the response head went to the client. */
    ExchangeState failed() {
        return responding() ? FAILED_AFTER_HEAD : FAILED_BEFORE_HEAD;
    }

    /** The observer has been told how it ended: nothing more is measured or forwarded. */
    boolean over() {
        return this == ENDED || this == FAILED_BEFORE_HEAD || this == FAILED_AFTER_HEAD || this == CLOSED;
    }

    /** The request went upstream, or is on its way: the upstream's silence counts. */
    boolean requestSent() {
        return this == SENT || responding();
    }

    /** A response head arrived: from now on nothing is sent again and a failure cuts the response. */
    boolean responding() {
        return this == RESPONSE_HEAD || this == STREAMING;
    }
}
