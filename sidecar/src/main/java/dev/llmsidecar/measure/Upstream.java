package dev.llmsidecar.measure;

/**
 * The upstream the GenAI series name: server.address and server.port, OTLP-only attributes, the same for a whole
 * sidecar.
 *
 * @param address the host, or null to leave both attributes out
 */
public record Upstream(String address, long port) {

    public static final Upstream NONE = new Upstream(null, 0);

    /** server.port, or null (left out) without an address. */
    Object portValue() {
        return address == null ? null : port;
    }
}
