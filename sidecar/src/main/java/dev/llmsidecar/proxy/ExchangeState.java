package dev.llmsidecar.proxy;

import java.util.EnumSet;
import java.util.Set;

/**
 * The life of one exchange, one state at a time ({@link Exchange#state}). A move the table below does not allow is a
 * bug in the transport, refused where it is made ({@link #to}); {@code ExchangeStateTest} walks the table.
 *
 * <pre>
 *   REQUEST_HEAD ─▶ REQUEST_BODY ─▶ SENT ─▶ RESPONSE_HEAD ─▶ STREAMING ─▶ ENDED ─▶ CLOSED
 *        │               │           │ ▲          │              │                    ▲
 *        │               │           └─┘ retry,   │              │                    │
 *        │               │             resend     │              │                    │
 *        └───────────────┴───────────┴────────────┴──────────────┴──▶ FAILED ─────────┘
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
    /** The engine's response head arrived and went to the client; no body byte yet. */
    RESPONSE_HEAD,
    /** The response body flows to the client. */
    STREAMING,
    /** The upstream response ended whole; the observer was told. The client's side is finishing its writes. */
    ENDED,
    /**
     * Ended any other way (upstream failed, timed out, body too large, client gone); the observer was told. The client
     * gets the sidecar's error, the truncation, or nothing.
     */
    FAILED,
    /** Out of flight: the client's side is done with it. */
    CLOSED;

    private Set<ExchangeState> next;

    static {
        REQUEST_HEAD.next = EnumSet.of(REQUEST_BODY, SENT, FAILED);
        REQUEST_BODY.next = EnumSet.of(SENT, FAILED);
        SENT.next = EnumSet.of(SENT, RESPONSE_HEAD, FAILED);
        RESPONSE_HEAD.next = EnumSet.of(STREAMING, ENDED, FAILED);
        STREAMING.next = EnumSet.of(STREAMING, ENDED, FAILED);
        ENDED.next = EnumSet.of(CLOSED);
        FAILED.next = EnumSet.of(CLOSED);
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

    /** The observer has been told how it ended: nothing more is measured or forwarded. */
    boolean over() {
        return this == ENDED || this == FAILED || this == CLOSED;
    }

    /** A response head arrived: from now on nothing is sent again and a failure cuts the response. */
    boolean responding() {
        return this == RESPONSE_HEAD || this == STREAMING;
    }
}
