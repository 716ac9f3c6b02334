package dev.llmsidecar.observe;

/**
 * The head of a client request as the data path received it: what an observer may read to label and trace the
 * request (a header for the tenant or the SLO class, the trace context). Valid only during the call it is passed to.
 */
public interface RequestHead {

    String method();

    String path();

    /** The first value of a header (names are case-insensitive), or null. */
    String header(String name);

    /** Every header name, for trace-context extraction. */
    Iterable<String> headerNames();
}
