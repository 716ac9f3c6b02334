package dev.llmsidecar.slo;

import dev.llmsidecar.config.SidecarConfig;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * Whose declared SLO targets count (sidecar.slo.declared.trust-*): a declaration judges its request only when the
 * request carries {@link #header()} with the token a trusted caller holds (the gateway sets it, the sidecar removes it
 * before the request goes upstream), or when every caller is trusted ({@code trust-all}, the behaviour before
 * 2026-11-29). Any other declaration is refused and counted ({@code handling="refused"}): a client with no credentials
 * cannot fill an objective with violations of targets it made up.
 */
public final class DeclaredTrust {

    private final boolean trustAll;
    private final String header;
    private final Predicate<String> token;

    /** @param token whether a header value is the trusted callers' token (constant time; false when none is set) */
    public DeclaredTrust(boolean trustAll, String header, Predicate<String> token) {
        this.trustAll = trustAll;
        this.header = header;
        this.token = token;
    }

    public static DeclaredTrust of(SidecarConfig.Slo.Declared config, Predicate<String> token) {
        return new DeclaredTrust(config.trustAll(), config.trustHeader(), token);
    }

    /** The header a trusted caller sets; never forwarded upstream. */
    public String header() {
        return header;
    }

    public boolean trustAll() {
        return trustAll;
    }

    /** Whether the request's caller may declare targets. */
    public boolean trusted(UnaryOperator<String> headers) {
        if (trustAll) {
            return true;
        }
        String value = headers.apply(header);
        return value != null && token.test(value);
    }
}
