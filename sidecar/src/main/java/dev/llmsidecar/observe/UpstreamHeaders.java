package dev.llmsidecar.observe;

/** Headers of the request the sidecar sends upstream, as far as an observer may set them (trace context). */
public interface UpstreamHeaders {

    /** Sets {@code name} to {@code value}, replacing what the client sent. */
    void set(String name, String value);

    void remove(String name);
}
